"""Paper tables: one ``table:`` schema, THE summary-cell builder, references, md/tex/csv render.

``spec`` validates an experiment's ``table:`` block, ``engine.reproduce`` reads the runs it
names and calls its builder, ``cells`` is the default (summary-cell) builder and ``render``
writes ``results/tables/<paper>_<id>.{md,tex,csv}`` with the paper's values from
``recallbench/papers/<paper>/reference.yaml`` beside ours. The command is ``recallbench-table``
(``recallbench.cli.table_main``).
"""

from recallbench.tables.engine import BuiltTable, TableContext, data_label, header_for, reproduce
from recallbench.tables.render import Cell, load_reference, reference_table, render, table_id
from recallbench.tables.spec import TableSpec, TableSpecError, load_spec, table_only

__all__ = [
    "BuiltTable",
    "Cell",
    "TableContext",
    "data_label",
    "TableSpec",
    "TableSpecError",
    "header_for",
    "load_reference",
    "load_spec",
    "reference_table",
    "render",
    "reproduce",
    "table_id",
    "table_only",
]
