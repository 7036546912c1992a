"""Paper tables: one spec schema, the summary-cell builder, the papers' references, rendering.

``render`` writes ``results/tables/<paper>_table<n>.{md,tex,csv}``; ``load_reference`` reads
``recallbench/papers/<paper>/reference.yaml``.
"""

from recallbench.tables.render import Cell, load_reference, reference_table, render

__all__ = ["Cell", "load_reference", "reference_table", "render"]
