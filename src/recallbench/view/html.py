"""Render runs and comparisons as ONE self-contained HTML file (Jinja2, autoescaped).

The style and the script (sorting, filtering, run tabs, anchors that open their folds) are
inlined from ``templates/``; the page loads nothing else, so it opens offline from disk or as an
attachment. Without JavaScript every section is still there, unfolded by clicking.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from recallbench import __version__
from recallbench.analysis.frames import override_columns
from recallbench.metrics.summary import Summary
from recallbench.run.record import describe_problems
from recallbench.run.sweep import SWEEP_FILE, sweep_lines
from recallbench.view.compare import Comparison
from recallbench.view.load import RunFiles
from recallbench.view.timeline import Entry, EpisodeView, episode_views

TEMPLATES = Path(__file__).resolve().parent / "templates"
DASH = "—"


def num(value: Any) -> str:
    """A number for a table: 4 significant digits; None as a dash."""
    if value is None or value == "":
        return DASH
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return str(value) if isinstance(value, int) else f"{value:.4g}"


def money(value: Any) -> str:
    return "unknown" if not isinstance(value, int | float) else f"${value:.4f}"


def seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return DASH
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def stage_seconds(value: Any) -> str:
    """A stage's summed seconds; a stage no record timed is "not timed", never 0.0 ms."""
    return "not timed" if value is None else seconds(value)


