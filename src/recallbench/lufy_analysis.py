"""LUFY tables from run folders and conversation logs (Sumida et al., arXiv 2409.12524).

Each LUFY experiment (``conf/experiment/lufy_*.yaml``) has a ``table:`` block with a ``kind``:

- ``summary`` (Tables 3, 11, 13, 16-18, App. D): values from the runs' ``summary.json``. Rows
  select runs by ``memory`` (config choice), ``logs`` (the LUFY system whose conversation logs
  were replayed, ``dataset.options.system``) or any dotted config path (``memory.threshold``);
  columns pick ``session: <s>`` (``per_session``), ``qsession: "<s>/<q>"``
  (``per_question_session``) or ``value: session_mean|value``; metrics give label/scale/digits.
- ``agreement`` (Tables 12, 14): system-human agreement from the runs' memory snapshots and the
  annotators' labels (``agreement``).
- ``topk`` (Table 15): rank of the answering memory among the store (``topk``).
- ``sentiment`` (Table 10) and ``rating`` (Table 8): user experience from the logs alone
  (``recallbench.lufy_ux``).

With several metrics the column label is ``"<metric> <column>"`` (tables.render keys cells by
row and column). A cell without a matching run is ``n/a``, never invented. The paper's numbers
come from ``references/lufy.yaml`` (or ``lufy_results.yaml`` before the two are merged).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recallbench.analysis import RunInfo, find_runs, latest_per_job
from recallbench.records import Episode, MemoryItem
from recallbench.tables import Cell, load_reference

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
PAPER = "lufy"
ALIASES = {"logs": "dataset.options.system"}
# Keys of rows and columns that place a cell rather than select runs.
CONTROL = frozenset({"label", "session", "qsession", "value", "random", "annotators"})


# -- references and specs -----------------------------------------------------------------


def lufy_reference(table_id: str) -> dict[str, Any]:
    """Return the paper's ``table<id>`` entry (``lufy.yaml`` first, then ``lufy_results.yaml``)."""
    key = f"table{table_id}"
    for name in ("lufy", "lufy_results"):
        try:
            found = load_reference(name).get(key)
        except KeyError:
            continue
        if found:
            return found
    return {}


def paper_value(reference: dict, row: str, column: str, metric: str) -> Any:
    """Return the paper's value of (row, column, metric), or None when it reports none."""
    return reference.get("values", {}).get(row, {}).get(column, {}).get(metric)


