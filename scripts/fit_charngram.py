"""Refit the CareCall character n-gram rule's thresholds (``CHARNGRAM_DEFAULTS``) on CareCall_mem.

    python scripts/fit_charngram.py <data_dir> [file]

Grid-searches the offline memory-operation rule's thresholds for the best mean set F1 over every
session transition of the CareCall_mem file (default: the public sample) and prints them.
Logic: recallbench.memory.memory_update (``transitions``, ``fit_charngram``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from recallbench.datasets import carecall
from recallbench.memory.memory_update import fit_charngram, transitions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="data root holding carecall_mem/")
    parser.add_argument("file", nargs="?", default=carecall.DEFAULT_FILE, help="a JSON file name")
    args = parser.parse_args(argv)
    episodes = carecall.load(args.data_dir, args.file)
    data = transitions(episodes)
    fitted, f1 = fit_charngram(data)
    print(f"{len(data)} transitions of {len(episodes)} episodes: {fitted} mean set F1 {f1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
