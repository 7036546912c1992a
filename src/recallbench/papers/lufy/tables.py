"""LUFY's own table builders (Sumida et al., arXiv 2409.12524): which table uses what.

Every LUFY table is ``recallbench-table lufy_<id>`` over ``conf/experiment/lufy_<id>.yaml``:

- Tables 3, 11, 13, 16-18: the summary-cell builder (``recallbench.tables.cells``), rows by
  ``memory`` and ``logs`` (the system whose conversation logs were replayed), per-metric column
  labels (``column_label: "{metric} {column}"``);
- App. D / Fig. 11: the summary-cell builder, one row per swept threshold (``rows_by``), drawn
  as ``results/tables/lufy_figure11.{png,pdf}`` by ``recallbench.tables.figure``;
- Table 2: ``weights_table`` here (the Levenberg-Marquardt fit written by
  ``scripts/fit_lufy_weights.py``);
- Tables 12, 14 (agreement) and 15 (top-k): ``recallbench.papers.lufy.memories``;
- Tables 8 (rating) and 10 (sentiment): ``recallbench.papers.lufy.ux``;
- Table 1 (dataset statistics): ``recallbench.papers.lufy.dataset_table``.

A cell without a matching run is ``n/a``, never invented; the paper's numbers come from
``papers/lufy/reference.yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from recallbench.errors import DataNotFoundError
from recallbench.papers.lufy.runs import lufy_reference, paper_value
from recallbench.records import JSON
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec

# -- Table 2: fitted weights ----------------------------------------------------------------

WEIGHT_ROWS = {
    "A": "Arousal",
    "P": "Perplexity",
    "L": "LLM Estimated Importance",
    "R1": "Most Relevant Memory Count",
    "R2": "2nd Most Relevant Memory Count",
}


def weight_cells(spec: TableSpec, fit: Mapping[str, JSON]) -> list[Cell]:
    """Return Table 2 cells from a ``scripts/fit_lufy_weights.py --out`` result."""
    reference = lufy_reference(spec.id)
    n = {"A": "n_stage1", "P": "n_stage1", "L": "n_stage1", "R1": "n_stage2", "R2": "n_stage2"}
    return [
        Cell(
            row,
            "Weight",
            "weight",
            fit["weights"].get(metric),
            paper_value(reference, row, "Weight", "weight"),
            fit.get(n[metric]),
            3,
        )
        for metric, row in WEIGHT_ROWS.items()
    ]


def weights_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 2: the weight fit written to ``<results>/<table.fit>``."""
    path = Path(ctx.results_dir) / str(spec.option("fit"))
    if not path.exists():
        raise DataNotFoundError(
            f"{path} not found: run scripts/fit_lufy_weights.py --data-dir DIR --out {path}"
        )
    fit = json.loads(path.read_text(encoding="utf-8"))
    setup = fit.get("setup") or {}
    header = {"fit": str(path), **{k: str(v) for k, v in setup.items()}}
    header["normalization bounds"] = str(fit.get("bounds"))
    # a fit judges nothing and its unit is the annotated pair, sampled over every user's logs
    header["judge"] = "none: the fit reads the annotators' importance labels, no answer is judged"
    header["episodes"] = (
        f"every user's logs of {setup.get('stage1_systems')} (stage 1: {fit.get('n_stage1')} "
        f"pairs sampled) and {setup.get('stage2_systems')} (stage 2: {fit.get('n_stage2')} pairs)"
    )
    return BuiltTable(weight_cells(spec, fit), header=header)
