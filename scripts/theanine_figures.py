"""THEANINE Table 8 and Figs. 9-10 (cost / time Pareto plots) from finished run folders.

    python scripts/theanine_figures.py --experiment theanine_table8 --results results \
        --out results/figures/theanine --price-model gpt-3.5-turbo-0125
"""

from __future__ import annotations

import argparse
import json

from recallbench.papers.theanine.efficiency import reproduce_efficiency


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="theanine_table8")
    parser.add_argument("--results", default="results")
    parser.add_argument("--out", default="results/figures/theanine")
    parser.add_argument("--price-model", default=None, help="reprice tokens at this model")
    args = parser.parse_args(argv)
    report = reproduce_efficiency(args.experiment, args.results, args.out, args.price_model)
    for dataset, found in report["datasets"].items():
        figures = found.get("figures", [])
        print(f"{dataset}: {len(figures)} figures, {found.get('skipped', '')}".rstrip(", "))
    print(json.dumps(report["tables"], indent=2))


if __name__ == "__main__":
    main()
