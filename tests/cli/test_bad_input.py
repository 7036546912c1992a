"""Bad input gets ONE line, exit status 2, no traceback, and never a ``finished`` run (issue 15).

One case per row: the CLI's own keys, every loader family, the caches, the resume folder and
the endpoint. Each row damages a private copy of the fixtures (or names a bad value) and runs
``recallbench`` in-process; ``test_subprocess_*`` checks two rows end to end in a real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from recallbench.testing.stub import Fault, StubServer

MSC = ("dataset=msc", "memory=no_memory", "generator=extractive", "episodes=1")


def _truncate_first_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0][: len(lines[0]) // 2] + "\n" + "".join(lines[1:]), encoding="utf-8")


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _garbage(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not what the file should hold " * 8)


# (id, damage(data_root, tmp_path) -> extra args, substrings the one line must contain)
Case = tuple[str, Callable[[Path, Path], list[str]], tuple[str, ...]]
CASES: list[Case] = [
    # --- the CLI's own keys (checked before any work)
    ("episodes-negative", lambda d, t: [*MSC, "episodes=-3"], ("episodes=-3", ">= 1")),
    ("episodes-zero", lambda d, t: [*MSC, "episodes=0"], ("episodes=0",)),
    ("episodes-not-int", lambda d, t: [*MSC, "episodes=abc"], ("episodes='abc'", "integer")),
    ("seed-not-int", lambda d, t: [*MSC, "seed=abc"], ("seed='abc'", "integer")),
    ("progress-not-bool", lambda d, t: [*MSC, "progress=maybe"], ("progress='maybe'",)),
    ("tag-with-slash", lambda d, t: [*MSC, "tag=a/b"], ("tag='a/b'",)),
    ("generator-unknown-key", lambda d, t: [*MSC, "+generator.temprature=0"], ("temprature",)),
    # --- the data root and every loader family
    ("data-dir-missing", lambda d, t: [*MSC, f"dataset.data_dir={t / 'nope'}"], ("not found",)),
    (
        "msc-empty-session-file",
        lambda d, t: _write(d / "msc/msc/msc_dialogue/session_3/test.txt", "") or list(MSC),
        ("session_3/test.txt", "empty"),
    ),
    (
        "msc-truncated-line",
        lambda d, t: (
            _truncate_first_line(d / "msc/msc/msc_dialogue/session_2/test.txt") or list(MSC)
        ),
        ("session_2/test.txt line 1", "JSON"),
    ),
    (
        "msc-flat-not-a-list",
        lambda d, t: (
            _write(d / "flat.json", '{"dataID": 1}') or [*MSC, "+dataset.options.path=flat.json"]
        ),
        ("flat.json", "list"),
    ),
    (
        "cc-truncated-line",
        lambda d, t: (
            _truncate_first_line(d / "conversation_chronicles/test.jsonl")
            or ["dataset=cc", "memory=no_memory", "episodes=1"]
        ),
        ("test.jsonl line 1",),
    ),
    (
        "carecall-not-json",
        lambda d, t: (
            _garbage(d / "carecall_mem/data/carecall-memory-sample.json")
            or ["dataset=carecall", "memory=no_memory", "protocol=response_carecall"]
        ),
        ("carecall-memory-sample.json",),
    ),
    (
        "gvd-bank-not-json",
        lambda d, t: (
            _garbage(d / "gvd/eval_data/en/memory_bank_en.json")
            or ["dataset=gvd", "memory=no_memory", "protocol=qa_gvd"]
        ),
        ("memory_bank_en.json",),
    ),
    (
        "gvd-questions-missing",
        lambda d, t: (
            (d / "gvd/eval_data/en/probing_questions_en.jsonl").unlink()
            or ["dataset=gvd", "memory=no_memory", "protocol=qa_gvd"]
        ),
        ("probing_questions_en.jsonl",),
    ),
    (
        "lufy-xlsx-corrupt",
        lambda d, t: (
            _garbage(d / "lufy/Dataset/LUFY/Zoe/Session1/Annotator0.xlsx")
            or ["dataset=lufy", "memory=naive_rag", "protocol=qa_lufy"]
        ),
        ("Annotator0.xlsx",),
    ),
    (
        "persona-chat-bad-line",
        lambda d, t: (
            _write(
                d / "persona_chat/data/ConvAI2/valid_self_original_no_cands.txt",
                "this line has no turn number\n",
            )
            or ["dataset=persona_chat", "memory=no_memory"]
        ),
        ("valid_self_original_no_cands.txt",),
    ),
    (
        "lamp1-not-json",
        lambda d, t: (
            _garbage(d / "lamp1/user/LaMP_1/dev_questions.json")
            or ["dataset=lamp1", "memory=no_memory"]
        ),
        ("dev_questions.json",),
    ),
    (
        "teabag-truncated-line",
        lambda d, t: (
            _truncate_first_line(d / "teabag/teabag.jsonl")
            or ["dataset=teabag", "memory=no_memory", "protocol=teafarm"]
        ),
        ("teabag.jsonl line 1",),
    ),
    # --- caches
    (
        "llm-cache-corrupt",
        lambda d, t: (
            _garbage(t / "cache" / "llm.sqlite") or [*MSC, f"paths.cache_dir={t / 'cache'}"]
        ),
        ("llm.sqlite", "mv "),
    ),
    (
        "embedding-cache-corrupt",
        lambda d, t: (
            _garbage(t / "cache" / "embeddings.sqlite")
            or [*MSC, "memory=memory_retrieval", f"paths.cache_dir={t / 'cache'}"]
        ),
        ("embeddings.sqlite", "mv "),
    ),
    # --- the resume folder
    ("resume-dir-missing", lambda d, t: [*MSC, f"resume_dir={t / 'gone'}"], ("no such folder",)),
    (
        "resume-dir-not-a-run",
        lambda d, t: (t / "empty").mkdir() or [*MSC, f"resume_dir={t / 'empty'}"],
        ("not a run folder",),
    ),
]


def _finished_runs(results: Path) -> list[Path]:
    return [
        p
        for p in results.rglob("run.json")
        if json.loads(p.read_text()).get("status") in {"finished", "degraded"}
    ]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_status_2(case, run_cli, data_copy, tmp_path, monkeypatch):
    _, damage, expected = case
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(data_copy))
    args = damage(data_copy, tmp_path)
    outcome = run_cli(*args)
    assert outcome.status == 2, outcome.err
    assert len(outcome.error_lines) == 1, outcome.err
    line = outcome.error_lines[0]
    assert line.startswith("recallbench: error: ")
    for part in expected:
        assert part in line, line
    assert "Traceback" not in outcome.err
    assert not _finished_runs(tmp_path / "results")


@pytest.mark.parametrize(
    "status,label", [(401, "AuthenticationError 401"), (404, "NotFoundError 404")]
)
def test_endpoint_refusal_stops_with_one_line(status, label, run_cli, monkeypatch, tmp_path):
    secret = "sk-test-secret-value-123456"
    monkeypatch.setenv("RECALLBENCH_DATA_DIR", str(Path(__file__).parents[2] / "data/fixtures"))
    monkeypatch.setenv("STUB_KEY", secret)
    with StubServer() as stub:
        stub.always = Fault(status=status)
        outcome = run_cli(
            *MSC,
            "generator=openai",
            f"generator.base_url={stub.base_url}",
            "generator.api_key_env=STUB_KEY",
            "generator.model=stub-model",
            "+protocol.batch_turns=false",  # one call at a time, so the count is exact
        )
        assert stub.requests == 1  # refused at once, never retried
    assert outcome.status == 2 and len(outcome.error_lines) == 1, outcome.err
    assert label in outcome.error_lines[0]
    assert secret not in outcome.err + outcome.out
    assert not _finished_runs(tmp_path / "results")


def test_verbose_shows_the_traceback(run_cli, monkeypatch):
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    from recallbench.errors import ConfigError

    with pytest.raises(ConfigError, match="episodes=-3"):
        run_cli(*MSC, "episodes=-3")


def _subprocess(
    args: list[str], env_extra: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_extra}
    env.pop("HYDRA_FULL_ERROR", None)
    return subprocess.run(
        [sys.executable, "-m", "recallbench.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_subprocess_bad_value_and_corrupt_cache(tmp_path, data_copy):
    """Two rows in a real process: the whole stderr is the one line (no traceback anywhere)."""
    env = {"RECALLBENCH_DATA_DIR": str(data_copy), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = _subprocess([*MSC, f"paths.results_dir={tmp_path}", "episodes=abc"], env, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "recallbench: error: episodes='abc': expected an integer >= 1, or null for every "
        "episode (conf/config.yaml)"
    ]
    _garbage(tmp_path / "c" / "llm.sqlite")
    proc = _subprocess(
        [*MSC, f"paths.results_dir={tmp_path}", f"paths.cache_dir={tmp_path / 'c'}"], env, tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("recallbench")] == [
        ln for ln in proc.stderr.splitlines() if "llm.sqlite" in ln
    ]


def test_an_unknown_experiment_fails_with_did_you_mean(run_cli):
    outcome = run_cli("experiment=theanine_tabel1")
    assert outcome.status == 2
    (line,) = outcome.error_lines
    assert "unknown experiment choice 'theanine_tabel1'. Did you mean 'theanine_table1'" in line


def test_an_unknown_choice_in_a_sweep_fails_before_any_job(run_cli):
    outcome = run_cli("-m", "memory=memory_retrieval,memory_retreival")
    assert outcome.status == 2
    assert "unknown memory choice 'memory_retreival'" in outcome.error_lines[0]
