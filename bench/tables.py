"""Benchmark: every offline ``make reproduce-*`` target, cold (empty caches) then warm, in one run.

    python bench/tables.py [--data-dir ../shared/data] [--targets lufy-11 carecall-4 ...]
        [--baseline-tree /path/to/an/older/checkout] [--args "episodes=2"] [--venv .venv]
        [--phases cold warm] [--seed-files results/cache/arousal-<embedder>-<sha8>.npz ...]

Each target runs as a user runs it (``make <target> DATA_DIR=... RESULTS=<fresh temp folder>``):
cold into a new folder (no LLM, embedding or LM-score cache, no arousal model), then warm (the
same command again, into the same folder). Per run it prints the wall time, the shares of it
spent in LM scoring / embeddings / LLM calls / metrics (from the runs' ``usage.json``
``compute`` section; the rest is start-up, data loading, replay logic and table rendering), and
the LM scoring rate: the tokens of the sequences it scored (as one pass per text would run
them) per second of LM scoring, as a ratio to the model's own forward throughput measured in
this process at the start and at the end of the bench (``x fwd``; above 1 means shared
prefixes saved work), the share of its time in forward passes' tokens (``fwd eff``), and the
machine's 1-minute load average at its start and end: on 2 cores a pass that shared them with
other work can take several times as long (``load`` in ``--json`` too).

``--baseline-tree`` runs every target with that checkout's Makefile and sources too (same venv,
interleaved per target, so both see the same machine load) and prints the time ratios and how
many table cells differ (``ours`` beyond 1e-9 relative). Cold and warm tables of one tree are
compared the same way: a cache must give back what was computed (``--phases cold`` skips the
warm pass, e.g. for a baseline without an LM-score cache, whose warm pass repeats its cold one). Table-only targets (Tables 3,
12, 15 ...) run their sweep first in a cold folder, as ``make`` does for a new user.
``--seed-files`` copies files into every cold folder's ``cache/`` first: a fitted arousal model
spares a short bench LUFY's one-off EmoBank fit (10k MiniLM encodes), the same in every tree.
Default targets: every ``reproduce-*`` target of the Makefile except the 45-minute LUFY weight
fit (``reproduce-table-lufy-2``; name it to include it). ``--targets tables`` runs ``make tables``
(every table that runs here, one results folder and its caches shared) cold and warm as one
target; the last line sums the targets' cold and warm walls.

``floor s``: where a run scored texts under the embedded LM (perplexity, LUFY's surprise), the
forward tokens of the best plan of its exact computation (``bench/lm_floor.py``) over the forward
throughput measured here: the least its LM scoring can take on this machine ("-": no LM scoring,
no floor known). The warm pass should cost start-up only: finished runs whose config, code,
packages and data match are reused (``run.resume``), a repeated command is not even composed
(``cli.reuse``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command line sets it (before torch)
ROOT = Path(__file__).resolve().parents[1]
SKIP = ("reproduce-table-lufy-2",)  # the LM-heavy weight fit takes ~45 min: opt in by name
SHARES = ("lm_scoring", "embeddings", "llm_calls", "metrics")


def make_targets(tree: Path, venv: Path) -> list[str]:
    """The ``reproduce-*`` targets of a Makefile: its explicit rules in file order, then those its
    ``reproduce-table-%`` (or, since issue 36, ``reproduce-%``) pattern rule makes
    (``recallbench reproduce --list``: the experiments name them), where it has one."""
    text = (tree / "Makefile").read_text(encoding="utf-8")
    explicit = [
        t
        for t in re.findall(r"^(reproduce-[a-z0-9-]+):", text, flags=re.M)
        if t != "reproduce-list"
    ]
    if "reproduce-table-%:" not in text and "reproduce-%:" not in text:
        return explicit
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "recallbench.cli", "reproduce", "--list"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    patterned = [line.split()[0] for line in listed.splitlines() if line.startswith("reproduce-")]
    return explicit + [t for t in patterned if t not in explicit]


def forward_throughput(seconds: float = 6.0, rows: int = 8, length: int = 128) -> float:
    """Tokens per second of plain forward passes of the embedded LM (``rows`` x ``length``
    tokens, logits of the last 64 positions kept, as scoring keeps only the scored tokens'),
    this process (``bench/lm_length.py`` measures other lengths)."""
    import torch

    from recallbench.llm.perplexity import load_default_lm

    model, _ = load_default_lm()
    ids = torch.randint(200, 40000, (rows, length), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        model(input_ids=ids[:, :16], logits_to_keep=1)  # warm-up
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds or done < 2:
            model(input_ids=ids, logits_to_keep=64, use_cache=False)
            done += 1
    return done * ids.numel() / (time.perf_counter() - start)


def run_target(
    tree: Path, venv: Path, target: str, data: Path, results: Path, args: str
) -> tuple[float, int]:
    """Run ``make <target>`` from ``tree`` into ``results``; return (wall seconds, exit code)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "WANDB_MODE": "disabled"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.pop("RECALLBENCH_DATA_DIR", None)
    env.pop("RECALLBENCH_RESULTS_DIR", None)
    cmd = ["make", "-s", "-C", str(tree), f"VENV={venv}", "-o", f"{venv}/.installed", target]
    cmd += [f"DATA_DIR={data}", f"RESULTS={results}"] + ([f"ARGS={args}"] if args else [])
    # beside the results folder, not in it: a file that changes there is an input of every
    # table (cli.table re-renders a table when anything it may read changed)
    log = results.parent / f"{results.name}.{target}.log"
    results.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with log.open("a", encoding="utf-8") as fh:
        code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env).returncode
    return time.perf_counter() - start, code


