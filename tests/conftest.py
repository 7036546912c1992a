"""Shared fixtures: the project's own fixtures folder, the real data dir when present, and the
``recallbench`` console entry point run in-process (``run_cli``: tests/cli and tests/run)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")
# Tests that run a config twice compare two runs (workers=1 vs 3, a resume, a cache): every
# job runs. tests/cli/test_reuse.py unsets this to test the reuse of finished runs (issue 38).
os.environ["RECALLBENCH_RERUN"] = "1"


def _real_data_dir() -> Path | None:
    env = os.environ.get("RECALLBENCH_DATA_DIR")
    for candidate in (env, ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"):
        if candidate and Path(candidate).is_dir() and (Path(candidate) / "README.md").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Root of the self-written fixtures, laid out like a data dir."""
    return FIXTURES


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real data root (../shared/data or $RECALLBENCH_DATA_DIR); skips when absent."""
    found = _real_data_dir()
    if found is None:
        pytest.skip(
            "real data not found: set RECALLBENCH_DATA_DIR or put shared/data beside the repo"
        )
    return found


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run every test with one torch thread, restored afterwards.

    Test forward passes are tiny; on a busy 2-core machine a second OpenMP thread spins instead
    of working (measured: embed+metrics tests took 80 s with 2 threads, 27 s with 1, same load).
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _declared_tasks() -> list:
    """Every PromptTask that declares a reply shape; builders that take a run's state (the
    ontology's terms, the number of candidates) get what a run starts from."""
    from recallbench.embed import HashingEmbedder
    from recallbench.judges import entailment, geval, llm, longmemeval, nli
    from recallbench.judges._caim_llm import _TEMPLATES, rubric_task
    from recallbench.llm import LLM, ExtractiveBackend
    from recallbench.memory import tim
    from recallbench.memory.blocks import bae_update
    from recallbench.memory.caim import Ontology, _controller, _post, _tasks
    from recallbench.memory.comedy import Comedy
    from recallbench.memory.lufy._estimators import IMPORTANCE_TASK
    from recallbench.memory.memochat import MemoChat
    from recallbench.memory.rsum_llm import RSumLLM
    from recallbench.memory.theanine._linking import DEFAULT_THRESHOLDS, linking_task
    from recallbench.memory.theanine._refinement import refinement_task
    from recallbench.memory.timerag._extractor import EXTRACT_TASK
    from recallbench.protocols import teafarm as teafarm_tasks

    emb, offline = HashingEmbedder(), LLM(ExtractiveBackend())
    known = frozenset(Ontology.load().terms())
    comedy, memochat = Comedy(offline, emb), MemoChat(offline, emb)
    tasks = [
        linking_task(emb, DEFAULT_THRESHOLDS),
        refinement_task(emb, 5),
        IMPORTANCE_TASK,
        llm.QA_JUDGE_TASK,
        llm.RATING_TASK,
        nli.NLI_TASK,
        entailment.ENTAILMENT_TASK,
        geval.GEVAL_TASK,
        *(longmemeval.make_task(b) for b in longmemeval.TEMPLATES),
        *(rubric_task(m) for m in _TEMPLATES),
        bae_update.operation_task(emb),
        _controller.INFORMATION_NECESSARY_TASK,
        _tasks.ONTOLOGY_EXPANSION_TASK,
        _tasks.select_tags_task(known),
        _tasks.DATES_TASK,
        _tasks.relevance_task(("a", "b")),
        _post.KEY_EVENTS_TASK,
        _post.thought_task(known),
        _post.review_task(3),
        tim.ORGANIZE_TASK,
        memochat.write_task,
        memochat.select_task,
        comedy.session_task,
        comedy.compress_task,
        comedy.select_task,
        RSumLLM(offline, emb).update_task,
        EXTRACT_TASK,
        teafarm_tasks.QUESTION_TASK,
        teafarm_tasks.SESSION6_TASK,
        teafarm_tasks.JUDGE_TASK,
    ]
    return [t for t in tasks if t.reply is not None]


@pytest.fixture(scope="session")
def declared_tasks() -> list:
    """Every PromptTask with a declared reply shape (``_declared_tasks``)."""
    return _declared_tasks()


