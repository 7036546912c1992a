"""Measure: Mem0's LoCoMo recall@k crediting each memory with its batch vs its one source turn.

    python bench/mem0_credit.py RUN [--committed BATCH_RUN] [--versus OTHER_RUN] [--k 5]
        [--out FILE.json]

RUN is a ``locomo_qa`` run folder made with ``memory=mem0 memory.credit=source_turn``, e.g.

    RECALLBENCH_RESULTS_DIR=/tmp/r python -m recallbench.cli experiment=locomo_table1 \\
        hydra.mode=RUN memory=mem0 judge=mem0_j generator=extractive memory.credit=source_turn

BATCH_RUN (optional) is the same job made with the default ``credit: batch``: its recorded
sources are checked against RUN's mapped back to their batches (``analysis.mem0_credit``).
Prints, per category, n, recall@k under each credit and the paired difference with its
episode-clustered bootstrap CI and permutation p; ``--versus`` sets both credits against
another method's run of the same questions (its recorded recall@k, categories 1-4);
``--out`` writes the same as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from recallbench.analysis.mem0_credit import (
    agreement,
    answers,
    compare,
    paired_rows,
    read_batches,
    recorded_recall,
    versus,
)
from recallbench.io import write_json

ORDER = ("single_hop", "multi_hop", "temporal", "open_domain", "adversarial", "answerable", "all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--committed", type=Path, default=None)
    parser.add_argument("--versus", type=Path, default=None)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    batches = read_batches(args.run)
    preds = answers(args.run)
    table = compare(paired_rows(preds, batches, args.k))
    report: dict[str, object] = {"run": str(args.run), "k": args.k, "subsets": table}
    if args.committed is not None:
        same, shared, differ = agreement(preds, answers(args.committed), batches)
        report["agreement"] = {"same": same, "shared": shared, "differ": differ[:20]}
        print(f"batch sources equal to {args.committed}'s recorded ones: {same} of {shared}")
    print(f"| subset | n | recall@{args.k} batch | source turn | diff | 95% CI | p | changed |")
    print("|---|---|---|---|---|---|---|---|")
    for name in sorted(table, key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s)):
        row = table[name]
        ci = row["ci"] or [float("nan")] * 2
        print(
            f"| {name} | {row['n']} | {100 * row['batch']:.1f} | {100 * row['source_turn']:.1f} "
            f"| {100 * row['diff']:+.1f} | [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}] "
            f"| {row['p_value']:.4f} | {row['changed']} |"
        )
    if args.versus is not None:
        vs = versus(preds, batches, args.k, recorded_recall(args.versus, args.k), "answerable")
        report["versus"] = {"run": str(args.versus), "subset": "answerable", **vs}
        for name, row in vs.items():
            ci = row["ci"] or [float("nan")] * 2
            print(
                f"categories 1-4, {name} credit vs {args.versus.name}: n = {row['n']}, "
                f"{100 * row['value']:.1f} vs {100 * row['other']:.1f}, diff "
                f"{100 * row['diff']:+.1f} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}], "
                f"p = {row['p_value']:.4f}"
            )
    if args.out is not None:
        write_json(args.out, report)
        print(json.dumps({"written": str(args.out)}))


if __name__ == "__main__":
    main()