def lm_floor_s(results: Path, since: float, fwd: float) -> float | None:
    """Seconds the exact LM scoring of the runs started after ``since`` needs at least (the
    best plan's forward tokens at ``fwd`` tokens/s); None when no run scored under the LM."""
    from lm_floor import floor

    from recallbench.llm.perplexity import load_default_lm

    tokens, tokenizer = 0, None
    for usage in results.glob("runs/*/*/*/usage.json"):
        info = json.loads((usage.parent / "run.json").read_text())
        compute = json.loads(usage.read_text()).get("compute") or {}
        if info.get("started_unix", 0) < since or not (compute.get("lm_scores") or {}).get(
            "sequence_tokens"
        ):
            continue
        tokenizer = tokenizer or load_default_lm()[1]
        try:
            tokens += floor(usage.parent, tokenizer)[2]
        except SystemExit:  # no response with a reference (LUFY's surprise): floor not known
            continue
    return tokens / fwd if tokens else None


def metered(results: Path, since: float) -> dict[str, float] | None:
    """Sum the ``compute`` sections of the runs that started after ``since`` (None: no run
    recorded one, e.g. an older tree or a table-only run)."""
    total: dict[str, float] = {}
    found = False
    for usage in results.glob("runs/*/*/*/usage.json"):
        info = json.loads((usage.parent / "run.json").read_text())
        compute = json.loads(usage.read_text()).get("compute")
        if info.get("started_unix", 0) < since or compute is None:
            continue
        found = True
        for key, value in compute.get("seconds", {}).items():
            total[key] = total.get(key, 0.0) + value
        for key, value in (compute.get("lm_scores") or {}).items():
            total[f"lm.{key}"] = total.get(f"lm.{key}", 0) + value
    return total if found else None


def tables(results: Path) -> dict[tuple[str, str, str, str], str]:
    """Every ``ours`` cell of the tables in ``results``: (file, row, column, metric) -> value."""
    cells = {}
    for path in sorted((results / "tables").glob("*.csv")):
        with path.open(encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                cells[(path.name, r["row"], r["column"], r["metric"])] = r.get("ours", "")
    return cells


def differing(a: dict, b: dict) -> int:
    """How many cells differ between two table sets (numbers beyond 1e-9 relative)."""

    def same(x: str, y: str) -> bool:
        try:
            return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-12)
        except ValueError:
            return x == y

    return sum(not same(a.get(k, "?"), b.get(k, "?")) for k in set(a) | set(b))


def row(
    label: str, wall: float, code: int, m: dict | None, fwd: float, least: float | None = None
) -> str:
    """One printed line: wall time, shares, LM rate as a multiple of forward throughput, the
    LM scoring floor (seconds)."""
    status = "" if code == 0 else f"  FAILED (exit {code})"
    status = ("        -" if least is None else f"{least:9.0f}") + status
    if m is None:
        return f"{label:<44} {wall:8.1f}" + "       n/a" * 5 + " " * 25 + status
    shares = [100 * m.get(k, 0.0) / wall for k in SHARES]
    other = 100 - sum(shares)
    lm_s, seq = m.get("lm_scoring", 0.0), m.get("lm.sequence_tokens", 0)
    rate = f"{seq / lm_s / fwd:7.2f}x" if seq and lm_s > 0.5 else "       -"
    eff = f"{m.get('lm.forward_tokens', 0) / lm_s / fwd:6.2f}" if seq and lm_s > 0.5 else "     -"
    hits = m.get("lm.memory_hits", 0) + m.get("lm.disk_hits", 0)
    cols = "".join(f"{s:9.0f}%" for s in [*shares, other])
    return f"{label:<44} {wall:8.1f}{cols} {rate} {eff} {int(hits):>7}/{int(m.get('lm.requested', 0)):<7}{status}"


