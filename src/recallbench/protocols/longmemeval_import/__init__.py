"""The LongMemEval authors' hypothesis files as ordinary runs (``recallbench import-answers``).

from recallbench.protocols.longmemeval_import import LongMemEvalImportProtocol, read_hypotheses

``_formats`` reads a hypothesis file (JSONL or a JSON list; judged or not), ``_protocol``
matches it to the loaded questions and judges each answer with the run's judge, ``_score``
summarises the run's judge, the shipped labels and their agreement, ``_metrics`` is the
authors' ``print_qa_metrics.py`` on a file alone. Docs: ``docs/import_answers.md``.
"""

from recallbench.protocols.longmemeval_import._formats import (
    FORMAT,
    Hypothesis,
    HypothesisFile,
    read_hypotheses,
)
from recallbench.protocols.longmemeval_import._metrics import (
    REPORT_TYPES,
    QAReport,
    qa_report,
    reference_types,
)
from recallbench.protocols.longmemeval_import._protocol import (
    LongMemEvalImportProtocol,
    file_sha256,
)
from recallbench.protocols.longmemeval_import._score import METRICS, SOURCE, score_import

__all__ = [
    "FORMAT",
    "METRICS",
    "REPORT_TYPES",
    "SOURCE",
    "Hypothesis",
    "HypothesisFile",
    "LongMemEvalImportProtocol",
    "QAReport",
    "file_sha256",
    "qa_report",
    "read_hypotheses",
    "reference_types",
    "score_import",
]
