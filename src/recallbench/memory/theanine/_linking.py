"""THEANINE relation-aware memory linking (Fig. 22): the prompt, its parser and the offline
relation rule (the ``extractive`` backend's answer to the linking task)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache, partial

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.text import content_words, porter_stem

# THEANINE App. H Fig. 22 "Prompt for Relation-aware Memory Linking", verbatim; line breaks
# restored from the figure's layout (the text extraction joins items 5-6 and 7-8).
LINKING_PROMPT = (
    "Your task is to find the relation between [Sentence A] and [Sentence B]. Keep in mind "
    "that [Sentence A] happened before [Sentence B]. The dialogues where each of the sentence "
    "is originated from are provided to help your reasoning.\n\n"
    "First, identify if the relation holds among the following six relations:\n\n"
    "1. Changed: when events in [Sentence A] changed to events in [Sentence B]\n"
    "2. Cause: when events in [Sentence A] caused events in [Sentence B]\n"
    "3. Reason: when events in [Sentence A] are due to events in [Sentence B]\n"
    "4. HinderedBy: when events in [Sentence B] can be hindered by events in [Sentence A], and "
    "vice versa\n"
    "5. React: when, as a result of events in [Sentence A], the subject feels as mentioned in "
    "[Sentence B]\n"
    "6. Want: when, as a result of events in [Sentence A], the subject wants events in "
    "[Sentence B] to happen.\n\n"
    "Then, if the relation does not belong to any of the relations from 1 to 6, choose between "
    "the following two options:\n\n"
    "7. SameTopic: when the specific topic addressed in [Sentence A] is also discussed in "
    "[Sentence B]\n"
    "8. None: when [Sentence A] and [Sentence B] are irrelevant\n\n"
    "- For relations from 1 to 7, choose them only if there is clear evidence that matches the "
    'description of the relation. Otherwise, just choose "None" without making excessive '
    "inferences beyond the given sentence.\n"
    "- Pay attention to who the subject of each sentence is.\n"
    "- Do not confuse the roles of [Sentence A] and [Sentence B] when determining the "
    "relationship.\n\n"
    "Follow the format of this example output:\n"
    "<OUTPUT>\n"
    "- Explanation: (your_explanation)\n"
    "- Relation: (predicted_relation)\n\n"
    "Now, read the two dialogues and find the relation between [Sentence A] and [Sentence B].\n\n"
    "<INPUT>\n"
    "[Dialogue for Sentence A]: {dialogue1}\n"
    "[Dialogue for Sentence B]: {dialogue2}\n\n"
    "[Sentence A]: {sentence1}\n"
    "[Sentence B]: {sentence2}\n\n"
    "<OUTPUT>"
)
LINKING_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 22, verbatim"

# THEANINE App. H Fig. 23 "Prompt for Context-aware Timeline Refinement", verbatim (including

RELATIONS = ("Changed", "Cause", "Reason", "HinderedBy", "React", "Want", "SameTopic")
NONE = "None"
LABELS = (*RELATIONS, NONE)
SIMILAR = "Similar"  # the unlabelled temporal/similarity edge of ``linking: temporal``
LINKING_MODES = ("relation", "temporal")
TIMELINE_MODES = ("refined", "raw", "shuffled")
DEFAULT_THRESHOLDS = {"none_cos": 0.05, "strong_cos": 0.6}

_CANON = {label.lower(): label for label in LABELS} | {"causes": "Cause"}
_LABEL_ANY = re.compile(
    r"\b(changed|causes?|reason|hindered\s*by|react|want|same\s*topic|none)\b", re.I
)
_LABEL_EXACT = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
_TAG = re.compile(r"^([^:\n]{1,40}):\s+(.+)$", re.S)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|cannot)\b|n't\b")
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|instead|chang\w*|switch\w*|quit|stopp\w*|sold|"
    r"recover\w*|moved|finally|decided|became|turned|replaced|gave up|used to)\b"
)
_WANT = re.compile(
    r"\b(?:wants?|wanted|plan\w*|hop(?:e|es|ed|ing)|wish\w*|would like|going to|"
    r"intend\w*|looking forward)\b"
)
_FEEL = re.compile(
    r"\b(?:feels?|felt|happy|glad|sad|excited|worried|proud|upset|angry|nervous|relieved|"
    r"scared|afraid|disappointed|grateful)\b"
)
# The reply shape (structured outputs): Fig. 22's own two-line output, the explanation bounded
# so that the label fits in ``max_tokens``.
LINKING_REPLY = Pattern(r"- Explanation: [^\n]{1,240}\n- Relation: (" + "|".join(LABELS) + ")")
CONNECTIVES = {
    "Changed": "Later, this changed:",
    "Cause": "This caused:",
    "Reason": "This was due to:",
    "HinderedBy": "This could be hindered by:",
    "React": "In reaction:",
    "Want": "As a result, there was a wish:",
    "SameTopic": "On the same topic:",
}


# --- relation-aware linking (Fig. 22) --------------------------------------------------------


def parse_relation(reply: str) -> str:
    """Return the Fig. 22 label of a reply: the label on its ``Relation:`` line, else the only
    distinct label (exact case) in the reply. Raises ParseError otherwise."""
    for line in reply.splitlines():
        body = line.strip().lstrip("-*• ").strip()
        if body.lower().startswith("relation"):
            found = _LABEL_ANY.search(body[len("relation") :])
            if found:
                return str(_CANON[re.sub(r"\s+", "", found.group(1)).lower()])
    labels = set(_LABEL_EXACT.findall(reply))
    if len(labels) == 1:
        return str(labels.pop())
    raise ParseError(f"no single relation ({', '.join(LABELS)}) in reply {reply[:80]!r}")


def split_subject(text: str) -> tuple[str, str]:
    """Return ``(subject, body)``: a ``speaker: text`` tag, else the sentence's first word."""
    tagged = _TAG.match(text.strip())
    if tagged:
        return tagged.group(1).strip(), tagged.group(2).strip()
    first = text.strip().split(" ", 1)[0].strip(",.'’s").lower()
    return first, text.strip()


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    return frozenset(porter_stem(w) for w in content_words(text))


