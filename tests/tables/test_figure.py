"""Figures from table cells (``tables.figure``): what is drawn where, the paper's values beside
ours, intervals as bands and bars, captions, files, and every experiment's ``figure:`` block."""

from __future__ import annotations

import pytest
from matplotlib.collections import PolyCollection

from recallbench import CONF_DIR
from recallbench.tables import TableContext, load_spec, reproduce
from recallbench.tables.cell import Cell
from recallbench.tables.figure import (
    FigureSpec,
    caption,
    draw,
    figure_data,
    parse_figure,
    render_figure,
)

HEADER = {
    "generator": "extractive:extractive",
    "judge": "none",
    "embedder": "minilm",
    "data": "msc @ /data {'split': 'test'}",
    "code": "0123456789ab",
    "runs": "t/1",
}


def sweep() -> list[Cell]:
    """A budget sweep: BERTScore on MSC with intervals and the paper's values, and a metric
    (Acc) we could not compute anywhere."""
    cells = []
    for budget, ours, paper in (("10", 0.70, 0.75), ("40", 0.72, 0.77), ("160", 0.71, None)):
        cells.append(
            Cell(
                budget, "MSC", "BERTScore", ours, paper, 5, ci_low=ours - 0.02, ci_high=ours + 0.01
            )
        )
        cells.append(Cell(budget, "MSC", "Acc", None, None, 0))
    return cells


def test_a_line_figure_draws_ours_with_its_band_and_the_papers_values_dashed():
    spec = FigureSpec(kind="line", x="rows", series="columns", panels="metrics", x_label="budget")
    fig = draw(sweep(), spec, "Fig. 5", caption(HEADER))
    (ax,) = fig.axes  # the Acc panel has no value: dropped
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == (
        "budget",
        "BERTScore",
        "BERTScore",
    )
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["MSC"].get_xdata()) == [10.0, 40.0, 160.0]
    assert list(lines["MSC"].get_ydata()) == [0.70, 0.72, 0.71]
    paper = lines["MSC (paper)"]
    assert list(paper.get_xdata()) == [10.0, 40.0] and list(paper.get_ydata()) == [0.75, 0.77]
    assert paper.get_linestyle() == "--" and paper.get_markerfacecolor() == "none"
    assert paper.get_color() == lines["MSC"].get_color()
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ys = band.get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(0.68) and max(ys) == pytest.approx(0.73)
    text = "\n".join(t.get_text() for t in fig.texts)
    for fact in ("generator: extractive:extractive", "judge: none", "embedder: minilm"):
        assert fact in text
    assert "data: msc @ /data" in text and "code: 0123456789ab" in text
    assert "runs:" not in text  # provenance facts only: the runs are in the files' metadata


def test_categories_bars_with_error_bars_and_paper_diamonds():
    cells = [
        Cell("full", "MSC", "BERTScore", 0.3, 0.772, 4, ci_low=0.2, ci_high=0.35),
        Cell("w/o decay", "MSC", "BERTScore", 0.25, 0.762, 4, ci_low=0.2, ci_high=0.3),
        Cell("full", "PC", "BERTScore", None, 0.812),
    ]
    spec = FigureSpec(kind="bar", x="rows", series="columns", panels="metrics", x_label="variant")
    (ax,) = draw(cells, spec, "Table VIII").axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["full", "w/o decay"]
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx([0.25, 0.3])
    (caps,) = [c for c in ax.containers if getattr(c, "errorbar", None)]
    segments = caps.errorbar.lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segments] == [
        pytest.approx((0.2, 0.35)),
        pytest.approx((0.2, 0.3)),
    ]
    diamonds = {c.get_label(): c for c in ax.collections if c.get_label().endswith("(paper)")}
    assert set(diamonds) == {"MSC (paper)", "PC (paper)"}  # the paper's PC value without ours
    assert sorted(diamonds["MSC (paper)"].get_offsets()[:, 1]) == pytest.approx([0.762, 0.772])


def test_a_scatter_figure_is_a_curve_of_two_metrics_labelled_by_row():
    cells = [
        Cell(tau, "MSC", metric, value, None, ci_low=value - 0.01, ci_high=value + 0.02)
        for tau, p, r in (("0.4", 0.3, 0.2), ("0.5", 0.3, 0.2), ("0.8", 0.6, 0.05))
        for metric, value in (("Precision", p), ("Recall", r))
    ]
    spec = parse_figure(
        {"kind": "scatter", "series": "columns", "x_metric": "Recall", "y_metric": "Precision"}
    )
    (ax,) = draw(cells, spec, "Fig. 3").axes
    line = next(x for x in ax.get_lines() if x.get_label() == "MSC")
    assert list(line.get_xdata()) == [0.2, 0.2, 0.05] and list(line.get_ydata()) == [0.3, 0.3, 0.6]
    assert [t.get_text() for t in ax.texts] == ["0.4/0.5", "0.8"]  # coinciding points joined
    (bars,) = [c for c in ax.containers if c.has_xerr and c.has_yerr]
    xs = [tuple(seg[:, 0]) for seg in bars.lines[2][0].get_segments()]
    assert xs[0] == pytest.approx((0.19, 0.22))  # Recall 0.2, interval [0.19, 0.22]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("Recall", "Precision")