def load_spec(experiment: str, conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """Read the ``table:`` block (and ``tag``) of ``conf/experiment/<experiment>.yaml``."""
    path = conf_dir / "experiment" / f"{experiment}.yaml"
    if not path.exists():
        options = sorted(p.stem for p in path.parent.glob("lufy*.yaml"))
        raise FileNotFoundError(f"{path} not found; LUFY experiments: {', '.join(options)}")
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    if "table" not in cfg:
        raise KeyError(f"{path}: no 'table:' block")
    spec = dict(cfg["table"])
    spec.setdefault("tag", cfg.get("tag", experiment))
    spec.setdefault("kind", "summary")
    return spec


# -- runs ---------------------------------------------------------------------------------


def table_runs(results_dir: str | Path, tag: str) -> list[RunInfo]:
    """Return the newest finished run of every job under ``results_dir/runs/<tag>``."""
    return list(latest_per_job(find_runs(results_dir, tag)).values())


def run_value(run: RunInfo, key: str) -> Any:
    """Return a run's config-group choice (``memory``) or dotted config value (``logs``)."""
    key = ALIASES.get(key, key)
    if "." not in key:
        return run.choice(key)
    node: Any = run.config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def select(runs: Iterable[RunInfo], selector: dict[str, Any]) -> list[RunInfo]:
    """Return the runs matching every selecting key of ``selector`` (a value or a list)."""
    keys = [k for k in selector if k not in CONTROL]
    return [r for r in runs if all(run_value(r, k) in _as_list(selector[k]) for k in keys)]


def summary(run: RunInfo) -> dict[str, Any]:
    """Return the run's ``summary.json``."""
    return json.loads((run.path / "summary.json").read_text(encoding="utf-8"))


def safe_name(episode_id: str) -> str:
    """Return the file stem the runner gives an episode (``runner._safe``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in episode_id)


def snapshots(run: RunInfo, episode_ids: Iterable[str]) -> dict[str, dict[int, list[MemoryItem]]]:
    """Return {episode_id: {after_session: items}} from the run's ``memory/<episode>.jsonl``."""
    out: dict[str, dict[int, list[MemoryItem]]] = {}
    for episode_id in episode_ids:
        path = run.path / "memory" / f"{safe_name(episode_id)}.jsonl"
        if not path.exists():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        out[episode_id] = {
            int(r["after_session"]): [MemoryItem.from_dict(i) for i in r["items"]] for r in rows
        }
    return out


@lru_cache(maxsize=16)
def _load_cached(name: str, data_dir: str, options: str) -> tuple[Episode, ...]:
    from recallbench.datasets import load

    return tuple(load(name, data_dir, **json.loads(options)))


def run_episodes(run: RunInfo) -> dict[str, Episode]:
    """Load the episodes a run replayed (its dataset config), keyed by episode id."""
    ds = run.config.get("dataset") or {}
    options = json.dumps(ds.get("options") or {}, sort_keys=True)
    return {e.episode_id: e for e in _load_cached(ds["name"], str(ds["data_dir"]), options)}


# -- summary tables (3, 11, 13, 16-18, D) --------------------------------------------------


def _summary_value(entry: dict, column: dict) -> tuple[float, int] | None:
    if "session" in column:
        sub = (entry.get("per_session") or {}).get(str(column["session"]))
        return None if sub is None else (sub["value"], sub["n"])
    if "qsession" in column:
        sub = (entry.get("per_question_session") or {}).get(str(column["qsession"]))
        return None if sub is None else (sub["value"], sub["n"])
    how = column.get("value", "value")
    return (entry[how], entry.get("n", 0)) if how in entry else None


def column_label(spec: dict, metric: str, column: dict) -> str:
    """Return the rendered column label: ``"<metric label> <column>"`` when several metrics."""
    if len(spec["metrics"]) == 1:
        return str(column["label"])
    return f"{spec['metrics'][metric].get('label', metric)} {column['label']}"


def summary_cells(spec: dict, runs: Sequence[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the cells of a ``summary`` table and the runs used."""
    reference = lufy_reference(str(spec["id"]))
    cells, used = [], {}
    for metric, mspec in spec["metrics"].items():
        for row in spec["rows"]:
            matched = select(runs, row)
            used.update({r.path: r for r in matched})
            for column in spec["columns"]:
                found = []
                for run in select(matched, column):
                    entry = summary(run).get("metrics", {}).get(metric)
                    if entry is not None and (v := _summary_value(entry, column)) is not None:
                        found.append(v)
                n = sum(v[1] for v in found)
                ours = None
                if found:
                    weights = [v[1] or 1 for v in found]
                    ours = sum(v[0] * w for v, w in zip(found, weights, strict=True)) / sum(weights)
                    ours *= mspec.get("scale", 1)
                paper = paper_value(reference, row["label"], column["label"], metric)
                label = column_label(spec, metric, column)
                cells.append(Cell(row["label"], label, mspec.get("label", metric), ours, paper,
                                  n or None, mspec.get("digits", 1)))  # fmt: skip
    return cells, list(used.values())


# -- Table 12 / 14: system-human agreement -------------------------------------------------

Labels = dict[str, dict[str, int]]  # user turn id -> {annotator: 0/1}


def session_labels(episode: Episode) -> dict[int, Labels]:
    """Return {session index: {user turn id: {annotator: label}}} of the labelled turns."""
    out: dict[int, Labels] = {}
    for session in episode.sessions:
        out[session.index] = {
            t.turn_id: {str(a): int(v) for a, v in t.labels["importance"].items()}
            for t in session.turns
            if t.labels.get("importance")
        }
    return out


def selected_turns(items_by_session: dict[int, list[MemoryItem]], labels: dict[int, Labels]):
    """Return {session: user turn ids the system kept} for the pairs written in that session.

    The system's binary label of a session's utterance is "retained right after that session's
    forgetting": its utterance pair is in the snapshot with ``attrs.retained`` true.
    """
    out: dict[int, set[str]] = {}
    for index, items in items_by_session.items():
        own = labels.get(index, {})
        out[index] = {
            i.source_ids[0]
            for i in items
            if i.kind == "utterance_pair" and i.source_ids and i.source_ids[0] in own
            and i.attrs.get("retained", True)
        }  # fmt: skip
    return out


def _annotators(records: Sequence[tuple[Labels, set[str]]]) -> list[str]:
    return sorted({a for labels, _ in records for lab in labels.values() for a in lab}, key=str)


def system_agreement(records: Sequence[tuple[Labels, set[str]]]) -> tuple[float, int]:
    """Mean over annotators of the share of system-kept turns that annotator marked important.

    ``records``: (labels of one episode-session, turn ids the system kept there); hits and
    counts are pooled over records per annotator. Returns (agreement, kept turns).
    """
    shares, kept = [], sum(len(sel) for _, sel in records)
    for a in _annotators(records):
        pairs = [labels[t][a] for labels, sel in records for t in sel if a in labels.get(t, {})]
        if pairs:
            shares.append(sum(pairs) / len(pairs))
    return (sum(shares) / len(shares) if shares else 0.0), kept


def random_agreement(records: Sequence[tuple[Labels, set[str]]]) -> tuple[float, int]:
    """Expected ``system_agreement`` of a uniform random choice of as many turns per record."""
    shares = []
    for a in _annotators(records):
        expected = chosen = 0.0
        for labels, sel in records:
            mine = [lab[a] for lab in labels.values() if a in lab]
            k = sum(1 for t in sel if a in labels.get(t, {}))
            if mine and k:
                expected += k * sum(mine) / len(mine)
                chosen += k
        if chosen:
            shares.append(expected / chosen)
    return (sum(shares) / len(shares) if shares else 0.0), sum(len(s) for _, s in records)


def annotator_agreement(label_maps: Sequence[Labels]) -> tuple[float, int]:
    """Mean over ordered annotator pairs (a, b) of P(b marks important | a marks important)."""
    annotators = sorted({a for labels in label_maps for lab in labels.values() for a in lab})
    shares, n = [], 0
    for a in annotators:
        for b in annotators:
            if a == b:
                continue
            both = [lab[b] for labels in label_maps for lab in labels.values()
                    if lab.get(a) == 1 and b in lab]  # fmt: skip
            if both:
                shares.append(sum(both) / len(both))
                n += len(both)
    return (sum(shares) / len(shares) if shares else 0.0), n


def agreement_records(run: RunInfo) -> dict[int, list[tuple[Labels, set[str]]]]:
    """Return {session: [(labels, kept turn ids) per episode]} of one run."""
    episodes = run_episodes(run)
    out: dict[int, list[tuple[Labels, set[str]]]] = {}
    for episode_id, by_session in snapshots(run, episodes).items():
        labels = session_labels(episodes[episode_id])
        for index, kept in selected_turns(by_session, labels).items():
            out.setdefault(index, []).append((labels.get(index, {}), kept))
    return out


def agreement_cells(spec: dict, runs: Sequence[RunInfo]) -> tuple[list[Cell], list[RunInfo]]:
    """Return the cells of an ``agreement`` table (rows: systems, (Random), (Annotators))."""
    reference = lufy_reference(str(spec["id"]))
    scale, cells, used = spec.get("scale", 100), [], {}
    for row in spec["rows"]:
        matched = select(runs, row)
        used.update({r.path: r for r in matched})
        records: dict[int, list] = {}
        for run in matched:
            for index, recs in agreement_records(run).items():
                records.setdefault(index, []).extend(recs)
        fn: Callable = random_agreement if row.get("random") else system_agreement
        per_session = {}
        for column in spec["columns"]:
            if "session" not in column:
                continue
            recs = records.get(int(column["session"]), [])
            if row.get("annotators"):
                per_session[column["label"]] = annotator_agreement([lab for lab, _ in recs])
            else:
                per_session[column["label"]] = fn(recs) if recs else None
        for column in spec["columns"]:
            got = per_session.get(column["label"])
            if "session" not in column:  # Avg. over the sessions shown
                values = [v for v in per_session.values() if v is not None]
                got = (
                    (sum(v[0] for v in values) / len(values), sum(v[1] for v in values))
                    if values
                    else None
                )
            ours = None if got is None or not matched else got[0] * scale
            paper = paper_value(reference, row["label"], column["label"], "agreement")
            n = None if got is None else got[1]
            cells.append(Cell(row["label"], column["label"], "agreement", ours, paper, n, 1))
    return cells, list(used.values())


# -- Table 15: rank of the answering memory -------------------------------------------------

TOPK = 10
STORE_KINDS = ("utterance_pair", "summary")


def answering_memory(question: str, label: str, texts: Sequence[str], threshold: float = 0.5):
    """Return the index of the text that best covers ``label`` (None when none covers enough).

    Coverage is the lexical judge's (key words of the label answer found in the memory, numbers
    required); ties go to the earliest text (the first mention in the session).
    """
    from recallbench.judges.lexical import match

    best, best_cov = None, 0.0
    for i, text in enumerate(texts):
        m = match(question, label, text)
        if not m.numbers_missing and m.coverage >= threshold and m.coverage > best_cov:
            best, best_cov = i, m.coverage
    return best


def topk_ranks(run: RunInfo, embedder) -> list[int | None]:
    """Return, per question of the run, the 1-based cosine rank of its answering memory.

    The store is the run's snapshot right after the question's session (retained utterance
    pairs and summaries); the answering memory is searched among the utterance pairs written in
    that session (``answering_memory``). None: no memory covers the label answer (the paper
    dropped 15 multi-hop questions by hand; we drop those we cannot match automatically).
    """
    episodes = run_episodes(run)
    ranks: list[int | None] = []
    for episode_id, by_session in snapshots(run, episodes).items():
        episode = episodes[episode_id]
        own = {i: {t.turn_id for t in s.turns} for i, s in ((s.index, s) for s in episode.sessions)}
        for qa in episode.qa:
            store = [i for i in by_session.get(qa.after_session, [])
                     if i.kind in STORE_KINDS and i.attrs.get("retained", True)]  # fmt: skip
            pairs = [i for i in store if i.kind == "utterance_pair" and i.source_ids
                     and i.source_ids[0] in own.get(qa.after_session, set())]  # fmt: skip
            found = answering_memory(qa.question, " / ".join(qa.answers), [i.text for i in pairs])
            if found is None or not store:
                ranks.append(None)
                continue
            vectors = embedder.encode([i.text for i in store] + [qa.question])
            cosines = vectors[:-1] @ vectors[-1]
            target = store.index(pairs[found])
            ranks.append(1 + sum(1 for c in cosines if c > cosines[target]))
    return ranks


def topk_cells(spec: dict, ranks: Sequence[int | None]) -> tuple[list[Cell], list[str]]:
    """Return Table 15 cells (cumulative top-k ratios in %) and notes on the question counts."""
    reference = lufy_reference(str(spec["id"]))
    found = [r for r in ranks if r is not None]
    column = "Ratio (%)"
    cells = []
    for k in range(1, TOPK + 1):
        ours = 100 * sum(1 for r in found if r <= k) / len(found) if found else None
        row = f"Top {k}"
        cells.append(Cell(row, column, "ratio", ours, paper_value(reference, row, column, "ratio"),
                          len(found) or None, 1))  # fmt: skip
    row = f"(Not in Top {TOPK})"
    ours = 100 * sum(1 for r in found if r > TOPK) / len(found) if found else None
    paper = paper_value(reference, row, column, "ratio")
    cells.append(Cell(row, column, "ratio", ours, paper, len(found) or None, 1))
    notes = [f"questions: {len(ranks)}; answering memory found automatically: {len(found)}; "
             f"dropped (no memory covers the label answer): {len(ranks) - len(found)}"]  # fmt: skip
    return cells, notes


# -- App. D / Figure 11: threshold sweep ----------------------------------------------------


def plot_threshold(cells: Sequence[Cell], path: Path, title: str) -> Path:
    """Plot precision / recall / F1 (the ``Avg.`` column) against the threshold rows as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[float, float]]] = {}
    for cell in cells:
        if cell.ours is not None and cell.column.endswith("Avg."):
            series.setdefault(cell.metric, []).append((float(cell.row), float(cell.ours)))
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
    for metric, points in series.items():
        xs, ys = zip(*sorted(points), strict=True)
        ax.plot(xs, ys, marker="o", label=metric)
    ax.set_xlabel("cosine similarity threshold")
    ax.set_ylabel("%")
    ax.set_title(title, fontsize=9)
    if series:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "n/a: no finished runs", ha="center", transform=ax.transAxes)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
    return path


