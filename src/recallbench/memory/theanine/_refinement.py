"""THEANINE context-aware timeline refinement (Fig. 23): the prompt, its parser, timeline rendering
and the offline refinement (the ``extractive`` backend's answer)."""

from __future__ import annotations

import re
from functools import partial

from recallbench.embed.base import TextEmbedder
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.theanine._linking import CONNECTIVES

# THEANINE App. H Fig. 23 "Prompt for Context-aware Timeline Refinement", verbatim (including
# "an language model" and "[Sentence A]" in item 4); line breaks restored from the layout.
REFINEMENT_PROMPT = (
    "Given Timelines, which are structured in this format: [Event A] - (relation) - [Event B] "
    "..., your job is to naturally transform each timeline into useful information that can "
    "help an language model to generate a proper next response for Current Dialogue.\n\n"
    "These are the explanation of each relation type:\n\n"
    "1. Changed: when events in [Event A] changed to events in [Event B]\n"
    "2. Cause: when events in [Event A] caused events in [Event B]\n"
    "3. Reason: when events in [Event A] are due to events in [Event B]\n"
    "4. HinderedBy: when events in [Event B] can be hindered by events in [Sentence A], and "
    "vice versa\n"
    "5. React: when, as a result of events in [Event A], the subject feels as mentioned in "
    "[Event B]\n"
    "6. Want: when, as a result of events in [Event A], the subject wants events in [Event B] "
    "to happen\n"
    "7. SameTopic: when the specific topic addressed in [Event A] is also discussed in "
    "[Event B]\n\n"
    "If a given relation is not proper, naturally connect them without using that relation.\n\n"
    "Current Dialogue: {current_dialogue_context}\n\n"
    "Timelines: {input_path}\n\n"
    "Your Outputs (only the transformed timelines):"
)
REFINEMENT_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 23, verbatim"


# The reply shape (structured outputs): the transformed timeline as one paragraph that starts
# with a word (what ``parse_refinement`` needs: some text, not an echoed header), bounded so
# that it ends within ``max_tokens``.
REFINEMENT_REPLY = Pattern(r"[A-Za-z\"'(\[][^\n]{0,900}")


# --- context-aware refinement (Fig. 23) ------------------------------------------------------


def parse_refinement(reply: str) -> str:
    """Return the refined timeline text (an echoed ``Your Outputs`` header removed)."""
    text = re.sub(r"^\s*your outputs?[^:\n]*:\s*", "", reply.strip(), flags=re.I).strip()
    if not re.search(r"[^\W\d_]", text):
        raise ParseError(f"empty refinement in reply {reply[:80]!r}")
    return text


def render_timeline(events: list[tuple[str, str | None]]) -> str:
    """Render ``[(event, relation into it)]`` as Fig. 23's ``[A] - (relation) - [B] ...``."""
    parts: list[str] = []
    for text, relation in events:
        if parts:
            parts.append(f"({relation})")
        parts.append(f"[{text}]")
    return " - ".join(parts)


def extractive_refinement(
    *,
    events: list[tuple[str, str | None]],
    anchor: int,
    query: str,
    embedder: TextEmbedder,
    max_events: int,
    **_: object,
) -> str:
    """Offline Fig. 23 reply: the timeline in order, trimmed to the retrieved memory ``anchor``
    plus the events most similar to ``query`` (``max_events`` in all), with connectives."""
    keep = set(range(len(events)))
    if len(events) > max_events:
        sims = embedder.encode([query] + [text for text, _ in events])
        scores = sims[1:] @ sims[0]
        ranked = sorted((i for i in keep if i != anchor), key=lambda i: (-scores[i], i))
        keep = {anchor, *ranked[: max_events - 1]}
    out: list[str] = []
    prev = None
    for i in sorted(keep):
        text, relation = events[i]
        if prev is not None:
            connective = CONNECTIVES.get(relation or "")
            out.append(connective if prev == i - 1 and connective else "Later:")
        out.append(text.rstrip(".") + ".")
        prev = i
    return " ".join(out)


_EVENT = re.compile(r"\[([^\[\]]+)\]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CONNECTIVE = re.compile(
    "^(?:" + "|".join(re.escape(c) for c in [*CONNECTIVES.values(), "Later:"]) + r")\s*"
)


def timeline_units(text: str) -> list[str]:
    """The events a rendered memory block shows, in order: the bracketed events of a raw
    timeline line (``[A] - (rel) - [B]``), else the sentences of a refined one without their
    connectives ("Later, this changed: B." -> "B.")."""
    units = []
    for line in text.splitlines():
        events = _EVENT.findall(line) if line.lstrip().startswith("[") else []
        parts = events or _SENTENCE.split(line)
        units += [u for part in parts if (u := _CONNECTIVE.sub("", part.strip()))]
    return units


def refinement_task(embedder: TextEmbedder, max_events: int) -> PromptTask[str | None]:
    """Return the Fig. 23 refinement task (stage ``answer``; fallback: the raw timeline)."""
    offline = partial(extractive_refinement, embedder=embedder, max_events=max_events)
    return PromptTask(
        name="theanine.refine_timeline",
        template=REFINEMENT_PROMPT,
        parse=parse_refinement,
        offline=offline,
        fallback=None,
        stage="answer",
        max_tokens=256,
        source=REFINEMENT_SOURCE,
        reply=REFINEMENT_REPLY,
    )
