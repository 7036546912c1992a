"""Memory update building block: Bae et al.'s Algorithm 1 over (memory, summary) sentence pairs.

Shared by ``memory_update``, ``memory_retrieval`` (``update: true``) and ``session_summaries``.

Paper: Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 4.3 and Algorithm 1: at the end of a session every pair (m_i, s_j) of old memory
sentence and new summary sentence gets an operation O(m_i, s_j) in {PASS, REPLACE, APPEND, DELETE};
REPLACE and DELETE drop m_i, DELETE also drops s_j, PASS (against a surviving m_i) drops s_j, and
the new memory is M' = M u S. THEANINE (Ong et al., NAACL 2025) runs it with gpt-3.5 as the
baseline "+ Memory Update" (sec. 3.2) using the pairwise classifier prompt of its Fig. 25.

Implemented: ``UPDATE_PROMPT`` (THEANINE Fig. 25, verbatim) as the PromptTask
``memory.update_operation`` (stage ``memory``); Algorithm 1 (``_algorithm1``); ``MemoryUpdater``
(classifier + algorithm, reusable: ``memory_retrieval`` composes it with ``update: true``; the
``memory_ops`` protocol calls ``classify``/``update_texts``).

Label mapping (Fig. 25 -> Algorithm 1): PASS -> P, REPLACE -> R, APPEND -> A, DELETE -> D, and
CHANGE -> R. Fig. 25's CHANGE ("the information from 'summary' has been changed to 'memory'",
e.g. "Doesn't have any particular health issues" -> "Had back surgery") is the case Bae et al.
label REPLACE: "When s_j and m_i are inconsistent, the more recent information s_j remains" (sec.
4.3; the same pair is REPLACE in their Table 7). Unparseable replies fall back to APPEND (the
prompt's own prior: "Most of the relations are likely to be 'APPEND'"; it loses nothing).

Offline classifier (the ``extractive`` backend), chosen by ``offline_rule``:
- ``english``: stems + embedder cosine, thresholds ``thresholds`` (``_english_ops``);
- ``charngram``: character-bigram containment/overlap, thresholds ``charngram`` fit on data
  (``_charops``), meaningful on Korean and English;
- ``append``: every pair APPEND (Bae et al.'s "Memory accumulate");
- ``auto`` (default): ``charngram`` for a pair with Hangul, else ``english``.
The rule and its thresholds are bound into the task's offline implementation (a
``functools.partial``), which the LLM cache key includes, so a sweep over them never reuses
another setting's replies.

Deviations:
- Bae et al. fine-tune a T5 classifier (NLI transfer); THEANINE prompts gpt-3.5 with Fig. 25.
  We run Fig. 25 on the configured generator, or a lexical rule offline (``offline_rule``).
- Bae's FUSION cases (1.09%, discarded by the authors) are not handled, as in the paper.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from recallbench.embed.base import TextEmbedder
from recallbench.errors import ConfigError
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask, TaskResult
from recallbench.memory.blocks.bae_update._algorithm1 import algorithm1
from recallbench.memory.blocks.bae_update._charops import CHARNGRAM_DEFAULTS, charngram_operation
from recallbench.memory.blocks.bae_update._english_ops import (
    DEFAULT_THRESHOLDS,
    HANGUL,
    english_operation,
    english_texts,
    reply,
)
from recallbench.records import MemoryItem

__all__ = [
    "CHARNGRAM_DEFAULTS",
    "DEFAULT_THRESHOLDS",
    "LABELS",
    "OFFLINE_RULES",
    "TO_ALGORITHM1",
    "UPDATE_PROMPT",
    "MemoryUpdater",
    "algorithm1",
    "operation_task",
    "parse_operation",
]

# THEANINE (Ong et al., NAACL 2025) App. H Fig. 25 "Prompt for Memory Update (Baseline)",
# verbatim (including its quotes); {memory} and {summary} are the paper's placeholders.
UPDATE_PROMPT = (
    "Compare the 'memory' and 'summary' of the two given sentences according to the "
    "following instructions, and output which of the following relations the two sentences "
    "have."
    "\n\n"
    "-'PASS': When the information in 'memory' already contains the information in "
    "'summary', that is, it is duplicated in content."
    "\n\n"
    "-'CHANGE': When the information from 'summary' has been changed to 'memory'."
    "\n\n"
    "-'REPLACE': When 'summary' has more information than the 'memory' without missing any "
    "details in 'memory'."
    "\n\n"
    "-'APPEND': When 'summary' has new information or different information compared to "
    "'memory'."
    "\n\n"
    "-'DELETE': When the situation in 'memory' has been completed or solved in 'summary'."
    "\n\n"
    "Tips: Most of the relations are likely to be 'APPEND'. When choosing other relations, "
    "explain with clear evidence."
    "\n\n"
    'Some examples are as follows. 1. Example of "PASS\' memory: "Not sick" summary: '
    "\"Doesn't have any particular health issues\" Explanation: The information of 'not being"
    " sick' in the 'memory' already sufficiently includes the information of 'being "
    "healthy' in the 'summary'. So the 'summary' does not need to be added. 2. Example of "
    '"CHANGE" memory: "Doesn\'t have any particular health issues" summary: "Had back '
    "surgery\" Explanation: The information in 'memory' is changed from not having health "
    'issues to having a back surgery. 3. Example of "REPLACE" memory: "likes listening '
    'classic music" summary: "likes classic music and goes to concerts every week" '
    "Explanation: The 'summary' has more information than 'memory' while also containing "
    "the information in 'memory'. So the 'memory' can be replaced by 'summary'. 4. Example "
    'of "APPEND" memory: "Goes to the gym" summary: "Body is sore from exercise" '
    "Explanation: The 'summary' contains new information compared to 'memory'. 5. Example "
    'of "APPEND" memory: "wakes up early" summary: "likes to drink coffee in the morning" '
    "Explanation: The 'summary' and 'memory' contains different information. 6. Example of "
    '"DELETE" memory: "Had sore throat" summary: "Throat is fully recovered" Explanation: '
    "The sore throat from the 'memory' has been recovered according to the 'summary'. Now "
    "write the relations and explanation between the following memory and summary. memory: "
    "{memory} summary: {summary}"
)

UPDATE_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 25, verbatim"

LABELS = ("PASS", "CHANGE", "REPLACE", "APPEND", "DELETE")
TO_ALGORITHM1 = {"PASS": "P", "CHANGE": "R", "REPLACE": "R", "APPEND": "A", "DELETE": "D"}
FALLBACK_LABEL = "APPEND"
OFFLINE_RULES = ("auto", "english", "charngram", "append")
# The reply shape (structured outputs): the label, then the explanation Fig. 25 asks for.
OPERATION_REPLY = Pattern(r"Relation: (" + "|".join(LABELS) + r")\nExplanation: [^\n]{1,200}")
_LABEL = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
_ECHO = re.compile(r"Example of [\"']\w+[\"']")
# --- the pairwise classifier ---------------------------------------------------------------


def parse_operation(reply: str) -> str:
    """Return the Fig. 25 label of a reply: the first label on a ``Relation`` line, else the
    first upper-case label token anywhere, else a reply that is just a label in any case.

    Labels inside an echoed few-shot example (``Example of "PASS"``) are not answers: small
    models often repeat the prompt's examples, so those mentions are removed first.
    """
    reply = _ECHO.sub(" ", reply)
    for line in reply.splitlines():
        if line.strip().lower().startswith("relation"):
            found = _LABEL.search(line.upper())
            if found:
                return found.group(1)
    found = _LABEL.search(reply)
    if found:
        return found.group(1)
    bare = re.sub(r"[^A-Za-z]", "", reply).upper()
    if bare in LABELS:
        return bare
    raise ParseError(f"no operation label ({', '.join(LABELS)}) in reply {reply[:80]!r}")


def append_operation(*, memory: str, summary: str) -> str:
    """The APPEND-only rule (Bae et al.'s "Memory accumulate")."""
    return reply("APPEND", "APPEND is the only operation")


def auto_operation(
    *,
    memory: str,
    summary: str,
    embedder: TextEmbedder,
    thresholds: Mapping[str, float],
    charngram: Mapping[str, float],
) -> str:
    """The character n-gram rule for a pair with Hangul, else the English rule."""
    if HANGUL.search(memory) or HANGUL.search(summary):
        return charngram_operation(memory=memory, summary=summary, thresholds=charngram)
    return english_operation(
        memory=memory, summary=summary, embedder=embedder, thresholds=thresholds
    )


def offline_rule_fn(
    rule: str,
    embedder: TextEmbedder,
    thresholds: Mapping[str, float],
    charngram: Mapping[str, float],
) -> partial[str]:
    """Return the offline implementation of the Fig. 25 task for ``rule`` (its config bound)."""
    if rule == "english":
        return partial(english_operation, embedder=embedder, thresholds=dict(thresholds))
    if rule == "charngram":
        return partial(charngram_operation, thresholds=dict(charngram))
    if rule == "append":
        return partial(append_operation)
    if rule == "auto":
        return partial(
            auto_operation,
            embedder=embedder,
            thresholds=dict(thresholds),
            charngram=dict(charngram),
        )
    raise ConfigError(f"offline_rule {rule!r} unknown (options: {', '.join(OFFLINE_RULES)})")


def operation_task(
    embedder: TextEmbedder,
    thresholds: Mapping[str, float] | None = None,
    *,
    offline_rule: str = "auto",
    charngram: Mapping[str, float] | None = None,
) -> PromptTask[str]:
    """Return the Fig. 25 classifier task; offline it answers with ``offline_rule``."""
    return PromptTask(
        name="memory.update_operation",
        template=UPDATE_PROMPT,
        parse=parse_operation,
        offline=offline_rule_fn(
            offline_rule,
            embedder,
            dict(thresholds or DEFAULT_THRESHOLDS),
            dict(charngram or CHARNGRAM_DEFAULTS),
        ),
        fallback=FALLBACK_LABEL,
        stage="memory",
        max_tokens=128,
        source=UPDATE_SOURCE,
        reply=OPERATION_REPLY,
    )


def _checked(
    given: Mapping[str, Any] | None, defaults: Mapping[str, Any], what: str
) -> dict[str, Any]:
    unknown = set(given or {}) - set(defaults)
    if unknown:
        raise ConfigError(f"unknown {what} {sorted(unknown)} (options: {sorted(defaults)})")
    return {**defaults, **dict(given or {})}


class MemoryUpdater:
    """The Fig. 25 classifier on every (memory, summary) pair, then Algorithm 1.

    Args:
        llm: runs the classifier task (``run_many``: one call per pair, O(|M||S|)).
        embedder: used by the English offline rule.
        thresholds: overrides of ``DEFAULT_THRESHOLDS`` (English offline rule).
        offline_rule: ``auto`` | ``english`` | ``charngram`` | ``append`` (module docstring).
        charngram: overrides of ``CHARNGRAM_DEFAULTS`` (character n-gram rule).
    """

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        thresholds: Mapping[str, float] | None = None,
        *,
        offline_rule: str = "auto",
        charngram: Mapping[str, float] | None = None,
    ) -> None:
        if offline_rule not in OFFLINE_RULES:
            raise ConfigError(
                f"offline_rule {offline_rule!r} unknown (options: {', '.join(OFFLINE_RULES)})"
            )
        self.llm = llm
        self.embedder = embedder
        self.offline_rule = offline_rule
        self.thresholds = _checked(thresholds, DEFAULT_THRESHOLDS, "memory-update thresholds")
        self.charngram = _checked(charngram, CHARNGRAM_DEFAULTS, "charngram thresholds")
        self.task = operation_task(
            embedder, self.thresholds, offline_rule=offline_rule, charngram=self.charngram
        )
        self.log: list[dict[str, Any]] = []

    def with_charngram(self, charngram: Mapping[str, float]) -> MemoryUpdater:
        """Return a fresh updater like this one with other character n-gram thresholds."""
        return MemoryUpdater(
            self.llm,
            self.embedder,
            self.thresholds,
            offline_rule=self.offline_rule,
            charngram=charngram,
        )

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[TaskResult[str]]:
        """Return the classifier's results for (memory, summary) text pairs; value = label."""
        self.prefetch(pairs)
        return self.llm.run_many(self.task, [{"memory": m, "summary": s} for m, s in pairs])

    def prefetch(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Offline, embed the English rule's sentences of ``pairs`` in one call, not pair by pair."""
        if self.offline_rule in ("english", "auto") and self.llm.backend.offline:
            if texts := english_texts(pairs, skip_hangul=self.offline_rule == "auto"):
                self.embedder.encode(texts)

    def update_texts(
        self, memory: Sequence[str], summary: Sequence[str]
    ) -> tuple[list[str], dict[tuple[int, int], str]]:
        """Return M' (texts) for memory and summary texts, and the Fig. 25 label per pair."""
        pairs = [(i, j) for i in range(len(memory)) for j in range(len(summary))]
        results = self.classify([(memory[i], summary[j]) for i, j in pairs])
        labels = {p: r.value for p, r in zip(pairs, results, strict=True)}
        ops = {p: TO_ALGORITHM1[v] for p, v in labels.items()}
        kept_m, kept_s = algorithm1(len(memory), len(summary), ops)
        return [memory[i] for i in kept_m] + [summary[j] for j in kept_s], labels

    def update(
        self, memory: Sequence[MemoryItem], summary: Sequence[MemoryItem]
    ) -> list[MemoryItem]:
        """Return M' for memory M and new summary S; log every pairwise decision."""
        if not memory or not summary:  # no pairs: M' = M u S
            return [*memory, *summary]
        pairs = [(i, j) for i in range(len(memory)) for j in range(len(summary))]
        results = self.classify([(memory[i].text, summary[j].text) for i, j in pairs])
        ops = {}
        for (i, j), res in zip(pairs, results, strict=True):
            ops[(i, j)] = TO_ALGORITHM1[res.value]
            self.log.append(
                {
                    "memory": memory[i].item_id,
                    "summary": summary[j].item_id,
                    "label": res.value,
                    "op": ops[(i, j)],
                    "parsed": res.parsed,
                }
            )
        kept_m, kept_s = algorithm1(len(memory), len(summary), ops)
        return [memory[i] for i in kept_m] + [summary[j] for j in kept_s]

    def counts(self) -> dict[str, int]:
        """Return how often each Fig. 25 label was predicted in this episode."""
        return dict(Counter(entry["label"] for entry in self.log))
