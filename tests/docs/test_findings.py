"""The findings the README and docs/findings.md state come from the cells of the tables they cite.

Each finding (a bullet of docs/findings.md, or of the README's "What the harness finds offline")
names the files it was read from (`results/tables/<name>.md`) and ends with a comment that says
where each number it states was read, cell by cell (invisible when the page is rendered):

    <!-- cells: 36.9 = attribution_lufy[Naive RAG | accuracy %];
         0.00101 = lufy_table10[LUFY | S4 | p_holm]; 4.0 = timerag_table9[note: TimeRAG] -->

``NUM = table[row | column]`` finds the md table's row (first cell) and column (header) and
needs NUM among the numbers of that cell (its value, its interval's bounds); ``table[row |
column | field]`` reads the csv's line (row, column) and needs its ``field`` to round to NUM;
``table[note: text]`` needs NUM in a note line of the md that contains ``text``. Every decimal or
grouped number a finding states needs such a claim, every claim must hold and name a table the
finding cites. A re-rendered table whose cells moved fails here until the finding is rewritten
from it, so no finding outlives its table, and a number cannot be backed by another row's cell.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "results" / "tables"
# decimals (36.9) and grouped integers (5,918,617): the figures a finding reads off a table;
# not the version inside a name (gpt-4.1-mini), whose digits follow a letter and a hyphen
NUMBER = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(?:\d+\.\d+|\d{1,3}(?:,\d{3})+)(?![\d,]*\d)")
CELL_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
CITED = re.compile(r"`(\w+)\.md")
CELLS = re.compile(r"<!--\s*cells:(.*?)-->", re.S)
CLAIM = re.compile(r"^\s*([\d.,e-]+)\s*=\s*(\w+)\[(.*)\]\s*$", re.S)


def findings(text: str) -> list[str]:
    """The bullets of a findings text (a bullet runs to the next bullet or blank line)."""
    return [p for p in re.split(r"\n(?=- )|\n\n", text) if p.lstrip().startswith("- ")]


def readme_section(text: str) -> str:
    match = re.search(r"^## What the harness finds offline\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "README.md has no '## What the harness finds offline' section (issue 37)"
    return match.group(1)


def md_cells(text: str) -> dict[tuple[str, str], str]:
    """{(row label, column header): cell text} of the first md table in ``text``."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    if len(lines) < 3:
        return {}
    split = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    header = split[0]
    return {
        (row[0], col): cell for row in split[2:] for col, cell in zip(header, row, strict=False)
    }


def _same(stated: str, value: float) -> bool:
    """``value`` written with the decimals (or significant digits, for 0.00101) of ``stated``."""
    text = stated.replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text) - round(value, decimals)) <= 10 ** -(decimals + 3)


def check_claim(number: str, table: str, where: str, tables: Path = TABLES) -> str | None:
    """Why the claim ``number = table[where]`` does not hold (None: it does)."""
    md = tables / f"{table}.md"
    if not md.is_file():
        return f"{table}.md is cited but not committed"
    text = md.read_text(encoding="utf-8")
    if where.startswith("note:"):
        key = where[len("note:") :].strip()
        notes = [line for line in text.splitlines() if line.startswith("- ") and key in line]
        if not notes:
            return f"{table}.md has no note containing {key!r}"
        if not any(number in CELL_NUMBER.findall(line) for line in notes):
            return f"{number} is in no note of {table}.md containing {key!r}"
        return None
    parts = [p.strip() for p in where.split("|")]
    if len(parts) == 2:
        cell = md_cells(text).get((parts[0], parts[1]))
        if cell is None:
            return f"{table}.md has no cell (row {parts[0]!r}, column {parts[1]!r})"
        return None if number in CELL_NUMBER.findall(cell) else f"{table}.md {parts}: {cell!r}"
    if len(parts) == 3:
        path = tables / f"{table}.csv"
        with path.open(encoding="utf-8", newline="") as f:
            rows = [r for r in csv.DictReader(f) if (r["row"], r["column"]) == tuple(parts[:2])]
        if not rows or not rows[0].get(parts[2]):
            return f"{table}.csv has no {parts[2]} at (row {parts[0]!r}, column {parts[1]!r})"
        value = float(rows[0][parts[2]])
        return None if _same(number, value) else f"{table}.csv {parts}: {value}"
    return f"expected [row | column], [row | column | field] or [note: text], got [{where}]"


