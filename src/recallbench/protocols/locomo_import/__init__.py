"""Published LoCoMo answer files as ordinary runs (``recallbench import-answers``).

from recallbench.protocols.locomo_import import LocomoImportProtocol, read_answer_file

``_formats`` reads the four formats (locomo-audit, zep, mem0, jsonl), ``_match`` matches each
answer to the release's question and checks it, ``_protocol`` replays and scores them through
the LoCoMo protocol's own scoring. Docs: ``docs/import_answers.md``.
"""

from recallbench.protocols.locomo_import._agreement import agreement_entries
from recallbench.protocols.locomo_import._formats import (
    CATEGORY_NAMING,
    FORMATS,
    JUDGE_OF,
    RELEASE_ORDER,
    AnswerFile,
    ImportedAnswer,
    read_answer_file,
)
from recallbench.protocols.locomo_import._match import Matched, match_answers, merge_latency
from recallbench.protocols.locomo_import._protocol import (
    LocomoImportProtocol,
    file_sha256,
    shipped_values,
)

__all__ = [
    "CATEGORY_NAMING",
    "FORMATS",
    "JUDGE_OF",
    "RELEASE_ORDER",
    "AnswerFile",
    "ImportedAnswer",
    "LocomoImportProtocol",
    "Matched",
    "agreement_entries",
    "file_sha256",
    "match_answers",
    "merge_latency",
    "read_answer_file",
    "shipped_values",
]
