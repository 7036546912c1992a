"""papers/timerag/reference.yaml holds exactly the numbers of the paper's tables.

The paper's tables are tab-separated lines after their caption ("Table IV. ..."); every numeric
cell of Tables IV-IX and XI must appear in reference.yaml under the same row, column (dataset)
and metric, and reference.yaml must hold nothing the paper does not print.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recallbench.papers import timerag

PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers" / "timerag_memory.md"
REFERENCE = Path(timerag.__file__).with_name("reference.yaml")
TABLES = {"IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "XI": 11}
HEADERS = {
    "Precision": "write_precision",
    "Recall": "write_recall",
    "F1": "write_f1",
    "Recall@1": "recall_at_1",
    "Recall@5": "recall_at_5",
    "MRR": "mrr",
    "ROUGE-L": "rouge_l",
    "BERTScore": "bertscore",
    "MSC_BERTScore": "bertscore",
    "ContradRate \\downarrow": "contrad_rate",
    "ContradRate": "contrad_rate",
    "MSC_ContradRate": "contrad_rate",
    "PersonaCons F1 \\uparrow": "persona_cons_f1",
    "Accuracy": "accuracy",
    "Acc": "accuracy",
    "Macro-F1": "macro_f1",
    "CtxTokens": "ctx_tokens",
    "AvgCtxTokens": "ctx_tokens",
    "Latency(ms)": "latency_ms",
}
LABEL_COLUMNS = ("Method", "Variant", "lambda")


def paper_table(lines: list[str], roman: str) -> list[list[str]]:
    """The tab-separated lines after the caption ``Table <roman>.`` (blank lines skipped)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"Table {roman}."))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        if "\t" not in line:
            if rows:
                break
            continue
        rows.append([cell.strip() for cell in line.split("\t")])
    return rows


def paper_values(rows: list[list[str]]) -> dict[tuple[str, str, str], float]:
    header, body = rows[0], rows[1:]
    out = {}
    label_at = next(i for i, h in enumerate(header) if h in LABEL_COLUMNS)
    for row in body:
        row = row + [""] * (len(header) - len(row))
        dataset = row[header.index("Dataset")] if "Dataset" in header else None
        label = row[label_at]
        for name, cell in zip(header, row, strict=True):
            if name in HEADERS and cell:
                column = dataset or ("MSC" if name.startswith("MSC_") else "LaMP-1")
                out[(label, column, HEADERS[name])] = float(cell)
    return out


def reference_values(entry: dict) -> dict[tuple[str, str, str], float]:
    return {
        (str(row), column, metric): float(value)
        for row, columns in entry["values"].items()
        for column, metrics in columns.items()
        for metric, value in metrics.items()
    }


def _norm(key: tuple[str, str, str]) -> tuple[str, str, str]:
    label, column, metric = key
    try:  # Table IX rows are lambda values: "0.100" in the paper, "0.1" here
        label = repr(float(label))
    except ValueError:
        pass
    return label, column, metric


@pytest.mark.skipif(not PAPER.exists(), reason=f"{PAPER} not found (../shared/papers)")
@pytest.mark.parametrize("roman", list(TABLES))
def test_reference_matches_the_paper_table(roman):
    lines = PAPER.read_text(encoding="utf-8").splitlines()
    paper = {_norm(k): v for k, v in paper_values(paper_table(lines, roman)).items()}
    entry = yaml.safe_load(REFERENCE.read_text())[f"table{TABLES[roman]}"]
    ours = {_norm(k): v for k, v in reference_values(entry).items()}
    assert paper, f"Table {roman}: no numbers parsed from the paper"
    assert ours == paper
