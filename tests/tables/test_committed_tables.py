"""The committed tables under ``results/tables/``, as a reader takes them at face value.

- every table's header names its generator, judge, embedder, data, code and episodes;
- a note that states a measured fact of the memory (records per session, none deleted) agrees
  with the memory activity the table computed from its runs (``tables.sameness``), and a table
  that computed none states none;
- the md, tex, csv and png/pdf of a table come from one build: the same code and runs in the
  md and the tex header, the csv's values are the md's cells, the figures carry the md's code
  and runs in their metadata (``tables.figure.METADATA_KEYS``).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

TABLES = Path(__file__).resolve().parents[2] / "results" / "tables"
MD = sorted(TABLES.glob("*.md"))
FACTS = ("generator", "judge", "embedder", "data", "code", "episodes")

pytestmark = pytest.mark.skipif(not MD, reason="no committed results/tables")


def md_header(text: str) -> dict[str, str]:
    """``- **key**: value`` lines above the table (keys lower-cased)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("|"):
            break
        if m := re.match(r"- \*\*(.+?)\*\*: (.*)", line):
            out.setdefault(m[1].lower(), m[2])
    return out


def tex_header(text: str) -> dict[str, str]:
    """``% key: value`` comment lines of a tex table."""
    return {
        m[1].lower(): m[2] for line in text.splitlines() if (m := re.match(r"% (.+?): (.*)", line))
    }


ACTIVITY = re.compile(
    r"(\d+) records written \(([\d.]+) per episode-session\), (\d+) updated, "
    r"(\d+) deleted or retired"
)
RATE_CLAIM = re.compile(r"([\d.]+) records? per (?:user per )?(?:episode-)?session")
NONE_DELETED = re.compile(r"\b(?:none|no record)\b[^.;:]*\b(?:evicted|deleted|retired)\b")


def claims_against_activity(text: str) -> list[str]:
    """What the table's notes claim about its memory that its computed activity contradicts."""
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    computed = [m for line in lines if "Memory activity:" in line for m in ACTIVITY.finditer(line)]
    rates = {float(m[2]) for m in computed}
    deleted = {int(m[4]) for m in computed}
    problems = []
    for line in lines:
        if "Memory activity:" in line:
            continue
        claims = [float(m[1]) for m in RATE_CLAIM.finditer(line)]
        if (NONE_DELETED.search(line) or claims) and not computed:
            problems.append(f"states memory activity the table did not compute: {line[:120]}")
            continue
        problems += [
            f"{rate} records per session vs the computed {sorted(rates)}: {line[:120]}"
            for rate in claims
            if not any(math.isclose(rate, r, abs_tol=0.05) for r in rates)
        ]
        if NONE_DELETED.search(line) and deleted != {0}:
            problems.append(f"says none deleted; computed {sorted(deleted)}: {line[:120]}")
    return problems


def test_a_note_that_contradicts_the_activity_is_caught():
    activity = (
        "- IDENTICAL ROWS: 'a', 'b'. Memory activity: a: 198 records written (1.0 per "
        "episode-session), 0 updated, 3 deleted or retired over 50 episodes; b: 198 records "
        "written (1.0 per episode-session), 0 updated, 0 deleted or retired over 50 episodes"
    )
    stale = "- **flat**: it writes 0.49 records per user per session; none is evicted or deleted"
    problems = claims_against_activity(f"{stale}\n{activity}")
    assert len(problems) == 2 and "0.49" in problems[0] and "[0, 3]" in problems[1]
    assert claims_against_activity(f"- **flat**: 1.0 records per session\n{activity}") == []
    assert "did not compute" in claims_against_activity(stale)[0]


ACCOUNT = re.compile(
    r"([\d,]+) records? written \([\d.]+ per episode-session\), ([\d,]+) updated, "
    r"([\d,]+) deleted or retired(?:, ([\d,]+) returned to memory)? over ([\d,]+) episodes?; "
    r"([\d.]+) live per episode at the end"
)


