"""Memory update building block: Bae et al.'s Algorithm 1 over (memory, summary) sentence pairs.

Shared by ``memory_update``, ``memory_retrieval`` (``update: true``) and ``session_summaries``.

Paper: Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 4.3 and Algorithm 1: at the end of a session every pair (m_i, s_j) of old memory
sentence and new summary sentence gets an operation O(m_i, s_j) in {PASS, REPLACE, APPEND, DELETE};
REPLACE and DELETE drop m_i, DELETE also drops s_j, PASS (against a surviving m_i) drops s_j, and
the new memory is M' = M u S. THEANINE (Ong et al., NAACL 2025) runs it with gpt-3.5 as the
baseline "+ Memory Update" (sec. 3.2) using the pairwise classifier prompt of its Fig. 25.

Implemented: ``UPDATE_PROMPT`` (THEANINE Fig. 25, verbatim) as the PromptTask
``memory.update_operation`` (stage ``memory``); ``algorithm1`` (exactly Bae's Algorithm 1);
``MemoryUpdater`` (classifier + algorithm, reusable: ``memory_retrieval`` composes it with
``update: true``; the ``memory_ops`` protocol can call ``classify``); ``MemoryUpdate``, the
THEANINE "All Memories + Memory Update" method.

Label mapping (Fig. 25 -> Algorithm 1): PASS -> P, REPLACE -> R, APPEND -> A, DELETE -> D, and
CHANGE -> R. Fig. 25's CHANGE ("the information from 'summary' has been changed to 'memory'",
e.g. "Doesn't have any particular health issues" -> "Had back surgery") is the case Bae et al.
label REPLACE: "When s_j and m_i are inconsistent, the more recent information s_j remains" (sec.
4.3; the same pair is REPLACE in their Table 7). Unparseable replies fall back to APPEND (the
prompt's own prior: "Most of the relations are likely to be 'APPEND'"; it loses nothing).

Offline classifier (the ``extractive`` backend), on Porter-stemmed content words m, s and the
embedder cosine c of the two sentences (speaker tags stripped):
1. different speaker tags -> APPEND (facts about different people never collide);
2. same text, s a subset of m, or c >= pass_cos -> PASS (memory already holds the summary);
3. the summary reports a resolution ("recovered", "gone", "no longer", ...) the memory does not,
   about the same thing (at least ``delete_shared`` shared stems, or c >= related_cos) -> DELETE;
4. related (overlap |m&s|/min(|m|,|s|) >= related_overlap, or c >= related_cos) with a negation
   flip, or Jaccard(m, s) >= replace_jaccard with s larger than m (summary has more
   information), or c >= replace_cos -> REPLACE;
5. otherwise APPEND.
The default thresholds were set by hand on the 20 sentence pairs the papers print (Bae et al.
Table 7, THEANINE Fig. 25): 11 of Bae's 14 Table 7 pairs come out right (a fit, not a held-out
score); the three misses need world knowledge ("Not sick" ~ "no health issues").

Deviations:
- Bae et al. fine-tune a T5 classifier (NLI transfer); THEANINE prompts gpt-3.5 with Fig. 25.
  We run Fig. 25 on the configured generator, or the lexical rule above offline.
- Bae's FUSION cases (1.09%, discarded by the authors) are not handled, as in the paper.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from typing import Any

from recallbench.errors import ConfigError
from recallbench.llm.task import ParseError, PromptTask, TaskResult
from recallbench.records import MemoryItem
from recallbench.text import content_words, porter_stem

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
DEFAULT_THRESHOLDS = {
    "pass_cos": 0.95,
    "delete_shared": 1,
    "related_overlap": 0.5,
    "related_cos": 0.6,
    "replace_jaccard": 0.35,
    "replace_cos": 0.85,
}

_LABEL = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
_ECHO = re.compile(r"Example of [\"']\w+[\"']")
_TAG = re.compile(r"^([^:\n]{1,40}):\s+(.+)$", re.S)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|nobody|cannot)\b|n't\b")
_RESOLVED = re.compile(
    r"\b(?:recover\w*|better|gone|heal\w*|cured?|finish\w*|complet\w*|resolved|solved|quit|"
    r"stopped|ended|no longer|anymore|over with)\b"
)


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


@lru_cache(maxsize=50_000)
def _stems(text: str) -> frozenset[str]:
    return frozenset(porter_stem(w) for w in content_words(text))


def _split_tag(text: str) -> tuple[str | None, str]:
    m = _TAG.match(text.strip())
    return (m.group(1).strip(), m.group(2).strip()) if m else (None, text.strip())


def _norm(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def offline_operation(*, memory: str, summary: str, embedder: Any, thresholds: Mapping) -> str:
    """Classify a (memory, summary) pair with the lexical/embedding rule (module docstring)."""
    tag_m, body_m = _split_tag(memory)
    tag_s, body_s = _split_tag(summary)
    if tag_m and tag_s and tag_m != tag_s:
        return _reply("APPEND", f"about different speakers ({tag_m} vs {tag_s})")
    m, s = _stems(body_m), _stems(body_s)
    vecs = embedder.encode([body_m, body_s])
    cos = float(vecs[0] @ vecs[1])
    if _norm(body_m) == _norm(body_s) or (s and s <= m) or cos >= thresholds["pass_cos"]:
        return _reply("PASS", f"memory already contains the summary (cos {cos:.2f})")
    shared = len(m & s)
    overlap = shared / min(len(m), len(s)) if m and s else 0.0
    jaccard = shared / len(m | s) if m | s else 0.0
    same_topic = shared >= thresholds["delete_shared"] or cos >= thresholds["related_cos"]
    if same_topic and _RESOLVED.search(_norm(body_s)) and not _RESOLVED.search(_norm(body_m)):
        return _reply("DELETE", f"the summary resolves the memory ({shared} shared words)")
    related = overlap >= thresholds["related_overlap"] or cos >= thresholds["related_cos"]
    flip = bool(_NEGATION.search(_norm(body_m))) != bool(_NEGATION.search(_norm(body_s)))
    if (
        (related and flip)
        or (jaccard >= thresholds["replace_jaccard"] and len(s) > len(m))
        or cos >= thresholds["replace_cos"]
    ):
        return _reply("REPLACE", f"summary updates the memory (jaccard {jaccard:.2f})")
    return _reply("APPEND", f"new information (overlap {overlap:.2f}, cos {cos:.2f})")


def _reply(label: str, why: str) -> str:
    return f"Relation: {label}\nExplanation: {why}"


def operation_task(embedder: Any, thresholds: Mapping | None = None) -> PromptTask:
    """Return the Fig. 25 classifier task; its offline twin is ``offline_operation``."""
    return PromptTask(
        name="memory.update_operation",
        template=UPDATE_PROMPT,
        parse=parse_operation,
        offline=partial(
            offline_operation, embedder=embedder, thresholds=dict(thresholds or DEFAULT_THRESHOLDS)
        ),
        fallback=FALLBACK_LABEL,
        stage="memory",
        max_tokens=128,
        source=UPDATE_SOURCE,
    )


# --- Algorithm 1 ---------------------------------------------------------------------------


def algorithm1(
    n_memory: int, n_summary: int, ops: Mapping[tuple[int, int], str]
) -> tuple[list[int], list[int]]:
    """Run Bae et al.'s Algorithm 1 on indices; ``ops[(i, j)]`` is "P", "R", "A" or "D".

    Returns the indices of the memory and summary sentences that stay (M' = M u S, in order).
    """
    m_del: set[int] = set()
    s_del: set[int] = set()
    for i in range(n_memory):  # lines 3-8
        for j in range(n_summary):
            if ops[(i, j)] in ("R", "D"):
                m_del.add(i)
                if ops[(i, j)] == "D":
                    s_del.add(j)
    kept_m = [i for i in range(n_memory) if i not in m_del]  # line 9
    for j in range(n_summary):  # lines 10-13: PASS only against surviving memory
        if any(ops[(i, j)] == "P" for i in kept_m):
            s_del.add(j)
    return kept_m, [j for j in range(n_summary) if j not in s_del]  # lines 14-15


class MemoryUpdater:
    """The Fig. 25 classifier on every (memory, summary) pair, then Algorithm 1.

    Args:
        llm: runs the classifier task (``run_many``: one call per pair, O(|M||S|)).
        embedder: used by the offline rule.
        thresholds: overrides of ``DEFAULT_THRESHOLDS`` for the offline rule.
    """

    def __init__(self, llm: Any, embedder: Any, thresholds: Mapping | None = None) -> None:
        unknown = set(thresholds or {}) - set(DEFAULT_THRESHOLDS)
        if unknown:
            raise ConfigError(
                f"unknown memory-update thresholds {sorted(unknown)} "
                f"(options: {sorted(DEFAULT_THRESHOLDS)})"
            )
        self.llm = llm
        self.thresholds = {**DEFAULT_THRESHOLDS, **dict(thresholds or {})}
        self.task = operation_task(embedder, self.thresholds)
        self.log: list[dict[str, Any]] = []

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[TaskResult]:
        """Return the classifier's results for (memory, summary) text pairs; value = label."""
        return self.llm.run_many(self.task, [{"memory": m, "summary": s} for m, s in pairs])

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
