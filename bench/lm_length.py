"""Forward throughput of the embedded LM by sequence length: what a floor at one length misses.

    python bench/lm_length.py [--lengths 128 512 1024 1800] [--seconds 6]

``bench/tables.py`` and ``bench/lm_floor.py`` price a run's LM scoring at the throughput of
8 x 128-token passes (``forward_throughput``). Attention's cost per token grows with the
sequence, so passes over long windows (CareCall Table 4's ~1,800-token History-accumulate
prompts, App. B.2) run fewer tokens per second than that: this prints tokens/s per length and
its ratio to the 128-token figure, measured in one process, so a floor priced at 128 tokens
can be read against it. Each length runs batches of about 1,024 tokens (8 x 128, 2 x 512,
1 x 1024, 1 x 1800), keeping the last 64 positions' logits, as scoring does.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command line sets it (before torch)
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", nargs="+", type=int, default=[128, 512, 1024, 1800])
    parser.add_argument("--seconds", type=float, default=6.0)
    opts = parser.parse_args(argv)
    from tables import forward_throughput

    base = None
    first = f"x {opts.lengths[0]}"
    print(f"{'length':>7} {'tokens/s':>9} {first:>6}  load {os.getloadavg()[0]:.1f}")
    for length in opts.lengths:
        rate = forward_throughput(opts.seconds, max(1, 1024 // length), length)
        base = base or rate
        print(f"{length:>7} {rate:>9.0f} {rate / base:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
