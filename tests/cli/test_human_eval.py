"""``recallbench human-eval export|import``: LUFY Table 7 rerun on the fixture logs end to end
(blinded sheet out, two annotators' sheets in, the table with the paper's values and ICC)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from recallbench import cli

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _main(monkeypatch, capsys, *args: str) -> list[str]:
    monkeypatch.setattr(sys, "argv", ["recallbench", "human-eval", *args])
    cli.main()
    return capsys.readouterr().out.split()


def test_lufy_table7_round_trip(tmp_path, monkeypatch, capsys):
    common = [f"paths.data_dir={FIXTURES}", "--results", str(tmp_path)]
    out = _main(monkeypatch, capsys, "export", "lufy_table7", *common)
    study = tmp_path / "human" / "lufy_human"
    assert str(study / "to_annotators" / "sheet.csv") in out and str(study / "key.csv") in out
    key = {r["item"]: r for r in _rows(study / "key.csv")}
    sheet = _rows(study / "to_annotators" / "sheet.csv")
    assert "system" not in sheet[0] and {r["candidate"] for r in sheet} == {"A", "B", "C"}
    # Two annotators rate Zoe's LUFY sessions 1-4 (5 4 3 2 and one point lower), personalization
    # only; every other row stays blank (unrated).
    lufy = {
        r["item"]: int(r["unit"].rsplit("/s", 1)[1])
        for r in key.values()
        if r["system"] == "LUFY" and r["group"] == "Zoe"
    }
    files = []
    for name, shift in (("ann1", 0), ("ann2", 1)):
        rows = _rows(study / "to_annotators" / "sheet.csv")
        for row in rows:
            if row["item"] in lufy:
                row["personalization"] = str(6 - lufy[row["item"]] - shift)
        path = tmp_path / f"{name}.csv"
        with path.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        files.append(str(path))
    out = _main(monkeypatch, capsys, "import", "lufy_table7", *files, *common)
    assert str(study / "ratings.csv") in out
    table = {(r["row"], r["column"]): r for r in _rows(tmp_path / "tables" / "lufy_table7.csv")}
    s1 = table["LUFY", "Personalization S1"]
    assert (float(s1["ours"]), s1["paper"]) == (4.5, "3.94")  # (5 + 4) / 2; the paper beside
    assert float(table["LUFY", "Personalization Avg."]["ours"]) == pytest.approx(2.5)  # S2-S4
    icc = table["ICC across annotators", "Personalization Avg."]
    # raters 5 4 3 2 vs 4 3 2 1: one point harsher -> ICC(2,1) = ICC(A,1) = 10/13
    assert float(icc["ours"]) == pytest.approx(10 / 13) and icc["paper"] == "0.31"
    assert table["Naive RAG", "Personalization S1"]["ours"] == "n/a"


def test_errors_are_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "recallbench",
            "human-eval",
            "import",
            "lufy_table7",
            str(tmp_path / "x.csv"),
            "--results",
            str(tmp_path),
        ],
    )
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "no key; export the study first" in err
    monkeypatch.setattr(sys, "argv", ["recallbench", "human-eval", "export", "lufy_table3"])
    with pytest.raises(SystemExit):
        cli.main()
    assert "table.human: expected {module" in capsys.readouterr().err
