"""MAUVE of the same predictions under three CPU kernel dispatches: is a cell machine-independent?

    python bench/mauve_dispatch.py <run folder> [<run folder> ...] [--seeds 10]

Issue 33: THEANINE Tables 1 and 2 regenerated on an AVX2 machine from identical predictions
moved 13 MAUVE cells by up to 2.04 points, because one k-means fit flips on float32 differences
of the MiniLM features. For each run folder (a response run: ``predictions.jsonl`` with
references) this computes MAUVE (``metrics.mauve``, MiniLM features computed afresh, no cache)
in a child process per dispatch:

- ``native``: this machine's kernels (AVX-512 where the CPU has it);
- ``avx2``: ``ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 FAISS_OPT_LEVEL=avx2``;
- ``default``: ``ATEN_CPU_CAPABILITY=default FAISS_OPT_LEVEL=generic`` (no vector kernels).

It prints, per run and dispatch, each seed's value, their mean and standard deviation, the
cell as a table prints it (``tables.cell``: mean to the digits its seed noise supports), and
against ``native``: how many single fits moved, the largest single-fit move, the move of the
mean, and that move as a ratio of the printed unit (<= 1: the printed cells agree up to one unit
of the last digit). A json line per run ends the output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

DISPATCH = {
    "native": {},
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "FAISS_OPT_LEVEL": "avx2",
    },
    "default": {"ATEN_CPU_CAPABILITY": "default", "FAISS_OPT_LEVEL": "generic"},
}


def responses(run: Path) -> tuple[list[str], list[str]]:
    """(outputs, references) of a run's scored responses."""
    preds = []
    with (run / "predictions.jsonl").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                preds.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{run / 'predictions.jsonl'} line {n}: not JSON ({exc})") from exc
    kept = [p for p in preds if p.get("reference") is not None and not p.get("failure")]
    if not kept:
        raise SystemExit(f"{run}: no prediction with a reference (a response run is needed)")
    return [p["output"] for p in kept], [p["reference"] for p in kept]


def child(run: Path, seeds: int) -> None:
    """Compute the seeds' values here and print them as json (run in each dispatch)."""
    import torch

    from recallbench.metrics.mauve import MauveMetric

    torch.set_num_threads(1)
    outputs, references = responses(run)
    res = MauveMetric(seeds=seeds).compute(outputs, references)
    capability = torch.backends.cpu.get_cpu_capability()
    print(json.dumps({"capability": capability, "seeds": res.meta["seed_values"]}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.runs[0], args.seeds)
        return 0
    from recallbench.tables.cell import fmt, noise_digits, seed_sd

    for run in args.runs:
        got: dict[str, dict] = {}
        for name, env in DISPATCH.items():
            cmd = [sys.executable, __file__, str(run), "--seeds", str(args.seeds), "--child"]
            done = subprocess.run(
                cmd, env={**os.environ, **env}, capture_output=True, text=True, check=False
            )
            if done.returncode:
                sys.stderr.write(done.stderr[-3000:])
                raise SystemExit(f"{run}: the {name} child failed ({done.returncode})")
            got[name] = json.loads(done.stdout.strip().splitlines()[-1])
        base = [100 * v for v in got["native"]["seeds"]]
        base_mean, sd = sum(base) / len(base), seed_sd(base)
        digits = noise_digits(2, sd, len(base))
        unit = 10.0**-digits
        print(f"{run}  ({len(responses(run)[0])} responses, {args.seeds} seeds)")
        summary = {"run": str(run), "seeds": args.seeds, "unit": unit}
        for name, data in got.items():
            vals = [100 * v for v in data["seeds"]]
            mean = sum(vals) / len(vals)
            moved = [abs(a - b) for a, b in zip(vals, base, strict=True)]
            flips = sum(m > 1e-9 for m in moved)
            cell = f"{fmt(mean, digits)} ±{fmt(seed_sd(vals) or 0.0, max(digits, -1) + 1)}"
            print(
                f"  {name:8s} [{data['capability']:7s}] cell {cell:>14s}  mean {mean:8.4f}  "
                f"single fits moved {flips}/{len(vals)} (max {max(moved):.2f})  "
                f"mean moved {abs(mean - base_mean):.4f} = "
                f"{abs(mean - base_mean) / unit:.2f} x printed unit"
            )
            summary[name] = {
                "capability": data["capability"],
                "mean": mean,
                "sd": seed_sd(vals),
                "flips": flips,
                "max_single_move": max(moved),
                "mean_move_over_unit": abs(mean - base_mean) / unit,
            }
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
