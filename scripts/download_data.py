"""Download the public datasets into a data root (``make data``).

    python scripts/download_data.py --out data/downloaded [--only lufy msc ...] [--with-train]

Offline it stops at the first request with a message saying how to use an existing copy
(``DATA_DIR=/path/to/data`` or ``RECALLBENCH_DATA_DIR``). Logic: recallbench.datasets.download.
"""

from __future__ import annotations

import argparse
import sys

from recallbench.datasets.download import DownloadError, download, sources


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="data root to fill (one folder per dataset)")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=sorted(sources()),
        help="datasets to fetch (default: all)",
    )
    parser.add_argument(
        "--with-train",
        action="store_true",
        help="also fetch Conversation Chronicles train.jsonl (1.35 GB)",
    )
    args = parser.parse_args(argv)
    try:
        folders = download(args.out, args.only, with_train=args.with_train)
    except DownloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"done: {len(folders)} dataset folder(s) under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
