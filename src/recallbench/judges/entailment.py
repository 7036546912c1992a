"""Entailment of responses to the past: an LLM judge standing in for THEANINE's human study
(Ong et al., NAACL 2025, sec. 4 Finding 5, Fig. 6; interface Fig. 14, App. E.2).

Each response is labelled ``entail`` / ``neutral`` / ``contradict`` against the speaker
information in chronological order (here: the dataset's gold summaries of the sessions before
the response's session, identical for every method so that methods are compared on the same
facts) and the dialogue context. Output: the label rates per run (Fig. 6's rows).

This is a machine stand-in for three AMT workers with majority vote; label it so. Offline it is
**unavailable**: no NLI model ships offline and a lexical rule cannot judge entailment, so on
the ``extractive`` backend ``judge_entailment`` returns ``available: False`` with the reason and
no labels (never invented ones).

Deviations: the paper picked 100 responses that need past information with GPT-4 (prompt not
printed); we judge up to ``max_items`` responses sampled with a seed among those with speaker
information. The instruction text is Fig. 14's (verbatim); the answer-format line is ours.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Choice
from recallbench.llm.task import ParseError, PromptTask
from recallbench.records import Episode, Prediction, Turn

# THEANINE Fig. 14 (interface for the human evaluation of referencing past conversations),
# instructions and criteria verbatim; the ${memory}/${dialogue}/${response} slots become fields.
ENTAILMENT_INSTRUCTIONS = """We are surveying qualities for response from a given dialogue context.
Specifically, you will be given speaker information in chronological order, a dialogue context, and a response to the last utterance in the dialogue context. You will be asked to judge the quality of the response to the last utterance.
Criteria:
1. Entail When the response to the last utterance in dialogue context appropriately reflects given information.
2. Neutral: Although the response does not reflect speaker information, it does not contradict them either
3. Contradictory: when the response to the last utterance in dialogue context contains statement that contradicts the "most up-to-date information about that statement."
Speaker information in chronological order
{memory}
Dialogue Context
{dialogue}
Response
{response}
Q1. Base on the criteria, select an option that fits the response.
Entail     Neutral     Contradictory"""  # noqa: E501
ENTAILMENT_FORMAT = "\n\nAnswer with exactly one word: Entail, Neutral or Contradictory."
ENTAILMENT_SOURCE = "THEANINE Fig. 14 interface text, verbatim; answer-format line ours"
UNAVAILABLE = (
    "unavailable offline: no NLI model ships offline and a lexical rule cannot judge "
    "entailment; run with an LLM generator (e.g. generator=openai, the paper used humans)"
)
LABELS = ("entail", "neutral", "contradict")
_LABEL = re.compile(r"^[\s\"'*`]*(entail|neutral|contradictory|contradict)[\s\"'*`.]*$", re.I)


def parse_entailment(reply: str) -> str:
    """Parse the reply: exactly one of Entail / Neutral / Contradictory (quotes tolerated)."""
    found = _LABEL.match(reply.strip())
    if not found:
        raise ParseError(
            f"entailment reply must be Entail, Neutral or Contradictory: {reply[:80]!r}"
        )
    word = found.group(1).lower()
    return "contradict" if word.startswith("contradict") else word


ENTAILMENT_TASK: PromptTask[str | None] = PromptTask(
    name="judge.entailment",
    template=ENTAILMENT_INSTRUCTIONS + ENTAILMENT_FORMAT,
    parse=parse_entailment,
    offline=None,
    fallback=None,
    stage="judge",
    max_tokens=8,
    temperature=0.0,
    source=ENTAILMENT_SOURCE,
    reply=Choice(("Entail", "Neutral", "Contradictory")),
)


class EntailmentRow(TypedDict):
    """One judged response: its label (None: unparsed), the raw reply and any failure."""

    pred_id: str
    label: str | None
    raw: str
    failure: str | None


@dataclass
class EntailmentResult:
    """Per-response labels (with raw judge replies) and the label rates."""

    rows: list[EntailmentRow] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def speaker_information(episode: Episode, before_session: int) -> str:
    """Gold session summaries before ``before_session``, oldest first, one line per session."""
    lines = []
    for s in episode.sessions:
        summary = s.gold.get("summary")
        if s.index < before_session and summary:
            text = " ".join(summary) if isinstance(summary, list) else str(summary)
            lines.append(f"[Session {s.index}] {text}")
    return "\n".join(lines)


def _context(episodes: Sequence[Episode]) -> dict[str, tuple[Episode, tuple[Turn, ...]]]:
    out = {}
    for ep in episodes:
        for s in ep.sessions:
            for j, turn in enumerate(s.turns):
                out[turn.turn_id] = (ep, s.turns[:j])
    return out


def judge_entailment(
    predictions: Sequence[Prediction],
    episodes: Sequence[Episode],
    llm: LLMClient,
    *,
    max_items: int | None = 100,
    seed: int = 0,
) -> EntailmentResult:
    """Label sampled responses entail / neutral / contradict (unavailable on extractive)."""
    judge = {
        "backend": llm.backend.name,
        "model": llm.model,
        "prompt": ENTAILMENT_SOURCE,
        "stands_in_for": "THEANINE Fig. 6 human study (3 AMT workers, majority)",
    }
    if llm.backend.offline:
        return EntailmentResult([], {"available": False, "reason": UNAVAILABLE, "judge": judge})
    contexts = _context(episodes)
    items = []
    for p in predictions:
        turn_id = p.pred_id.rsplit("/", 1)[0]
        if p.kind != "response" or turn_id not in contexts:
            continue
        episode, history = contexts[turn_id]
        memory = speaker_information(episode, p.session_index)
        if memory:
            items.append((p, memory, "\n".join(f"{t.speaker}: {t.text}" for t in history)))
    if max_items is not None and len(items) > max_items:
        items = random.Random(seed).sample(items, max_items)
    fields = [{"memory": m, "dialogue": d, "response": p.output} for p, m, d in items]
    results = llm.run_many(ENTAILMENT_TASK, fields, progress=False) if fields else []
    rows: list[EntailmentRow] = [
        {"pred_id": p.pred_id, "label": r.value, "raw": r.raw, "failure": r.failure}
        for (p, _m, _d), r in zip(items, results, strict=True)
    ]
    labelled = [r["label"] for r in rows if r["label"] is not None]
    n = len(labelled)
    rates = {k: (labelled.count(k) / n if n else 0.0) for k in LABELS}
    summary = {"available": True, "n": n, "unparsed": len(rows) - n, **rates, "judge": judge}
    return EntailmentResult(rows, summary)