# -- reproduce -------------------------------------------------------------------------------


def reference_notes(table_id: str) -> list[str]:
    """Notes from the reference: the paper's significance marks and its own inconsistencies."""
    reference = lufy_reference(table_id)
    notes = []
    marks = reference.get("significant") or []
    if marks:
        cells = ", ".join(f"{r} {c}" for r, c in marks)
        notes.append(f"paper marks p < 0.05 (paired t-test, better than both others) at: {cells}")
    notes += [f"paper quirk: {q}" for q in reference.get("quirks") or []]
    return notes


def reproduce_from_runs(spec: dict, results_dir: str | Path, embedder=None) -> dict[str, Path]:
    """Render a ``summary``, ``agreement`` or ``topk`` LUFY table from its runs."""
    from recallbench.reproduce import header_for
    from recallbench.tables import render

    runs = table_runs(results_dir, spec["tag"])
    if not runs:
        raise FileNotFoundError(
            f"no finished runs under {results_dir}/runs/{spec['tag']}: run the sweep first"
        )
    notes: list[str] = []
    if spec["kind"] == "summary":
        cells, used = summary_cells(spec, runs)
    elif spec["kind"] == "agreement":
        cells, used = agreement_cells(spec, runs)
    elif spec["kind"] == "topk":
        used = select(runs, spec.get("runs") or {})
        if embedder is None:
            from recallbench.embed import build_embedder

            embedder = build_embedder(used[0].config["embedder"]) if used else None
        ranks = [r for run in used for r in topk_ranks(run, embedder)]
        cells, notes = topk_cells(spec, ranks)
    else:
        raise ValueError(f"table kind {spec['kind']!r} does not read runs")
    header = header_for(used or runs)
    header.update(spec.get("notes") or {})
    paths = render(cells, paper=PAPER, table=spec["id"], title=spec.get("title", spec["id"]),
                   header=header, out_dir=Path(results_dir) / "tables",
                   notes=notes + reference_notes(str(spec["id"])))  # fmt: skip
    if spec.get("figure"):
        figure = Path(results_dir) / "figures" / f"{spec['figure']}.png"
        paths["png"] = plot_threshold(cells, figure, spec.get("title", spec["id"]))
    return paths