def bench_target(opts, tree: Path, target: str, fwd: float, keep: Path | None) -> dict:
    """Cold then warm run of one target from one tree; print and return the figures."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="bench_tables_", dir=keep)) / "results"
    out: dict = {"tree": str(tree), "target": target}
    for seed in opts.seed_files:
        (folder / "cache").mkdir(parents=True, exist_ok=True)
        shutil.copy2(seed, folder / "cache" / seed.name)
    for phase in opts.phases:
        since, load = time.time(), [os.getloadavg()[0]]
        wall, code = run_target(tree, opts.venv, target, opts.data_dir, folder, opts.args)
        load.append(os.getloadavg()[0])
        m = metered(folder, since)
        least = lm_floor_s(folder, since, fwd) if m and m.get("lm_scoring") else None
        out[phase] = {
            "wall_s": round(wall, 2), "exit": code, "metered": m, "lm_floor_s": least,
            "load": load,
        }  # fmt: skip
        out[f"{phase}_tables"] = tables(folder)
        label = f"{target.removeprefix('reproduce-')} {phase}" + (
            " [base]" if opts.base == tree else ""
        )
        print(
            row(label, wall, code, m, fwd, least) + f"  load {load[0]:.1f}-{load[1]:.1f}",
            flush=True,
        )
    out["cold_vs_warm_cells"] = differing(out["cold_tables"], out.get("warm_tables", {}))
    if "warm" in opts.phases and out["cold_vs_warm_cells"]:
        print(f"  ! {out['cold_vs_warm_cells']} table cells differ between cold and warm")
    if keep is None:
        shutil.rmtree(folder.parent, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("RECALLBENCH_DATA_DIR", "../shared/data")),
    )
    parser.add_argument(
        "--targets",
        nargs="*",
        help="targets or their suffixes (lufy-11); default: all but " + ", ".join(SKIP),
    )
    parser.add_argument("--baseline-tree", type=Path, help="another checkout to time the same way")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument(
        "--args", default="", help="Hydra overrides for every sweep (make ARGS=...)"
    )
    parser.add_argument("--phases", nargs="+", choices=("cold", "warm"), default=["cold", "warm"])
    parser.add_argument(
        "--seed-files", type=Path, nargs="*", default=[], help="copied into each cold cache/"
    )
    parser.add_argument("--keep", type=Path, help="keep the results folders under this folder")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    opts = parser.parse_args(argv)
    opts.data_dir, opts.venv = opts.data_dir.resolve(), opts.venv.absolute()
    opts.base = opts.baseline_tree.resolve() if opts.baseline_tree else None
    every = make_targets(ROOT, opts.venv)
    wanted = opts.targets or [t for t in every if t not in SKIP]
    targets = [
        next((t for t in every if t == w or t.endswith("-" + w) or t == "reproduce-" + w), w)
        for w in wanted
    ]
    unknown = [t for t in targets if t not in [*every, "tables"]]
    if unknown:
        parser.error(f"unknown targets {unknown} (Makefile: {', '.join(every)})")
    fwd_start = forward_throughput()
    print(
        f"forward throughput of the embedded LM: {fwd_start:.0f} tokens/s (load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'target / pass':<44} {'wall s':>8}"
        + "".join(f"{h:>10}" for h in ("LM", "embed", "LLM", "metrics", "other"))
        + "   LM rate  fwd eff  LM hits          floor s  load (1-min, start-end)"
    )
    results = []
    for target in targets:
        for tree in ([opts.base] if opts.base else []) + [ROOT]:
            results.append(bench_target(opts, tree, target, fwd_start, opts.keep))
        if opts.base:
            base, new = results[-2], results[-1]
            ratios = ", ".join(
                f"{p} {new[p]['wall_s'] / base[p]['wall_s']:.2f}" for p in opts.phases
            )
            cells = differing(base["cold_tables"], new["cold_tables"])
            print(
                f"  new/base wall: {ratios}; {cells} table cells differ from the baseline's",
                flush=True,
            )
    for tree in ([opts.base] if opts.base else []) + [ROOT]:
        mine = [r for r in results if r["tree"] == str(tree)]
        walls = [f"{p} {sum(r[p]['wall_s'] for r in mine):.1f} s" for p in opts.phases]
        print(
            f"all {len(mine)} targets{' [base]' if opts.base == tree else ''}: {', '.join(walls)}"
        )
    fwd_end = forward_throughput()
    print(
        f"forward throughput at the end: {fwd_end:.0f} tokens/s (load {os.getloadavg()[0]:.1f}); rates above use the start's"
    )
    if opts.json:
        for r in results:
            for key in ("cold_tables", "warm_tables"):
                if key in r:
                    r[key] = len(r[key])
        opts.json.write_text(
            json.dumps({"forward_tok_s": [fwd_start, fwd_end], "runs": results}, indent=1)
        )
    return 1 if any(r[p]["exit"] for r in results for p in opts.phases) else 0


if __name__ == "__main__":
    sys.exit(main())
