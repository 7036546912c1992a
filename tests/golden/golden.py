"""Golden tables: run every offline ``make reproduce-*`` target on the fixtures, compare the CSVs.

    python tests/golden/golden.py --record          # write tests/golden/tables/*.csv
    python tests/golden/golden.py                   # rerun and compare (exit 1 on a difference)

The targets run exactly as a user runs them (``make <target>``) with ``DATA_DIR`` pointing at the
project's own fixtures, a fresh results folder and small sweeps (``GOLDEN_ARGS``), so the recorded
CSVs pin what every table target computes. Recorded before the architecture move (issue 9) and
compared after it: a moved value is either a bug of the move or a listed, explained change.
``reproduce-figure-theanine-5`` and ``reproduce-lufy-cross`` got targets in that move; their CSVs
were recorded then. The one summary-cell builder writes n = 0 (was n/a) for LUFY cells without a
value: lufy_table3/11/16/17/18.csv were re-recorded for that ``n`` field only. CareCall Tables 2,
3 and 6 (issue 12) were recorded when they got targets; carecall_table4 was re-recorded when it
got its "Memory turns" columns (new cells; the "All turns" cells unchanged).
Issue 13 (phase B) added the columns ``episodes,ci_low,ci_high,p_value,p_holm,significant,comparable,coverage`` and
emptied ``diff`` where the setting is not comparable with the paper's: every CSV was re-recorded
for those columns only (``ours``, ``paper``, ``n`` unchanged), and they are compared from then on.
The TimeRAG targets (issue 11) were recorded when they got targets. Issue 24 re-recorded four:
carecall_table4 (new rows on the gold session summaries), timerag_figure5 and timerag_table8
(new LaMP-1 sweeps), timerag_table7 (TimeRAG's profile writer fills its LaMP-1 memory: context
tokens 6 -> 32); every other cell of the 39 stayed equal.
Issue 24 (items 1, 3-5) re-recorded every CSV for ``diff``/``comparable``/``coverage``/
``episodes`` and the test columns only (``ours``, ``paper``, ``n`` unchanged but for wall-clock
latency): a fixture cell is never comparable (``comparable=false``, no ``diff``), never tested
(``p_value``, ``p_holm``, ``significant`` empty) and never pooled with real data; a table without
an assessed setting writes ``comparable`` empty and no ``diff``; CareCall/LUFY Table 1 cells carry
their episodes (``‡`` where fewer than the paper's). One interval moved: lufy_table12
(Annotators) Avg., [12.5, 52.1] -> [25.0, 66.7], since an episode without a session no longer
counts as a zero in the mean over sessions (``metrics.clusters``).
Issue 28 (matrix): coverage markers go on values only, so lufy_table1's six "Conv. Setting"
text cells lost a ``§`` (``coverage`` re-recorded for those cells, nothing else).
After both, the four tables issue 24's figures work re-recorded were recorded once more over the merged
code (their ``ours``/``paper``/``n`` as on main, the issue-24 columns as above).

From a git worktree that shares another checkout's virtualenv, name it so make neither creates
nor reinstalls one (the install stamp is taken as up to date):

    GOLDEN_VENV=/work/main/.venv PYTHONPATH=$PWD/src python tests/golden/golden.py
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "tables"
# Small sweeps: the fixture episodes, the hashing embedder (batch-independent floats) where the
# table allows.
ARGS = "embedder=hashing progress=false wandb.mode=disabled"
ANSWER_KEY = ROOT / "data" / "fixtures" / "gvd" / "answer_key_en.jsonl"  # GVD fixture users


def golden_targets() -> dict[str, str]:
    """Every target whose experiment lists ``golden`` (``reproduce.lists``, conf/experiment/),
    with its ``ARGS``: a target that runs a sweep gets :data:`ARGS` plus its experiment's
    ``reproduce.golden_args``; a table of data or of other targets' runs gets none (its ``ARGS``
    would be the table's own overrides). Targets come after those whose runs they read."""
    from recallbench.cli.reproduce import group, steps

    out = {}
    for target, extra in group("golden").items():
        planned = steps(target, results=ROOT / "results", gen_args=[], args=[], judge="", make=[])
        sweeps = any(step.kind == "sweep" for step in planned)
        out[target] = " ".join([ARGS, *extra]) if sweeps else ""
    # The targets share one results folder and its LLM cache. Table XI's latency counts only
    # calls that miss that cache, so TimeRAG Table VI (whose runs it reads) must run before the
    # TimeRAG sweeps that send the same calls, as when the CSVs were recorded; otherwise its
    # No-Memory and TimeRAG MSC replies are cache hits and their latency has no calls (n 13 -> 0).
    first = [t for t in FIRST if t in out]
    return {t: out[t] for t in first} | {t: a for t, a in out.items() if t not in first}


