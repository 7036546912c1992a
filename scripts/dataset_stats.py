"""Reproduce a dataset-statistics table (LUFY Table 1, CareCall Table 1).

    python scripts/dataset_stats.py --table lufy_table1 --data-dir DIR --out results/tables

Writes ``<out>/<paper>_table1.{md,tex,csv}`` with the paper's values beside ours and prints the
markdown. Logic: recallbench.datasets.stats / stats_tables.
"""

from __future__ import annotations

import argparse
import sys

from recallbench.papers.dataset_stats import (
    TABLES,
    TOKENIZER_NOTES,
    DataNotFoundError,
    build_table,
)


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, choices=sorted(TABLES))
    parser.add_argument("--data-dir", required=True, help="data root (lufy/, msc/, ...)")
    parser.add_argument("--out", default="results/tables", help="output folder")
    parser.add_argument(
        "--tokenizer",
        choices=sorted(TOKENIZER_NOTES),
        help="word tokenizer (default: word for LUFY, whitespace for CareCall)",
    )
    parser.add_argument(
        "--load-option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="option for the main dataset's loader",
    )
    args = parser.parse_args(argv)
    try:
        paths = build_table(
            args.table,
            args.data_dir,
            args.out,
            tokenizer=args.tokenizer,
            options=dict(args.load_option),
        )
    except DataNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(paths["md"].read_text(encoding="utf-8"))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
