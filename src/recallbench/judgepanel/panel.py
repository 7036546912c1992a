"""Run the panel on one run folder: its answers and probes through every judge, then statistics.

``run_panel(run_dir, judges, options)`` reads the run (``judgepanel.items``), builds the probes
(``judgepanel.probes``), asks every judge about the run's own answers and every probe in one
batch per judge (LLM judges run it concurrently, through the cache), and computes acceptance,
the headline metric, agreement and spread (``judgepanel.stats``). Nothing is written here:
``judgepanel.report`` writes the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recallbench.judgepanel.items import memory_lines, read_items, run_protocol
from recallbench.judgepanel.judges import PanelJudge
from recallbench.judgepanel.probes import PROBES, Probe, build_probes
from recallbench.judgepanel.stats import (
    HEADLINE,
    acceptance,
    agreement,
    headline,
    spread,
    unanswered,
)
from recallbench.judgepanel.variants import JudgeInput
from recallbench.run.read import RunRecord, read_run
from recallbench.verdict import Verdict

ANSWERS = "answers"  # the set of the run's own answers, beside the probes


@dataclass(frozen=True)
class PanelOptions:
    """Which probes, their seed and the number of distractors of the verbose probes."""

    probes: tuple[str, ...] = PROBES
    seed: int = 0
    distractors: int = 4


@dataclass(frozen=True)
class Judged:
    """One judged text: which set and item, the episode, the input and the verdict."""

    set: str
    item: str
    episode_id: str
    input: JudgeInput
    verdict: Verdict


@dataclass
class PanelResult:
    """Everything the report shows (``to_dict`` is panel.json)."""

    run_dir: Path
    protocol: str
    options: PanelOptions
    judges: list[dict[str, Any]]
    counts: dict[str, int]
    acceptance: dict[str, dict[str, dict[str, Any]]]  # judge -> set -> entry
    headline: dict[str, dict[str, dict[str, Any]]]  # judge -> metric -> entry
    agreement: dict[str, dict[str, Any] | None]  # set (or "all") -> report
    spread: dict[str, dict[str, Any] | None]  # headline metric -> spread across judges
    judged: dict[str, list[Judged]] = field(default_factory=dict)  # judge -> verdicts

    @property
    def headline_metric(self) -> str:
        return HEADLINE[self.protocol]

    @property
    def sets(self) -> list[str]:
        return [ANSWERS, *self.options.probes]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-item verdicts: those go to verdicts.jsonl)."""
        return {
            "run": str(self.run_dir),
            "protocol": self.protocol,
            "headline_metric": self.headline_metric,
            "options": {
                "probes": list(self.options.probes),
                "seed": self.options.seed,
                "distractors": self.options.distractors,
            },
            "judges": self.judges,
            "counts": self.counts,
            "acceptance": self.acceptance,
            "headline": self.headline,
            "agreement": self.agreement,
            "spread": self.spread,
        }


Row = tuple[str, str, str, JudgeInput]  # (set, item id, episode id, what the judge sees)


def _inputs(
    run: RunRecord, protocol: str, options: PanelOptions
) -> tuple[list[Row], dict[str, int]]:
    """(set, item id, episode, JudgeInput) of the run's answers and its probes; counts."""
    items = read_items(run, protocol)
    episodes = list(dict.fromkeys(q.episode_id for q in items.questions))
    probes, counts = build_probes(
        items.questions,
        memory_lines(run, episodes),
        options.seed,
        options.distractors,
        options.probes,
    )
    rows = [
        (
            ANSWERS,
            a.pred_id,
            a.episode_id,
            JudgeInput(a.question.question, a.question.reference, a.answer),
        )
        for a in items.answers
    ]
    rows += [_probe_row(p) for p in probes]
    counts = {
        "answers": len(items.answers),
        "questions": len(items.questions),
        "episodes": len(episodes),
        "skipped_no_reference": items.skipped_no_reference,
        **{f"probe_{k}": sum(p.kind == k for p in probes) for k in options.probes},
        **counts,
    }
    return rows, counts


def _probe_row(p: Probe) -> Row:
    q = p.question
    return (
        p.kind,
        f"{p.kind}:{q.key}",
        q.episode_id,
        JudgeInput(q.question, q.reference, p.answer),
    )


def run_panel(
    run_dir: str | Path, judges: Sequence[PanelJudge], options: PanelOptions = PanelOptions()
) -> PanelResult:
    """Re-score the run at ``run_dir`` and its probes with every judge (module docstring)."""
    run_dir = Path(run_dir)
    if not judges:
        raise ValueError("judge-panel needs at least one judge")
    labels = [j.label for j in judges]
    if len(set(labels)) != len(labels):
        raise ValueError(f"judge labels must be distinct, got {labels}")
    run = read_run(run_dir)
    protocol = run_protocol(run.config, run_dir)
    rows, counts = _inputs(run, protocol, options)
    judged: dict[str, list[Judged]] = {}
    for judge in judges:
        verdicts = judge.verdicts([r[3] for r in rows])
        judged[judge.label] = [  # a verdict names the panel judge that gave it
            Judged(s, item, episode, given, replace(v, judge=judge.label))
            for (s, item, episode, given), v in zip(rows, verdicts, strict=True)
        ]
    result = PanelResult(
        run_dir, protocol, options, [j.describe() for j in judges], counts, {}, {}, {}, {}, judged
    )
    _statistics(result, {j.label: j.has_dont_know for j in judges})
    return result


def _statistics(result: PanelResult, has_dont_know: dict[str, bool]) -> None:
    """Fill acceptance, headline, agreement and spread of ``result`` from its verdicts.

    Unavailable verdicts (score None) count nowhere; ``has_dont_know``: judge label -> whether
    it can say don't-know (``stats.unanswered``).
    """
    for label, rows in result.judged.items():
        given = [r for r in rows if r.verdict.available]
        result.acceptance[label] = {
            s: acceptance([(r.episode_id, r.verdict.credit) for r in given if r.set == s])
            for s in result.sets
        }
        result.headline[label] = headline(
            [
                (
                    r.episode_id,
                    r.verdict.credit,
                    unanswered(r.verdict, has_dont_know[label], r.input.answer),
                )
                for r in given
                if r.set == ANSWERS
            ]
        )
    for s in [*result.sets, "all"]:
        ratings = {
            label: {r.item: r.verdict.score for r in rows if s in ("all", r.set)}
            for label, rows in result.judged.items()
        }
        result.agreement[s] = agreement(ratings)
    for metric in ("precision", "recall", "f1"):
        result.spread[metric] = spread(
            {label: h[metric]["value"] for label, h in result.headline.items()}
        )