FIRST = ("reproduce-table-timerag-6",)


TARGETS: dict[str, str] = golden_targets()


def run_targets(results: Path, targets: list[str]) -> None:
    """Run each make target into ``results`` (prerequisite sweeps run once, in order)."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "WANDB_MODE": "disabled",
    }
    env.pop("RECALLBENCH_DATA_DIR", None)
    venv = os.environ.get("GOLDEN_VENV")
    shared = [f"VENV={venv}", "-o", f"{venv}/.installed"] if venv else []
    for target in targets:
        cmd = [
            "make",
            "-s",
            *shared,
            target,
            "DATA_DIR=data/fixtures",
            f"RESULTS={results}",
            f"ARGS={TARGETS[target]}",
            f"ANSWER_KEY={ANSWER_KEY}",
        ]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode:
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-5000:])
            raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode})")


def read_csv(path: Path) -> dict[tuple, dict]:
    with path.open(encoding="utf-8") as fh:
        return {(r["row"], r["column"], r["metric"]): r for r in csv.DictReader(fh)}


# Tolerances, per column, derived (issue 33: `make golden` holds under AVX-512, AVX2 and default
# kernel dispatch). Every cell is compared at the csv's own resolution (it writes
# ``round(value, 6)``: one unit of the sixth decimal either way) unless its metric is computed
# by float32 model arithmetic whose last bits depend on the CPU's kernels:
#
# - BERTScore: a mean of greedy-matched cosine similarities of float32 MiniLM embeddings
#   (d = 384). A kernel that sums a dot product in another order moves each cosine by at most
#   ~sqrt(d) eps32 = 2.3e-6 of its value, and a mean or max of such values by no more: relative
#   tolerance 4 sqrt(d) eps32 = 9.3e-6 (measured on AVX2: within 1e-6).
# - Perplexity (PPL): the tables print two decimals. float32 kernels move SmolLM2's NLL by ~1e-5
#   nats per token (tests/llm/test_causal_scoring.py), a PPL of 50 by ~5e-4: the tolerance is
#   half a printed unit (0.005), ten times that noise; a fifth decimal carries no claim.
# - MAUVE: a mean over k k-means seeds (metrics.mauve) whose single fits may land elsewhere on
#   other kernels: two values agree within 3 standard errors of their difference,
#   3 sqrt(sd_a^2 + sd_b^2) / sqrt(k), from the csv's ``seed_sd`` and ``seeds``.
# The interval bounds of such a cell take its value's tolerance; its p-values, computed from the
# same float32 numbers, agree to 1e-4 (``significant`` is compared exactly: a flip there is a
# p-value at the table's alpha, worth a look).
EPS32 = 2.0**-23
CSV_RESOLUTION = 1e-6
BERTSCORE_REL = 4 * math.sqrt(384) * EPS32
PPL_ABS = 0.005
P_ABS = 1e-4
VALUE_FIELDS = ("ours", "ci_low", "ci_high")


def float32_metric(metric: str) -> str:
    """Which float32 model metric a column's label names ("" for an exact one)."""
    label = metric.lower()
    for kind, words in (("bertscore", ("bertscore",)), ("ppl", ("ppl", "perplexity"))):
        if any(w in label for w in words):
            return kind
    return "mauve" if "mauve" in label else ""