def unaccounted_live(text: str) -> list[str]:
    """Activity notes whose live store is not (written - deleted + returned) / episodes (a note
    from before returns were shown: checked only when nothing was updated)."""
    out = []
    for m in ACCOUNT.finditer(text):
        written, updated, deleted = (int(g.replace(",", "")) for g in m.groups()[:3])
        episodes = int(m[5].replace(",", ""))
        if m[4] is None and updated:
            continue  # returns are among the updates, and the note does not say how many
        returned = int(m[4].replace(",", "")) if m[4] else 0
        expected = (written - deleted + returned) / episodes
        if not math.isclose(float(m[6]), expected, abs_tol=0.051):
            out.append(
                f"{m[6]} live, (written - deleted + returned) / episodes = {expected:.2f}: {m[0]}"
            )
    return out


def test_a_live_store_that_does_not_add_up_is_caught():
    note = (
        "Memory activity: Session summaries: 2172 records written (8.0 per episode-session), 0 "
        "updated, 0 deleted or retired over 10 episodes; {} live per episode at the end"
    )
    assert unaccounted_live(note.format("217.2")) == []
    assert "= 217.20" in unaccounted_live(note.format("25.5"))[0]
    assert unaccounted_live(note.replace("0 updated", "5 updated").format("25.5")) == []
    # forgotten records recalled again come back into memory: 100 - 60 + 10 = 50 live
    back = (
        "Memory activity: LUFY: 100 records written (2.0 per episode-session), 12 updated, "
        "60 deleted or retired, {} returned to memory over 10 episodes; 5.0 live per episode "
        "at the end"
    )
    assert unaccounted_live(back.format(10)) == []
    assert unaccounted_live(back.format(0))[0].startswith("5.0 live, (written - deleted + ret")


def md_cells(text: str) -> dict[tuple[str, str], str]:
    """(row, column label) -> the md cell's text."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    if len(rows) < 3:
        return {}
    split = [
        [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", r.strip()[1:-1])]
        for r in rows
    ]
    labels = split[0]
    return {(r[0], labels[i]): c for r in split[2:] for i, c in enumerate(r) if i and c}


def first_number(text: str) -> tuple[float, int] | None:
    """The cell's leading value (ours) and its printed decimals."""
    m = re.match(r"\s*(-?\d+(?:\.(\d+))?)", text.replace(",", ""))
    return (float(m[1]), len(m[2] or "")) if m else None


@pytest.mark.parametrize("md", MD, ids=lambda p: p.stem)
def test_every_table_names_its_setting(md):
    header = md_header(md.read_text(encoding="utf-8"))
    missing = [k for k in FACTS if not header.get(k)]
    assert not missing, f"{md.name}: no {', '.join(missing)} line in the header"
    # a reader can check out the code a committed table names: no uncommitted changes in it
    assert "uncommitted" not in header.get("code", ""), f"{md.name}: {header['code']}"


@pytest.mark.parametrize("md", MD, ids=lambda p: p.stem)
def test_notes_agree_with_the_activity_the_table_computed(md):
    assert claims_against_activity(md.read_text(encoding="utf-8")) == [], md.name


@pytest.mark.parametrize("md", MD, ids=lambda p: p.stem)
def test_every_live_store_adds_up(md):
    assert unaccounted_live(md.read_text(encoding="utf-8")) == [], md.name


def families_that_cannot_reject(md: Path) -> list[str]:
    """Recompute each Holm family from the csv (tests with a p_holm; per column when the notes
    say so): the families whose best case, every test at its floor 2^(1-n), rejects nothing."""
    path = md.with_suffix(".csv")
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        tested = [r for r in csv.DictReader(f) if r.get("p_holm") and r.get("episodes")]
    per_column = "within each column" in md.read_text(encoding="utf-8")
    groups: dict[str, list[float]] = {}
    for r in tested:
        floor = max(2.0 ** (1 - int(r["episodes"])), 2 / 2001)
        groups.setdefault(r["column"] if per_column else "", []).append(floor)
    return [
        f"{name or 'the table'}: m = {len(f)}, best p_holm {len(f) * min(f):.3g}"
        for name, f in groups.items()
        if len(f) * min(f) > 0.05
    ]


@pytest.mark.parametrize("md", MD, ids=lambda p: p.stem)
def test_a_family_that_cannot_reject_says_so(md):
    blocked = families_that_cannot_reject(md)
    said = md.read_text(encoding="utf-8").count("CAN BE MARKED")
    assert said >= len(blocked), f"{md.name}: families that cannot reject, unsaid: {blocked}"


