"""Human evaluations (``recallbench.humaneval``): blinded sheets, validated imports, statistics
against hand-checked values, and the CareCall tables computed from hand-made ratings."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from recallbench.errors import DatasetFormatError
from recallbench.humaneval import (
    Criterion,
    Rating,
    Study,
    Unit,
    agreement,
    export_sheet,
    import_ratings,
    majority,
    paired,
    pearson,
    read_ratings,
    standardize,
    unit_scores,
    write_ratings,
)
from recallbench.papers.carecall import human as carecall_human
from recallbench.tables import TableContext, load_spec

STUDY = Study(
    "toy",
    "Toy study",
    "Rate it.",
    (
        Criterion("quality", "Quality", "How good is it?", (1.0, 5.0)),
        Criterion("faulty", "Faulty", "Is it faulty?", choices=("No", "Yes")),
    ),
)


def _units() -> list[Unit]:
    return [
        Unit(
            f"{g}/s{s}",
            g,
            f"context {g} {s}",
            {"Alpha": f"alpha {g}{s}", "Beta": f"beta {g}{s}"},
            s,
        )
        for g in ("g1", "g2", "g3")
        for s in (2, 1)
    ]


def _read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_sheet_is_blinded_shuffled_and_the_key_kept_apart(tmp_path):
    paths = export_sheet(STUDY, _units(), tmp_path / "out", tmp_path / "key.csv", seed=3)
    sheet, key = _read(paths["sheet"]), _read(paths["key"])
    text = paths["sheet"].read_text(encoding="utf-8")
    assert "Alpha" not in text and "Beta" not in text  # systems appear only in the key
    assert list(sheet[0]) == [
        "item",
        "group",
        "unit",
        "candidate",
        "context",
        "text",
        "quality",
        "faulty",
        "annotator",
        "comment",
    ]
    assert [r["item"] for r in sheet] == [r["item"] for r in key] and len(
        set(r["item"] for r in key)
    ) == 12
    by_item = {r["item"]: r for r in key}
    for row in sheet:  # the text shown is the keyed system's
        assert row["text"].startswith(by_item[row["item"]]["system"].lower())
    for group in ("g1", "g2", "g3"):  # one letter per system across a group, sessions in order
        rows = [r for r in key if r["group"] == group]
        assert len({(r["system"], r["candidate"]) for r in rows}) == 2
        assert [r["unit"] for r in rows] == [f"{group}/s1"] * 2 + [f"{group}/s2"] * 2
    orders = set()
    for seed in range(8):  # groups and letters are shuffled by the seed
        again = export_sheet(
            STUDY, _units(), tmp_path / f"o{seed}", tmp_path / f"k{seed}.csv", seed
        )
        rows = _read(again["key"])
        orders.add(tuple((r["group"], r["system"], r["candidate"]) for r in rows[::2]))
    assert len(orders) > 1
    same = export_sheet(STUDY, _units(), tmp_path / "o3b", tmp_path / "k3b.csv", seed=3)
    assert same["sheet"].read_text() == paths["sheet"].read_text()
    with pytest.raises(ValueError, match="keep the key out"):
        export_sheet(STUDY, _units(), tmp_path / "out", tmp_path / "out" / "key.csv")
    assert (
        "`quality` (Quality): How good is it? Fill in a number from 1 to 5."
        in paths["instructions"].read_text()
    )


def _fill(sheet: Path, out: Path, annotator: str, values: dict[str, tuple[str, str]]) -> Path:
    """Fill the sheet: ``values[system letter text prefix]`` -> (quality, faulty)."""
    rows = _read(sheet)
    for row in rows:
        quality, faulty = values.get(row["text"].split()[0], ("", ""))
        row.update(quality=quality, faulty=faulty, annotator=annotator)
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out


def test_import_round_trip_joins_the_key_and_validates(tmp_path):
    paths = export_sheet(STUDY, _units(), tmp_path / "out", tmp_path / "key.csv")
    a = _fill(
        paths["sheet"], tmp_path / "a.csv", "ann-a", {"alpha": ("4", "no"), "beta": ("2", "Yes")}
    )
    b = _fill(paths["sheet"], tmp_path / "b.csv", "", {"alpha": ("5", ""), "beta": ("", "")})
    ratings = import_ratings(STUDY, paths["key"], [a, b])
    assert len(ratings) == 6 * 2 * 2 + 6  # a: both criteria on 12 items; b: quality on alpha
    assert {(r.system, r.criterion, r.value) for r in ratings if r.annotator == "ann-a"} == {
        ("Alpha", "quality", 4.0),
        ("Alpha", "faulty", "No"),
        ("Beta", "quality", 2.0),
        ("Beta", "faulty", "Yes"),
    }
    assert {r.annotator for r in ratings} == {"ann-a", "b"}  # blank annotator: the file's stem
    back = read_ratings(STUDY, write_ratings(ratings, tmp_path / "ratings.csv"))
    assert back == ratings

    def broken(edit) -> Path:
        rows = _read(a)
        edit(rows)
        bad = tmp_path / "bad.csv"
        with bad.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return bad

    cases = [
        (
            lambda rows: rows[1].update(quality="7"),
            r"bad.csv line 3: quality 7 is outside the scale \[1, 5\]",
        ),
        (lambda rows: rows[0].update(quality="good"), "line 2: quality 'good' is not a number"),
        (
            lambda rows: rows[0].update(faulty="maybe"),
            r"faulty 'maybe' is not one of \['No', 'Yes'\]",
        ),
        (lambda rows: rows[0].update(item="h000000"), "item 'h000000' is not in the key of toy"),
        (lambda rows: rows[1].update(item=rows[0]["item"]), "rated twice by annotator 'ann-a'"),
    ]
    for edit, message in cases:
        with pytest.raises(DatasetFormatError, match=message):
            import_ratings(STUDY, paths["key"], [broken(edit)])
    (tmp_path / "nocol.csv").write_text("item,annotator\nx,y\n")
    with pytest.raises(DatasetFormatError, match=r"columns \['quality', 'faulty'\] missing"):
        import_ratings(STUDY, paths["key"], [tmp_path / "nocol.csv"])


def _r(unit: str, system: str, annotator: str, value, criterion: str = "quality") -> Rating:
    return Rating(
        f"{unit}{system}{annotator}", unit, unit.split("/")[0], system, annotator, criterion, value
    )


def test_statistics_against_hand_checked_values():
    # annotator a: 20 40 50 50 80 60 -> mean 50, population sd sqrt(2000/6) = 18.257
    values = {
        ("e1/s2", "W"): 20,
        ("e2/s2", "W"): 40,
        ("e1/s2", "A"): 50,
        ("e2/s2", "A"): 50,
        ("e1/s2", "U"): 80,
        ("e2/s2", "U"): 60,
    }
    ratings = [_r(u, s, "a", float(v)) for (u, s), v in values.items()]
    ratings += [_r(u, s, "b", 0.5 * v + 25) for (u, s), v in values.items()]  # same z-scores
    z = unit_scores(standardize(ratings), "quality")
    sd = math.sqrt(2000 / 6)
    assert z["e1/s2", "W"] == pytest.approx(-30 / sd) and z["e2/s2", "U"] == pytest.approx(10 / sd)
    assert unit_scores(ratings, "quality")["e1/s2", "W"] == pytest.approx((20 + 35) / 2)
    # paired t-test W vs U over e1, e2: t = -(a + b) / (a - b) = -2 with a = 60/sd, b = 20/sd;
    # df = 1: p = 1 - 2 atan(2) / pi
    test = paired(z, "W", "U")
    assert test.t == pytest.approx(-2.0) and test.p == pytest.approx(1 - 2 * math.atan(2) / math.pi)
    # Pearson: x = 1, 2, 3; y = 1, 2, 4 -> r = 3 / sqrt(2 * 42 / 9)
    x = {("u1", "S"): 1.0, ("u2", "S"): 2.0, ("u3", "S"): 3.0}
    y = {("u1", "S"): 1.0, ("u2", "S"): 2.0, ("u3", "S"): 4.0}
    r, p, n = pearson(x, y)
    assert r == pytest.approx(3 / math.sqrt(2 * 42 / 9)) and n == 3 and 0 < p < 1
    assert pearson(x, {k: 1.0 for k in x})[0] is None  # no spread: undefined, never NaN
    votes = [_r("u1", "S", a, v, "faulty") for a, v in (("a", "Yes"), ("b", "Yes"), ("c", "No"))]
    votes += [_r("u2", "S", a, v, "faulty") for a, v in (("a", "Yes"), ("b", "No"))]
    assert majority(votes, "faulty", tie="No") == {("u1", "S"): "Yes", ("u2", "S"): "No"}


def test_agreement_is_the_icc_of_the_items_every_annotator_rated():
    # raters [5, 4, 3, 2] and [4, 3, 2, 1]: one point harsher -> ICC(A,1) = 10/13, ICC(C,1) = 1
    ratings = [_r(f"u{i}/s1", "S", "a", float(5 - i)) for i in range(4)]
    ratings += [_r(f"u{i}/s1", "S", "b", float(4 - i)) for i in range(4)]
    ratings.append(_r("u9/s1", "S", "a", 3.0))  # rated by one annotator only: left out
    ratings = [r._replace(item=f"{r.unit}") for r in ratings]
    report = agreement(STUDY, ratings, "quality")
    assert report["n_items"] == 4 and report["raters"] == ["a", "b"]
    assert report["icc_a1"] == pytest.approx(10 / 13) and report["icc_c1"] == pytest.approx(1.0)
    assert agreement(STUDY, [r for r in ratings if r.annotator == "a"], "quality") is None


def _carecall_ratings(tmp_path: Path) -> None:
    rows = []
    values = {"Without memory": (20, 40), "Memory accumulate": (50, 50), "Memory update": (80, 60)}
    for system, (v1, v2) in values.items():
        for unit, v in (("e1/s2", v1), ("e2/s2", v2)):
            for annotator, x in (("a", v), ("b", 0.5 * v + 25)):
                rows.append(
                    Rating(
                        f"{unit}{system}",  # one blinded item, two annotators
                        unit,
                        unit[:2],
                        system,
                        annotator,
                        "coherence",
                        float(x),
                    )
                )
    write_ratings(rows, tmp_path / "human" / "carecall_human" / "ratings.csv")


def test_carecall_tables_from_ratings(tmp_path):
    _carecall_ratings(tmp_path)
    ctx = TableContext(results_dir=tmp_path)
    sd = math.sqrt(2000 / 6)
    t5 = carecall_human.human_table(load_spec("carecall_table5"), ctx)
    cell = {(c.row, c.metric): c for c in t5.cells}
    assert cell["Without memory", "Coherence"].ours == pytest.approx(
        -20 / sd
    )  # mean of -30 and -10 over sd
    assert cell["Memory update", "Coherence"].ours == pytest.approx(20 / sd)
    assert cell["Without memory", "Coherence"].paper == -0.0450  # Table 5, beside ours
    assert cell["Without memory", "Coherence"].p_value == pytest.approx(
        1 - 2 * math.atan(2) / math.pi
    )
    assert cell["Memory update", "Coherence"].p_value is None  # the reference row
    assert cell["Memory update", "Memorability"].ours is None  # not rated
    assert cell["Memory update", "Memorability"].paper == 0.4351
    assert not any(c.comparable for c in t5.cells)  # replayed sessions vs live conversations
    t9 = carecall_human.human_table(load_spec("carecall_table9"), ctx)
    absolute = {(c.row, c.metric): c for c in t9.cells}
    assert absolute["Without memory", "Coherence"].ours == pytest.approx(
        ((20 + 35) / 2 + (40 + 45) / 2) / 2
    )
    assert absolute["Memory update", "Coherence"].paper == 75.98
    t8 = carecall_human.human_table(load_spec("carecall_table8"), ctx)
    per = {(c.row, c.column, c.metric): c for c in t8.cells}
    assert per["Memory update", "Session 2", "Coherence"].ours == pytest.approx(20 / sd)
    assert per["Memory update", "Session 1", "Coherence"].ours is None
    assert per["Memory update", "Session 1", "Coherence"].paper == 0.1765
    # b = a / 2 + 25 on 6 sessions: ICC(A,1) = 24/29 (McGraw & Wong, metrics.agreement)
    assert "agreement, Coherence: ICC(A,1) = 0.83 over 6 sessions; paper: not reported" in t5.notes
    assert "Pearson memorability vs engagingness: undefined; paper r = 0.68 (p < 0.01)" in t5.notes