def anchor(ident: str, prefix: str) -> str:
    """A stable HTML id for a record id (ids hold ``/`` and spaces; a hash keeps them apart)."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", ident)[-60:]
    return f"{prefix}-{slug}-{hashlib.sha1(ident.encode()).hexdigest()[:6]}"


def _delta(a: Any, b: Any) -> float | None:
    ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    return b - a if ok else None


def _filters() -> dict[str, Any]:
    def short(value: object, n: int = 160) -> str:
        text = str(value)
        return text if len(text) <= n else text[: n - 1] + "…"

    def delta_class(a: Any, b: Any) -> str:
        d = _delta(a, b)
        return "" if d is None or d == 0 else ("pos" if d > 0 else "neg")

    return {
        "num": num,
        "money": money,
        "seconds": seconds,
        "stage_seconds": stage_seconds,
        "anchor": anchor,
        "short": short,
        "interval": lambda ci: f"[{num(ci[0])}, {num(ci[1])}]" if ci else DASH,
        "pretty": lambda v: json.dumps(v, indent=2, ensure_ascii=False, sort_keys=True),
        "compact": lambda v: (
            short(json.dumps(v, ensure_ascii=False, sort_keys=True), 240) if v else ""
        ),
        "plain": lambda v: "" if v is None else v,
        "signed": lambda v: f"{v:+.4g}" if isinstance(v, int | float) else DASH,
        "delta": lambda a, b: DASH if (d := _delta(a, b)) is None else f"{d:+.4g}",
        "delta_class": delta_class,
    }


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["j2", "html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(_filters())
    env.globals.update(run_setting=run_setting, session_keys=session_keys)
    return env


def run_setting(run: RunFiles) -> list[tuple[str, str]]:
    """What the run was: its choices, data, models, overrides and provenance."""
    cfg, rec = run.info.config, run.record
    gen, ds = cfg.generator, cfg.dataset
    started, finished = rec.get("started_unix"), rec.get("finished_unix")
    rows = [
        ("memory", run.info.choice("memory") or DASH),
        (
            "dataset",
            f"{ds.name or DASH} {json.dumps(ds.options)} @ {ds.data_dir or DASH}",
        ),
        ("generator", f"{gen.backend or DASH}:{gen.model or DASH}"),
        ("embedder", cfg.embedder.kind or DASH),
        ("protocol", run.info.choice("protocol") or DASH),
        ("judge", run.info.choice("judge") or "none"),
        ("episodes", str(rec.get("n_episodes", DASH))),
        ("overrides", " ".join(run.info.overrides) or "none"),
        ("git", f"{rec.get('git_sha', DASH)}{' (dirty)' if rec.get('git_dirty') else ''}"),
        ("attempt", f"{rec.get('attempt', 1)} on {rec.get('host', DASH)}"),
        ("wall time", seconds(finished - started) if started and finished else DASH),
        ("folder", str(run.info.path)),
    ]
    if rec.get("error"):
        rows.append(("error", str(rec["error"])))
    return rows


def session_keys(summary: Summary) -> list[str]:
    keys = {
        s
        for e in summary.get("metrics", {}).values()
        if isinstance(e, dict)
        for s in e.get("per_session") or {}
    }
    return sorted(keys, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s))


def _entries(episodes: list[EpisodeView]) -> list[Entry]:
    out = []
    for ep in episodes:
        for s in ep.sessions:
            out += [e for t in s.turns for e in t.entries] + s.entries
    return out


def problems(run: RunFiles, entries: list[Entry], prefix: str) -> list[tuple[str, str | None]]:
    """Every failure the run recorded: (text, anchor of the item or None)."""
    rec = run.record
    out: list[tuple[str, str | None]] = []
    if rec.get("error"):
        out.append((f"run {rec.get('status')}: {rec['error']}", None))
    if rec.get("health"):
        out.append((f"run degraded: {describe_problems(rec['health'])}", None))
    if n := run.summary.get("failed_calls_not_scored"):
        out.append((f"{n} failed calls left out of the scores", None))
    for task, replies in (run.usage.get("unparsed_samples") or {}).items():
        out += [(f"unparsed reply of {task}: {str(r)[:300]!r}", None) for r in replies]
    for e in entries:
        link = anchor(e.pred.pred_id, prefix + "p")
        out += [(f"{e.pred.pred_id}: {text}", link) for text in e.problems]
    return out


def _timing(run: RunFiles) -> dict[str, Any]:
    """Seconds per stage summed over the records that timed it (None: no record did)."""
    sums: dict[str, float | None] = {"observe_s": None, "recall_s": None, "generate_s": None}
    for p in run.predictions:
        for key, total in sums.items():
            if isinstance(v := p.meta.get(key), int | float):
                sums[key] = (total or 0.0) + float(v)
    started, finished = run.record.get("started_unix"), run.record.get("finished_unix")
    wall = finished - started if started and finished else None
    preds = sum(p.kind != "timing" for p in run.predictions)
    return {**sums, "preds": preds, "wall_s": wall}


def render_run_body(env: Environment, run: RunFiles, prefix: str) -> Markup:
    episodes = episode_views(run)
    entries = _entries(episodes)
    return Markup(
        env.get_template("run.html.j2").render(
            run=run,
            prefix=prefix,
            episodes=episodes,
            items=entries,
            metrics=run.item_metrics(),
            problems=problems(run, entries, prefix),
            timing=_timing(run),
        )
    )


def sweep_rows(runs: list[RunFiles]) -> dict[str, Any]:
    """The runs table of a sweep: the overridden keys that vary (those that do not are one
    line), whole-run metrics, calls and cost; runs named by job when they share tag and stamp."""
    columns = override_columns([r.info for r in runs])
    keys = list(dict.fromkeys(k for values in columns.values() for k in values))
    varies = [k for k in keys if len({repr(columns[r.info.key].get(k)) for r in runs}) > 1]
    same = {k: columns[runs[0].info.key].get(k) for k in keys if k not in varies}
    metrics = list(dict.fromkeys(m for r in runs for m in r.summary.get("metrics", {})))
    one_sweep = len({r.info.key[:2] for r in runs}) == 1
    rows = []
    for run in runs:
        totals = run.usage.get("totals") or {}
        entries = run.summary.get("metrics", {}).items()
        rows.append(
            {
                "label": run.info.job if one_sweep else run.label,
                "short": run.info.job if one_sweep else f"{run.info.tag}/{run.info.job}",
                "status": run.info.status,
                "overrides": columns[run.info.key],
                "metrics": {m: e.get("value") for m, e in entries if isinstance(e, dict)},
                "calls": totals.get("calls", 0),
                "cost": totals.get("cost_usd"),
            }
        )
    return {"columns": varies, "same": same, "metrics": metrics, "rows": rows}


def _page(
    env: Environment,
    title: str,
    source: str,
    bodies: list[Markup],
    sweep: dict[str, Any] | None = None,
) -> str:
    return env.get_template("report.html.j2").render(
        title=title,
        source=source,
        version=__version__,
        sweep=sweep,
        bodies=bodies,
        css=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
        js=Markup((TEMPLATES / "report.js").read_text(encoding="utf-8")),
    )


def render_runs(runs: list[RunFiles], source: str) -> str:
    """The report of one run, or of a sweep (a runs table and, when the folder has a
    ``sweep.json``, the sweep's state as ``recallbench status`` prints it; then one section per
    run)."""
    env = environment()
    bodies = [render_run_body(env, run, f"r{i}-") for i, run in enumerate(runs, 1)]
    title = runs[0].label if len(runs) == 1 else f"{len(runs)} runs under {source}"
    sweep = sweep_rows(runs) if len(runs) > 1 else None
    if sweep is not None:
        state = Path(source) / SWEEP_FILE
        sweep["state"] = sweep_lines(Path(source)) if state.is_file() else []
    return _page(env, title, source, bodies, sweep)


def render_comparison(cmp: Comparison) -> str:
    """The report comparing two runs item by item."""
    env = environment()
    a, b = dict(run_setting(cmp.a)), dict(run_setting(cmp.b))
    rows = [(k, a.get(k, DASH), b.get(k, DASH)) for k in dict.fromkeys([*a, *b])]
    body = Markup(env.get_template("compare.html.j2").render(cmp=cmp, setting_rows=rows))
    title = f"{cmp.a.info.job} vs {cmp.b.info.job}"
    return _page(env, title, f"A {cmp.a.info.path} · B {cmp.b.info.path}", [body])
