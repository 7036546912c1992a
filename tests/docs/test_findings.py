"""The findings the README and docs/findings.md state come from the committed tables they cite.

Each finding (a bullet of docs/findings.md, or of the README's "What the harness finds offline")
names the files it was read from (`results/tables/<name>.md`); every decimal or grouped number it states must
appear in one of those files (md or csv). A re-rendered table whose numbers moved fails here
until the finding is rewritten from it, so no finding outlives its table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "results" / "tables"
# decimals (36.9) and grouped integers (5,918,617): the figures a finding reads off a table
NUMBER = re.compile(r"(?<![\w.,])(?:\d+\.\d+|\d{1,3}(?:,\d{3})+)(?![\d,]*\d)")
CITED = re.compile(r"`(\w+)\.md")


def findings(text: str) -> list[str]:
    """The bullets of a findings text (a bullet runs to the next bullet or blank line)."""
    return [p for p in re.split(r"\n(?=- )|\n\n", text) if p.lstrip().startswith("- ")]


def readme_section(text: str) -> str:
    match = re.search(r"^## What the harness finds offline\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "README.md has no '## What the harness finds offline' section (issue 37)"
    return match.group(1)


def unsupported(finding: str, tables: Path = TABLES) -> list[str]:
    """The decimal numbers of ``finding`` that none of the tables it cites contains."""
    cited = set(CITED.findall(finding))
    assert cited, f"a finding cites no table: {finding[:80]!r}"
    blob = ""
    for name in sorted(cited):
        files = [tables / f"{name}.{ext}" for ext in ("md", "csv")]
        assert any(f.is_file() for f in files), f"{name}.md is cited but not committed"
        blob += "".join(f.read_text(encoding="utf-8") for f in files if f.is_file())
    return [n for n in NUMBER.findall(finding) if n not in blob]


SOURCES = {
    "docs/findings.md": lambda: (ROOT / "docs" / "findings.md").read_text(encoding="utf-8"),
    "README.md": lambda: readme_section((ROOT / "README.md").read_text(encoding="utf-8")),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_number_of_a_finding_is_in_the_tables_it_cites(source: str) -> None:
    bullets = [b for b in findings(SOURCES[source]()) if CITED.search(b)]
    assert len(bullets) >= 3, f"{source}: expected findings citing committed tables"
    problems = {b[:70]: missing for b in bullets if (missing := unsupported(b))}
    assert not problems, f"{source}: numbers not in the cited tables: {problems}"


def test_a_number_missing_from_the_cited_table_is_caught(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("| a | 36.9 |\n", encoding="utf-8")
    assert unsupported("- **x** answers 36.9% (`t.md`)", tmp_path) == []
    assert unsupported("- **x** answers 37.0% (`t.md`)", tmp_path) == ["37.0"]
    (tmp_path / "c.md").write_text("| Mem0 | 5,918,617 |\n", encoding="utf-8")
    assert unsupported("- writes 5,918,617 tokens, not 1,064,176 (`c.md`)", tmp_path) == [
        "1,064,176"
    ]
    with pytest.raises(AssertionError, match="not committed"):
        unsupported("- **x** 1.0 (`gone.md`)", tmp_path)