def relation_rule(
    sentence1: str, sentence2: str, cos: float, thresholds: Mapping[str, float]
) -> tuple[str, str]:
    """Return ``(label, explanation)`` of the offline relation classifier (module docstring)."""
    subj1, body1 = split_subject(sentence1)
    subj2, body2 = split_subject(sentence2)
    shared = _stems(body1) & _stems(body2)
    if cos < thresholds["none_cos"] or (not shared and cos < thresholds["strong_cos"]):
        return NONE, f"no shared content word and cosine {cos:.2f}"
    topic = ", ".join(sorted(shared)) or f"cosine {cos:.2f}"
    lower1, lower2 = body1.lower(), body2.lower()
    if subj1.lower() == subj2.lower():
        flip = bool(_NEGATION.search(lower1)) != bool(_NEGATION.search(lower2))
        if flip or _CHANGE.search(lower2):
            return "Changed", f"same subject, same topic ({topic}), a change cue in B"
        if _WANT.search(lower2):
            return "Want", f"same subject, same topic ({topic}), a wish in B"
    if _FEEL.search(lower2):
        return "React", f"same topic ({topic}), a feeling in B"
    return "SameTopic", f"shared topic ({topic})"


def relation_texts(pairs: list[tuple[str, str]]) -> list[str]:
    """What ``extractive_relation`` embeds for (sentence1, sentence2) ``pairs``: the bodies
    (``split_subject``) of both sentences of each, each once."""
    return list(dict.fromkeys(split_subject(t)[1] for pair in pairs for t in pair))


def _cosine(embedder: TextEmbedder, a: str, b: str) -> float:
    vecs = embedder.encode([a, b])
    return float(np.dot(vecs[0], vecs[1]))


def extractive_relation(
    *,
    sentence1: str,
    sentence2: str,
    embedder: TextEmbedder,
    thresholds: Mapping[str, float],
    **_: object,
) -> str:
    """Offline Fig. 22 reply: ``relation_rule`` in the prompt's output format."""
    cos = _cosine(embedder, split_subject(sentence1)[1], split_subject(sentence2)[1])
    label, why = relation_rule(sentence1, sentence2, cos, thresholds)
    return f"- Explanation: {why}\n- Relation: {label}"


def linking_task(embedder: TextEmbedder, thresholds: Mapping[str, float]) -> PromptTask[str]:
    """Return the Fig. 22 relation task (fallback None: an unparseable reply adds no edge)."""
    offline = partial(extractive_relation, embedder=embedder, thresholds=dict(thresholds))
    return PromptTask(
        name="theanine.link_relation",
        template=LINKING_PROMPT,
        parse=parse_relation,
        offline=offline,
        fallback=NONE,
        stage="memory",
        max_tokens=128,
        source=LINKING_SOURCE,
        reply=LINKING_REPLY,
    )