@pytest.mark.parametrize("md", MD, ids=lambda p: p.stem)
def test_md_tex_csv_and_figures_come_from_one_build(md):
    text = md.read_text(encoding="utf-8")
    header = md_header(text)
    tex = md.with_suffix(".tex")
    if tex.exists():
        got = tex_header(tex.read_text(encoding="utf-8"))
        for key in ("code", "runs", "data", "episodes"):
            assert got.get(key) == header.get(key), f"{tex.name}: {key} differs from the md"
    compared = 0
    cells = md_cells(text)
    with md.with_suffix(".csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["ours"] in ("", "n/a"):
                continue
            labels = (f"{row['column']} / {row['metric']}", row["column"], row["metric"])
            cell = next(
                (cells[row["row"], lab] for lab in labels if (row["row"], lab) in cells), None
            )
            where = f"{md.name}: {row['row']} / {row['column']} / {row['metric']}"
            assert cell is not None, f"{where}: in the csv, not in the md"
            shown = first_number(cell)
            if shown is None:  # a label cell (a dataset's setting): compared as text
                assert cell.startswith(row["ours"]), f"{where}: csv {row['ours']} vs md {cell}"
                continue
            value, decimals = shown
            unit = 10.0**-decimals
            sd, seeds = row.get("seed_sd") or "", row.get("seeds") or ""
            if sd not in ("", "n/a") and seeds not in ("", "n/a") and float(sd) > 0:
                # a mean over seeds is printed to the power of ten of its standard error, so
                # "70" may be a mean rounded to tens (cell.noise_digits): the unit is that power
                se = float(sd) / math.sqrt(float(seeds))
                unit = max(unit, 10.0 ** math.ceil(math.log10(se)))
            assert abs(float(row["ours"]) - value) <= 0.5001 * unit + 1e-9, (
                f"{where}: csv {row['ours']} vs md {cell}"
            )
            compared += 1
    assert compared or not cells, f"{md.name}: no csv value found in the md table"


FIGURES = sorted(TABLES.glob("*.png"))


@pytest.mark.parametrize("png", FIGURES, ids=lambda p: p.stem)
def test_figures_carry_the_code_and_runs_of_their_table(png):
    from PIL import Image

    facts = Image.open(png).info.get("Description", "")
    assert facts, f"{png.name}: no code/runs metadata (regenerate it with recallbench-table)"
    got = dict(part.split(": ", 1) for part in facts.split("; ") if ": " in part)
    # a figure drawn under its own file name (``figure: {file: ...}``) has no md of its stem
    own = [md for md in MD if md.stem == png.stem]
    same = [
        md
        for md in own or MD
        if all(md_header(md.read_text(encoding="utf-8")).get(k) == v for k, v in got.items())
    ]
    assert same, f"{png.name}: {facts} matches no table's code and runs"
    assert png.with_suffix(".pdf").exists(), f"{png.name}: no pdf beside"


UNCOMMITTED = "## Results with a target but no committed table (and why)"


def test_every_paper_result_is_committed_or_its_readme_says_why():
    """A target whose table is not under results/tables/ is named, with its reason, in its
    paper README's section (or its experiment's ``reproduce.uncommitted``); a target named there
    has no committed table (no stale reason)."""
    from recallbench.cli.reproduce import PAPER_TABLE, block_of, targets
    from recallbench.cli.targets import read_experiment

    papers = TABLES.parents[1] / "src" / "recallbench" / "papers"
    for t in targets().values():  # a paper's table or figure (not an alias, an attribution)
        if t.alias or not PAPER_TABLE.match(t.experiment):
            continue
        target = t.name
        kind, paper, n = re.fullmatch(r"reproduce-(table|figure)-([a-z]+)-(\w+)", target).groups()
        committed = any((TABLES / f"{paper}_{kind}{n}.{ext}").exists() for ext in ("md", "png"))
        readme = (papers / paper / "README.md").read_text(encoding="utf-8")
        section = (
            readme.split(UNCOMMITTED, 1)[1].split("\n## ", 1)[0] if UNCOMMITTED in readme else ""
        )
        named = re.search(rf"`(?:make )?{target}`", section) is not None
        named = named or bool(block_of(read_experiment(t.experiment)).get("uncommitted"))
        assert committed != named, (
            f"{target}: committed under results/tables/ and listed as not committed in {paper}'s "
            "README"
            if committed
            else f"{target}: no committed table and no reason in {paper}'s README ({UNCOMMITTED})"
        )