# The numeric tests: float results of real models and libraries whose last bits depend on the
# CPU's kernels (LM scoring, perplexity, embeddings, BERTScore/MAUVE, the golden subset). Their
# bounds follow from the arithmetic (issue 33); `make test-numeric` runs them alone, and
# `.ci/run` runs them once more under AVX2 dispatch (ATEN_CPU_CAPABILITY=avx2,
# MKL_ENABLE_INSTRUCTIONS=AVX2, FAISS_OPT_LEVEL=avx2), which reproduces a CPU without AVX-512.
NUMERIC = (
    "tests/llm/test_causal_scoring.py",
    "tests/llm/test_llm_hf.py",
    "tests/llm/test_score_cache.py",
    "tests/embed/",
    "tests/metrics/test_model_metrics.py",
    "tests/metrics/test_mauve.py",
    "tests/metrics/test_mauve_quiet.py",
    "tests/metrics/test_conditioned_ppl.py",
    "tests/metrics/test_metrics_contract.py",
    "tests/test_lm_scores_e2e.py",
    "tests/memory/test_lufy_arousal.py",
    "tests/memory/test_lufy_calibration.py",
    "tests/memory/test_lufy_real_models.py",
    "tests/golden/test_golden.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`NUMERIC` ``numeric``."""
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
        if any(where == p or (p.endswith("/") and where.startswith(p)) for p in NUMERIC):
            item.add_marker(pytest.mark.numeric)


@pytest.fixture
def redis_server(tmp_path):
    """A real redis-server (AOF on) on a free port, data in tmp_path; skips without the binary
    unless RECALLBENCH_REQUIRE_REDIS=1 (CI installs it: .ci/run)."""
    from recallbench.testing.redis_server import RedisMissing, RedisServer

    try:
        server = RedisServer(tmp_path / "redis")
    except RedisMissing as exc:
        if os.environ.get("RECALLBENCH_REQUIRE_REDIS") == "1":
            pytest.fail(f"RECALLBENCH_REQUIRE_REDIS=1 but {exc}")
        pytest.skip(str(exc))
    with server:
        yield server


# -- the console entry point, in-process: what a user would see ---------------------------------

# In-process, Hydra must leave logging alone: its dictConfig would close handlers that other
# test modules' imports (absl via rouge-score) bound to pytest's captured stderr.
PER_PROCESS_ENV = ("RECALLBENCH_STAMP", "RECALLBENCH_VERBOSE")
LOGGING = ("hydra/job_logging=none", "hydra/hydra_logging=none")


@dataclass
class Outcome:
    status: int | str | None
    err: str
    out: str

    @property
    def error_lines(self) -> list[str]:
        """stderr lines the CLI itself printed (library INFO logs and progress bars dropped)."""
        return [line for line in self.err.splitlines() if line.startswith("recallbench")]


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A private copy of the fixture data root, safe to damage."""
    dest = tmp_path / "data"
    shutil.copytree(FIXTURES, dest)
    return dest


@pytest.fixture
def run_cli(monkeypatch, capsys, tmp_path):
    """Call ``recallbench <argv>`` in this process; return its exit status and output."""
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.delenv("RECALLBENCH_VERBOSE", raising=False)

    from recallbench import cli  # the console entry point: imported by the tests that call it

    def call(*argv: str, results: Path | None = None) -> Outcome:
        results = results or tmp_path / "results"
        flags = [a for a in argv if a.startswith("-")]  # Hydra wants -m before the overrides
        rest = [a for a in argv if not a.startswith("-")]
        args = ["recallbench", *flags, f"paths.results_dir={results}", "progress=false"]
        args += [*LOGGING, *rest]
        monkeypatch.setattr(sys, "argv", args)
        capsys.readouterr()
        status = 0
        # one call = one process: what main() puts in the environment ends with the call
        saved = {k: os.environ.get(k) for k in PER_PROCESS_ENV}
        try:
            cli.main()
        except SystemExit as exc:
            status = exc.code
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        captured = capsys.readouterr()
        return Outcome(status, captured.err, captured.out)

    return call


# -- `make test` writes nothing outside its temp folders (issue 53) -----------------------------


def _checkout_status() -> set[str] | None:
    """The files of the checkout that git neither tracks nor ignores (``git status
    --porcelain``'s ``??`` lines; None: not a git checkout, or git is missing)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return {line[3:] for line in done.stdout.splitlines() if line.startswith("?? ")}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, not an xdist worker
        session.config.stash[_STATUS] = _checkout_status()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session when the tests left a file in the checkout that git neither tracks nor
    ignores (a cache path that was None once became a SQLite file ``None`` at the root): tests
    write under their temp folders only. (A file someone created meanwhile counts too.)"""
    if hasattr(session.config, "workerinput"):
        return
    before = session.config.stash.get(_STATUS, None)
    after = _checkout_status()
    if before is None or after is None or not (left := sorted(after - before)):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = (
        f"the tests left {len(left)} file(s) in the checkout {ROOT} that git neither tracks "
        "nor ignores: " + "; ".join(left[:10])
    )
    if reporter is not None:
        reporter.write_line(f"ERROR: {message}", red=True)
    else:
        print(f"ERROR: {message}", file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_STATUS = pytest.StashKey[set[str] | None]()
