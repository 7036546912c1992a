"""LUFY user-experience tables from the conversation logs alone (no memory method involved).

- Table 10, sentiment of the user utterances: each utterance is labelled +1 / 0 / -1 with VADER
  (``vaderSentiment``: compound >= 0.05 positive, <= -0.05 negative, else neutral, the VADER
  authors' thresholds). Deviation: the paper used fine-tuned RoBERTa classifiers (DistilRoBERTa
  on financial news, TimeLMs on TweetEval), which do not ship offline.
- Table 8, user-experience rating: each session's script is rated 1-5 with the LUFY Fig. 6
  prompt through the ``llm`` judge (paper: GPT-4o, "averaged over 30 ratings"; ours:
  ``rating_samples`` per session). Without an LLM (extractive backend) every cell is n/a.

Cells pool every value of a session over the users (utterances for Table 10, ratings for Table
8); ``Avg.`` pools sessions 2-4 (S1 is the shared Day-1 session, in parentheses in the paper).
Significance as in the paper: a paired t-test (``metrics.stats.paired_ttest``) of the per-user
means of the compared system against each other system, per session and for the average.

Builders (``table.builder``, ``runs: null``: the logs under DATA_DIR): ``sentiment_table``
(Table 10) and ``rating_table`` (Table 8; the judge comes from the table command, its
``rating_samples`` / ``rating_temperature`` from the composed judge config). Options: ``metric``
(the cells' metric name), ``digits``, ``compare`` (the row tested against every other).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from recallbench.datasets import load
from recallbench.errors import ConfigError
from recallbench.memory import render_history
from recallbench.papers.lufy.runs import lufy_reference, paper_value, row_logs
from recallbench.records import Episode
from recallbench.run.provenance import episodes_sha256
from recallbench.tables import BuiltTable, Cell, TableContext, TableSpec, data_label

if TYPE_CHECKING:
    from recallbench.judges.llm import LLMJudge
    from recallbench.metrics.stats import TTest

Values = dict[str, dict[int, list[float]]]  # user -> session index -> values


class Analyzer(Protocol):
    """What ``sentiment_values`` asks of a sentiment analyzer (VADER's, by default)."""

    def polarity_scores(self, text: str) -> dict[str, float]: ...


POSITIVE, NEGATIVE = 0.05, -0.05
AVG_SESSIONS = (2, 3, 4)
# What produced the conversations these tables read: the LUFY study's recorded logs, no run of ours.
LOG_HEADER = {
    "generator": "none (the LUFY study's recorded conversations, GPT-4o in the paper)",
    "judge": "none",
    "embedder": "none",
}


def sentiment_label(compound: float) -> int:
    """Map a VADER compound score to +1 / 0 / -1."""
    return 1 if compound >= POSITIVE else -1 if compound <= NEGATIVE else 0


def sentiment_values(episodes: Sequence[Episode], analyzer: Analyzer | None = None) -> Values:
    """Return each user's sentiment labels per session (user utterances only)."""
    if analyzer is None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        analyzer = SentimentIntensityAnalyzer()
    out: Values = {}
    for episode in episodes:
        user = _user(episode)
        for session in episode.sessions:
            labels = [
                float(sentiment_label(analyzer.polarity_scores(t.text)["compound"]))
                for t in session.turns
                if t.speaker == user and t.text.strip()
            ]
            out.setdefault(user, {})[session.index] = labels
    return out


def rating_values(
    episodes: Sequence[Episode], judge: LLMJudge, samples: int = 1, temperature: float = 0.0
) -> tuple[Values, int]:
    """Rate every session with the Fig. 6 prompt; return the scores and unparseable count."""
    keys, items = [], []
    for episode in episodes:
        user = _user(episode)
        for session in episode.sessions:
            keys.append((user, session.index))
            items.append((user, "\n" + render_history(session.turns)))
    results = judge.rate_many(items, samples=samples, temperature=temperature)
    out: Values = {}
    failed = 0
    for (user, index), rs in zip(keys, results, strict=True):
        scores = [float(r.value) for r in rs if r.value is not None]
        failed += len(rs) - len(scores)
        out.setdefault(user, {})[index] = scores
    return out, failed


def _user(episode: Episode) -> str:
    return str(episode.meta.get("user") or episode.speakers[-1])


def _pooled(values: Values, sessions: Sequence[int]) -> tuple[float | None, int]:
    flat = [v for per in values.values() for s in sessions for v in per.get(s, [])]
    return (sum(flat) / len(flat) if flat else None), len(flat)


def _user_means(values: Values, sessions: Sequence[int]) -> dict[str, float]:
    out = {}
    for user, per in values.items():
        flat = [v for s in sessions for v in per.get(s, [])]
        if flat:
            out[user] = sum(flat) / len(flat)
    return out


def significance(target: Values, other: Values, sessions: Sequence[int]) -> TTest:
    """Paired t-test of per-user means (target vs other) over users present in both."""
    from recallbench.metrics.stats import paired_ttest

    a, b = _user_means(target, sessions), _user_means(other, sessions)
    users = sorted(set(a) & set(b))
    return paired_ttest([a[u] for u in users], [b[u] for u in users])


def ux_cells(spec: TableSpec, per_row: dict[str, Values | None]) -> tuple[list[Cell], list[str]]:
    """Return cells (rows x S1..S4, Avg.) and notes with the paired t-tests of ``compare``."""
    metric = str(spec.option("metric"))
    reference = lufy_reference(spec.id)
    digits = int(spec.option("digits", 2))
    cells = []
    columns = [
        (c.label, [c.session] if c.session is not None else list(AVG_SESSIONS))
        for c in spec.need("columns")
    ]
    for row, values in per_row.items():
        for label, sessions in columns:
            ours, n = _pooled(values, sessions) if values is not None else (None, 0)
            paper = paper_value(reference, row, label, metric)
            cells.append(Cell(row, label, metric, ours, paper, n or None, digits))
    return cells, _ttest_notes(spec, per_row, columns)


def _ttest_notes(
    spec: TableSpec, per_row: dict[str, Values | None], columns: Sequence[tuple[str, list[int]]]
) -> list[str]:
    """One note per column with its paired t-tests, then the Holm family over all of them."""
    from recallbench.metrics.bootstrap import holm

    target = spec.option("compare", None)
    reference = per_row.get(target) if target else None
    if not target or reference is None:
        return []
    tests: list[tuple[str, str, TTest]] = []  # (column, other row, test)
    for label, sessions in columns:
        if sessions == [1]:
            continue  # the shared Day-1 session
        for row, values in per_row.items():
            if row != target and values is not None:
                tests.append((label, row, significance(reference, values, sessions)))
    adjusted = holm([t.p for _, _, t in tests])
    notes = []
    for label, _ in columns:
        parts = [
            f"vs {row}: t={t.t:.2f}, p={t.p:.3g}, p_holm={p:.3g}, n={t.n}"
            for (col, row, t), p in zip(tests, adjusted, strict=True)
            if col == label
        ]
        if parts:
            notes.append(f"{target} {label} paired t-test " + "; ".join(parts))
    notes += [
        f"Holm family: the {len(tests)} paired t-tests above ({target} vs each other system, "
        f"per column but the shared Day-1 session), p_holm = Holm's step-down adjusted p over "
        "the family (the paper reports unadjusted p)",
        f"ours: {target} better than every other system at p < 0.05 at: "
        f"{_better(tests, [t.p for _, _, t in tests])}; after Holm: {_better(tests, adjusted)}",
    ]
    return notes


def _better(tests: Sequence[tuple[str, str, TTest]], p_values: Sequence[float]) -> str:
    """The columns where the compared row beats every other row at p < 0.05 (given p-values)."""
    columns = dict.fromkeys(col for col, _, _ in tests)
    wins = [
        col
        for col in columns
        if all(
            t.t > 0 and p < 0.05 for (c, _, t), p in zip(tests, p_values, strict=True) if c == col
        )
    ]
    return ", ".join(wins) or "none"


def _logs(spec: TableSpec, ctx: TableContext) -> dict[str, list[Episode]]:
    """Load each row's conversation logs (``logs: <system>``) from the data root."""
    return {
        row.label: load("lufy", ctx.need_data_dir(), system=row_logs(spec, row))
        for row in spec.need("rows")
    }


def _data(logs: dict[str, list[Episode]], ctx: TableContext) -> str:
    """The header's data line: each system's logs by name and content hash."""
    return ", ".join(
        data_label("lufy", {"system": label}, episodes_sha256(eps), ctx.data_dir)
        for label, eps in logs.items()
    )


def _episodes(logs: dict[str, list[Episode]]) -> str:
    """The header's episodes line: the users (episodes) of each system's logs."""
    return ", ".join(sorted({str(len(eps)) for eps in logs.values()}))


def sentiment_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 10: VADER sentiment of the user utterances of each system's logs."""
    from importlib.metadata import version

    logs = _logs(spec, ctx)
    per_row: dict[str, Values | None] = {
        label: sentiment_values(episodes) for label, episodes in logs.items()
    }
    header = {
        **LOG_HEADER,
        "data": _data(logs, ctx),
        "episodes": _episodes(logs),
        "classifier": (
            f"VADER (vaderSentiment {version('vaderSentiment')}), compound >= 0.05 -> +1, "
            "<= -0.05 -> -1, else 0; the paper used fine-tuned RoBERTa classifiers"
        ),
    }
    cells, tests = ux_cells(spec, per_row)
    return BuiltTable(cells, header=header, notes=tests, tested=_tested(spec, tests))


def rating_table(spec: TableSpec, ctx: TableContext) -> BuiltTable:
    """Builder of Table 8: the Fig. 6 rating of every session script by the command's judge."""
    from recallbench.judges.llm import LLMJudge

    judge = ctx.need("make_judge")()
    offline = not isinstance(judge, LLMJudge) or judge.llm.backend.offline
    settings = ctx.config.get("judge") or {}
    if not isinstance(settings, Mapping):
        raise ConfigError(f"judge: expected a mapping, got {settings!r:.80}")
    samples = int(settings.get("rating_samples") or 1)
    temperature = float(settings.get("rating_temperature") or 0.0)
    per_row: dict[str, Values | None] = {}
    notes: list[str] = []
    logs = _logs(spec, ctx)
    for label, episodes in logs.items():
        if offline or not isinstance(judge, LLMJudge):
            per_row[label] = None
            continue
        per_row[label], failed = rating_values(episodes, judge, samples, temperature)
        if failed:
            notes.append(f"{label}: {failed} unparseable ratings left out")
    header = {
        **LOG_HEADER,
        "data": _data(logs, ctx),
        "episodes": _episodes(logs),
        "judge": "unavailable offline (extractive backend): n/a"
        if offline
        else f"{judge.describe()}, {samples} sample(s) per session, temperature {temperature}",
    }
    cells, tests = ux_cells(spec, per_row)
    return BuiltTable(cells, header=header, notes=notes + tests, tested=_tested(spec, tests))


def _tested(spec: TableSpec, tests: list[str]) -> str | bool:
    """What ``ux_cells``'s notes test, for the engine's "no test between rows" note."""
    target = spec.option("compare", None)
    return f"the paired t-tests in the notes ({target} against each other row)" if tests else False