def unsupported(finding: str, tables: Path = TABLES) -> list[str]:
    """What is wrong with ``finding``'s numbers: unclaimed, or claimed from a cell that disagrees."""
    visible = CELLS.sub("", finding)
    cited = set(CITED.findall(visible))
    assert cited, f"a finding cites no table: {finding[:80]!r}"
    claims: dict[str, list[tuple[str, str]]] = {}
    problems = []
    for block in CELLS.findall(finding):
        for entry in filter(str.strip, block.split(";")):
            m = CLAIM.match(entry)
            if m is None:
                problems.append(f"unreadable claim {entry.strip()!r}")
                continue
            claims.setdefault(m[1], []).append((m[2], " ".join(m[3].split())))
    stated = set(NUMBER.findall(visible))
    problems += [f"{n}: no cell claimed" for n in sorted(stated - set(claims))]
    problems += [f"{n}: claimed but not stated" for n in sorted(set(claims) - stated)]
    for number, where in claims.items():
        for table, place in where:
            if table not in cited:
                problems.append(f"{number}: {table} is not cited by the finding")
            elif (why := check_claim(number, table, place, tables)) is not None:
                problems.append(f"{number}: {why}")
    return problems


SOURCES = {
    "docs/findings.md": lambda: (ROOT / "docs" / "findings.md").read_text(encoding="utf-8"),
    "README.md": lambda: readme_section((ROOT / "README.md").read_text(encoding="utf-8")),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_number_of_a_finding_is_in_its_named_cell(source: str) -> None:
    bullets = [b for b in findings(SOURCES[source]()) if CITED.search(b)]
    assert len(bullets) >= 3, f"{source}: expected findings citing committed tables"
    problems = {b[:70]: missing for b in bullets if (missing := unsupported(b))}
    assert not problems, f"{source}: numbers not backed by their cells: {problems}"


TABLE = """# t

- **judge**: lexical
- IDENTICAL ROWS: 'A', 'B'. Memory activity: A: 198 records written (1.0 per episode-session)

|  | accuracy % | F1 |
|---|---|---|
| Naive RAG | 36.9 [26.9, 46.9] | 5.9 |
| Mem0 | 18.2 [14.3, 22.0] | 5.8† [4.1, 7.0] |
"""


def test_a_number_is_checked_in_its_named_row_and_column(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text(TABLE, encoding="utf-8")
    (tmp_path / "t.csv").write_text(
        "row,column,metric,ours,p_holm\nMem0,F1,F1,5.8,0.0010123\n", encoding="utf-8"
    )
    ok = (
        "- **x** answers 36.9% [26.9, 46.9] (`t.md`), p_holm 0.00101, 1.0 per session "
        "<!-- cells: 36.9 = t[Naive RAG | accuracy %]; 26.9 = t[Naive RAG | accuracy %]; "
        "46.9 = t[Naive RAG | accuracy %]; 0.00101 = t[Mem0 | F1 | p_holm]; "
        "1.0 = t[note: Memory activity] -->"
    )
    assert unsupported(ok, tmp_path) == []
    # the number is in the file, but not in the cell the claim names: the old check passed it
    wrong_row = "- **x** answers 5.9 (`t.md`) <!-- cells: 5.9 = t[Mem0 | F1] -->"
    assert unsupported(wrong_row, tmp_path) == ["5.9: t.md ['Mem0', 'F1']: '5.8† [4.1, 7.0]'"]
    assert unsupported("- **x** answers 5.8 (`t.md`)", tmp_path) == ["5.8: no cell claimed"]
    off = "- **x** 0.00102 (`t.md`) <!-- cells: 0.00102 = t[Mem0 | F1 | p_holm] -->"
    assert unsupported(off, tmp_path) == ["0.00102: t.csv ['Mem0', 'F1', 'p_holm']: 0.0010123"]
    other = "- **x** 5.8 (`t.md`) <!-- cells: 5.8 = u[Mem0 | F1] -->"
    assert unsupported(other, tmp_path) == ["5.8: u is not cited by the finding"]
    missing = "- **x** 5.8 (`t.md`) <!-- cells: 5.8 = t[Mem0 | J] -->"
    assert "no cell (row 'Mem0', column 'J')" in unsupported(missing, tmp_path)[0]
    with pytest.raises(AssertionError, match="cites no table"):
        unsupported("- **x** 1.0 <!-- cells: 1.0 = t[note: A] -->", tmp_path)