def test_stacked_bars_add_up_per_category():
    cells = [
        Cell("vs A", "MSC", m, v, None) for m, v in (("Win", 60.0), ("Tie", 30.0), ("Loss", 10.0))
    ]
    spec = FigureSpec(
        kind="stacked", x="rows", series="metrics", panels="columns", x_label="vs", y_label="%"
    )
    (ax,) = draw(cells, spec, "Fig. 5").axes
    lefts = [(p.get_x(), p.get_width()) for p in ax.patches]
    assert lefts == [(0.0, 60.0), (60.0, 30.0), (90.0, 10.0)]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("%", "vs")


def test_a_figure_without_values_says_so_and_panels_are_grouped():
    spec = FigureSpec(panels="columns")
    assert figure_data([Cell("a", "MSC", "F1", None, None)], spec) == {}
    (ax,) = draw([Cell("a", "MSC", "F1", None, None)], spec, "t").axes
    assert [t.get_text() for t in ax.texts] == ["n/a: no values to plot"]


def test_render_writes_png_and_pdf(tmp_path):
    spec = FigureSpec(kind="line", series="columns", panels="metrics")
    paths = render_figure(
        sweep(), spec, stem="p_figure5", title="t", header=HEADER, out_dir=tmp_path
    )
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths["pdf"].read_bytes()[:5] == b"%PDF-"
    from PIL import Image

    # the table's code and runs travel in the image's metadata (tests/tables/test_committed_tables)
    assert Image.open(paths["png"]).info["Description"] == "code: 0123456789ab; runs: t/1"
    assert b"code: 0123456789ab; runs: t/1" in paths["pdf"].read_bytes()
    named = render_figure(
        sweep(),
        FigureSpec(file="other", title="Fig. 6: its own title"),
        stem="x",
        title="Table VIII",
        header={},
        out_dir=tmp_path,
    )
    assert named["png"].name == "other.png"


@pytest.mark.parametrize(
    "value, message",
    [
        ("line", "expected a mapping"),
        ({"kind": "pie"}, "kind: expected one of"),
        ({"series": "sessions"}, "series: expected one of"),
        ({"x": "rows", "series": "rows"}, "must name different axes"),
        ({"kind": "scatter"}, "needs x_metric and y_metric"),
        ({"colour": "red"}, "unknown keys"),
    ],
)
def test_bad_figure_blocks_say_what_is_wrong(value, message):
    with pytest.raises(ValueError, match=message):
        parse_figure(value)


FIGURES = sorted(
    p.stem
    for p in (CONF_DIR / "experiment").glob("*.yaml")
    if "figure" in ((load_spec(p.stem).options or {}) if "table:" in p.read_text() else {})
)


def test_every_paper_figure_of_the_project_is_drawn():
    assert set(FIGURES) >= {
        "lufy_figure11",
        "theanine_figure5",
        "timerag_figure3",
        "timerag_figure4",
        "timerag_figure5",
        "timerag_table8",  # Fig. 6
    }


@pytest.mark.parametrize("experiment", FIGURES)
def test_every_figure_block_parses(experiment):
    spec = load_spec(experiment)
    parse_figure(spec.options["figure"])


def test_the_table_command_writes_the_figure_beside_the_table(tmp_path, make_run):
    for budget, value in ((10, 0.5), (40, 0.6)):
        metrics = {"bertscore": {"value": value, "n": 3, "ci_low": value - 0.1, "ci_high": value}}
        make_run(
            tmp_path,
            "timerag_figure5",
            f"b{budget}",
            {"memory": "timerag"},
            metrics,
            config={"memory": {"budget": budget}, "dataset": {"name": "msc"}},
        )
    paths = reproduce(load_spec("timerag_figure5"), TableContext(results_dir=tmp_path))
    assert {paths["png"].name, paths["pdf"].name} == {"timerag_figure5.png", "timerag_figure5.pdf"}
    assert paths["png"].parent == paths["md"].parent
    assert paths["png"].read_bytes()[1:4] == b"PNG"
