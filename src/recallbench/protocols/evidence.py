"""Where a question's answer lies in the dialogue (its evidence turns), and the oracle recall.

Two readers share this module: failure attribution (``recallbench.analysis.attribution``: was
the evidence written, kept, recalled?) and the oracle-context runs of the QA-style protocols
(``oracle_context=true``: the evidence turns replace what the method recalled, so only the
reader differs; its accuracy is the method's reader ceiling).

Evidence, by the locator's ``mode``:

- ``given``: ``QAItem.evidence``, the dataset's own turn ids (GVD's answer key lists the
  exchange(s) each question is about). A question without them has unknown evidence.
- ``answer_turns``: located from the label answer, for datasets that give only the session a
  question is about (LUFY: questions are written after session n about session n) or nothing
  (TeaFarm's counterfactual questions, drawn from the summaries of every past session). Within
  the ``scope`` (``question_session``: the turns of session ``QAItem.after_session``;
  ``history``: every turn of the sessions given), the turn that best covers the label's key
  words (the lexical judge's ``match``: key words of the answer not in the question, stems,
  joined compounds, typos, numbers) is taken first (ties: a turn of the person the question is
  about, then the earlier turn); while the turns taken cover less than ``threshold`` of the key
  words, the turn adding most uncovered key words is added (an answer given over two turns).
  Evidence is unknown when no set of turns reaches ``threshold`` (or the label has no key word).
  It is the same rule that finds LUFY Table 15's "memory that answers each question"
  (``papers.lufy.topk.answering_memory``), applied to turns.
- ``auto``: ``given`` when the question has evidence ids, else ``answer_turns``.

Every answer of an ``answer_turns`` locator depends on the label answer: that is what makes it
gold evidence. The oracle prompt shows only the located turns (speaker and text), never the
label answer, the question's meta or anything else of the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges.lexical import match
from recallbench.records import JSON, Episode, MemoryItem, QAItem, Recall, Session, Turn

MODES = ("given", "answer_turns", "auto")
SCOPES = ("question_session", "history")
ORACLE_KIND = "evidence"
NO_EVIDENCE_TEXT = ""  # what an oracle shows for a question whose evidence is unknown

Mode = Literal["given", "answer_turns", "auto"]
Scope = Literal["question_session", "history"]


@dataclass(frozen=True)
class Evidence:
    """The evidence turn ids of one question, how they were found, or why they are unknown."""

    turn_ids: tuple[str, ...]
    how: str
    unknown: str = ""  # the reason, when ``turn_ids`` is empty

    @property
    def known(self) -> bool:
        return bool(self.turn_ids)

    def to_dict(self) -> dict[str, JSON]:
        """Return a JSON-ready dict (stored in ``Prediction.meta["oracle"]``)."""
        return {"turn_ids": list(self.turn_ids), "how": self.how, "unknown": self.unknown}


@dataclass(frozen=True)
class EvidenceLocator:
    """Find a question's evidence turns (see the module docstring).

    Args:
        mode: ``given`` | ``answer_turns`` | ``auto``.
        scope: where ``answer_turns`` searches: ``question_session`` or ``history``.
        threshold: share of the label's key words the located turns must cover.
    """

    mode: Mode = "auto"
    scope: Scope = "question_session"
    threshold: float = 0.5

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise did_you_mean("evidence mode", str(self.mode), MODES)
        if self.scope not in SCOPES:
            raise did_you_mean("evidence scope", str(self.scope), SCOPES)
        if not 0 < self.threshold <= 1:
            raise ConfigError(f"evidence threshold must be in (0, 1], got {self.threshold}")

    @classmethod
    def of(cls, spec: Mapping[str, JSON] | None, **defaults: str | float) -> EvidenceLocator:
        """Build from a config mapping (``{mode, scope, threshold}``) over ``defaults``."""
        merged = {**defaults, **dict(spec or {})}
        unknown = set(merged) - {"mode", "scope", "threshold"}
        if unknown:
            raise ConfigError(
                f"evidence: unknown keys {sorted(unknown)} (expected mode, scope, threshold)"
            )
        return cls(**merged)

    def locate(
        self,
        episode: Episode,
        qa: QAItem,
        user: str | None = None,
        sessions: Sequence[Session] | None = None,
    ) -> Evidence:
        """Return the evidence of ``qa`` in ``episode`` (``sessions``: the history searched by
        ``scope: history``, default every session up to ``qa.after_session``)."""
        if self.mode != "answer_turns" and qa.evidence:
            return Evidence(tuple(qa.evidence), "answer key (QAItem.evidence)")
        if self.mode == "given":
            return Evidence((), "answer key (QAItem.evidence)", "the question lists no evidence")
        if self.scope == "question_session":
            pool = [s for s in episode.sessions if s.index == qa.after_session]
            where = "the question's session"
        else:
            pool = list(sessions or [s for s in episode.sessions if s.index <= qa.after_session])
            where = "the history"
        how = f"located: label answer's key words in {where} (threshold {self.threshold})"
        turns = [t for s in pool for t in s.turns if t.text.strip()]
        found, reason = answer_turns(qa.question, qa.answers, turns, user, self.threshold)
        return Evidence(found, how, reason)


def answer_turns(
    question: str,
    answers: Sequence[str],
    turns: Sequence[Turn],
    user: str | None = None,
    threshold: float = 0.5,
) -> tuple[tuple[str, ...], str]:
    """Return the turn ids that cover ``threshold`` of an answer's key words, or a reason.

    Each answer alternative is tried in order; the first one located wins.
    """
    if not turns:
        return (), "no turn to search"
    for label in answers:
        found = _cover(question, label, turns, user, threshold)
        if found:
            return found, ""
    return (), f"no turn covers {threshold:.0%} of the label answer's key words"


def _cover(
    question: str, label: str, turns: Sequence[Turn], user: str | None, threshold: float
) -> tuple[str, ...]:
    matches = [match(question, label, t.text) for t in turns]
    key = matches[0].key
    if not key:
        return ()
    got = [set(m.matched) for m in matches]
    numbers = {w for m in matches for w in m.numbers_missing}  # the label's numbers
    present = [numbers - set(m.numbers_missing) for m in matches]
    chosen: list[int] = []
    covered: set[str] = set()
    numbers_seen: set[str] = set()
    while len(covered) < threshold * len(key) or numbers - numbers_seen:
        gains = [
            (len(got[i] - covered) + len(present[i] - numbers_seen), i)
            for i in range(len(turns))
            if i not in chosen
        ]
        best = max(
            gains,
            key=lambda g: (g[0], turns[g[1]].speaker == user, -g[1]),
            default=(0, -1),
        )
        if best[0] == 0:
            return ()
        chosen.append(best[1])
        covered |= got[best[1]]
        numbers_seen |= present[best[1]]
    return tuple(turns[i].turn_id for i in sorted(chosen))


def turns_by_id(episode: Episode) -> dict[str, Turn]:
    """Every turn of ``episode`` by its id."""
    return {t.turn_id: t for t in episode.turns()}


def oracle_recall(episode: Episode, evidence: Evidence, created: datetime | None = None) -> Recall:
    """The gold evidence as a method's recall: one item per evidence turn, in dialogue order.

    Item text and ``Recall.text`` are ``speaker: text`` lines of the evidence turns only; the
    items' ``source_ids`` are the turns themselves. Unknown evidence gives an empty recall.
    """
    turns = turns_by_id(episode)
    missing = [tid for tid in evidence.turn_ids if tid not in turns]
    if missing:
        raise ValueError(
            f"{episode.episode_id}: evidence turn {missing[0]!r} is not a turn of the episode"
        )
    items = tuple(
        MemoryItem(
            item_id=f"oracle/{tid}",
            text=f"{turns[tid].speaker}: {turns[tid].text}",
            kind=ORACLE_KIND,
            created=created,
            source_ids=(tid,),
        )
        for tid in evidence.turn_ids
    )
    text = "\n".join(i.text for i in items) if items else NO_EVIDENCE_TEXT
    return Recall(items, text, {"method": "oracle", "evidence": evidence.to_dict()})