def same(a: str, b: str, rel: float = 1e-9, abs_: float = CSV_RESOLUTION) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)
    except ValueError:
        return a == b


def _seed_tolerance(old: dict, new: dict) -> float | None:
    try:
        k = int(old.get("seeds") or new.get("seeds") or 0)
        sd_a, sd_b = float(old.get("seed_sd") or 0), float(new.get("seed_sd") or 0)
    except ValueError:
        return None
    return 3 * math.sqrt(sd_a**2 + sd_b**2) / math.sqrt(k) if k > 1 else None


def tolerance(key: tuple, field: str, old: dict, new: dict) -> tuple[float, float]:
    """(relative, absolute) tolerance of one field of one cell (see the comment above)."""
    kind = float32_metric(str(key[2]))
    if not kind:
        return 1e-9, CSV_RESOLUTION
    if field in ("p_value", "p_holm"):
        return 1e-9, P_ABS
    if field not in VALUE_FIELDS:
        return 1e-9, CSV_RESOLUTION
    if kind == "bertscore":
        return BERTSCORE_REL, CSV_RESOLUTION
    if kind == "ppl":
        return 1e-9, PPL_ABS
    return 1e-9, max(CSV_RESOLUTION, _seed_tolerance(old, new) or CSV_RESOLUTION)


FIELDS = ("ours", "paper", "diff", "n", "episodes", "ci_low", "ci_high", "p_holm", "significant")
FIELDS += ("comparable", "coverage")
# Wall-clock cells (TimeRAG Table VII/XI latency) differ run to run: only their layout is pinned,
# and in a table that has them, Holm's adjusted p-values (which rank every test of the table,
# latency ones included) are not compared either.
TIMING = ("latency",)
TIMING_FIELDS = ("paper", "n", "episodes", "comparable", "coverage")


def _timing(key: tuple) -> bool:
    return any(word in str(key[2]).lower() for word in TIMING)


def compare(expected: Path, got: Path) -> list[str]:
    """Return one line per differing cell field (:data:`FIELDS`)."""
    if not got.exists():
        return [f"{expected.name}: not produced"]
    old, new = read_csv(expected), read_csv(got)
    out = [f"{expected.name}: cell {k} missing" for k in old.keys() - new.keys()]
    out += [f"{expected.name}: new cell {k}" for k in new.keys() - old.keys()]
    timed = any(_timing(k) for k in old)
    for key in old.keys() & new.keys():
        fields = TIMING_FIELDS if _timing(key) else FIELDS
        if timed:
            fields = tuple(f for f in fields if f not in ("p_holm", "significant"))
        for field in fields:
            rel, abs_ = tolerance(key, field, old[key], new[key])
            if not same(old[key].get(field, ""), new[key].get(field, ""), rel, abs_):
                out.append(
                    f"{expected.name} {key} {field}: {old[key].get(field)} -> {new[key].get(field)}"
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--results", help="results folder to keep (default: a temp dir)")
    parser.add_argument("targets", nargs="*", default=list(TARGETS))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(args.results or tmp).resolve()
        run_targets(results, args.targets)
        produced = sorted((results / "tables").glob("*.csv"))
        if args.record:
            GOLDEN.mkdir(parents=True, exist_ok=True)
            for path in produced:
                (GOLDEN / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
            print(f"recorded {len(produced)} tables in {GOLDEN}")
            return 0
        diffs = [
            d
            for exp in sorted(GOLDEN.glob("*.csv"))
            for d in compare(exp, results / "tables" / exp.name)
        ]
        print("\n".join(diffs) or f"all {len(list(GOLDEN.glob('*.csv')))} golden tables equal")
        return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
