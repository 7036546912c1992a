"""The estimators of LUFY's L and P metrics (A, arousal, is ``_arousal``), used by ``_lufy.Lufy``.

L: the LLM-estimated importance 1-10 (Fig. 1 prompt, verbatim; its parser; offline: a lexical
heuristic). P: surprise, a causal LM's perplexity of the user utterance given the bot utterance,
capped at 160 (sec. 3.2), or a deterministic unigram proxy for tests. The method's module
docstring (``_lufy``) gives the paper context and the deviations.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

from recallbench.errors import ConfigError
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.lufy._tasks import lexical_importance
from recallbench.text import words

SURPRISE_CAP = 160.0  # sec. 3.2: covers more than 95% of utterances
DEFAULT_SURPRISE_MODEL = "smollm2-135m-instruct"

# LUFY Fig. 1 ("Prompt for LLM-estimated importance"), verbatim; {key\_summary} unescaped.
IMPORTANCE_PROMPT = (
    "On a scale of 1 to 10, where 1 is purely mundane (like brushing your teeth or making your "
    "bed) and 10 is extremely important (like a breakup or a college acceptance), please rate the "
    "importance of the following conversation.\n\n"
    "Rate it based on whether it will be useful in later conversations or not. Here is a summary "
    "of the past conversations: {key_summary} Here is the conversation: {content} Be sure to "
    "provide both a score and a brief reason for your rating."
)
IMPORTANCE_SOURCE = "LUFY (Sumida et al. 2024) Fig. 1, verbatim"

_SCORE = re.compile(r"(?i)\bscore\b\D{0,12}?(\d+(?:\.\d+)?)")
_BARE = re.compile(r"(?<![\d.])(10|[1-9])(?:\.\d+)?(?![\d.]*\d)")


def parse_importance(reply: str) -> float:
    """Parse a 1-10 rating: the number after "score", else the first number 1-10; clip to 1-10."""
    match = _SCORE.search(reply) or _BARE.search(reply)
    if not match:
        raise ParseError(f"no 1-10 score in reply {reply[:80]!r}")
    return min(max(float(match.group(1)), 1.0), 10.0)


def offline_importance(*, content: str, **_: object) -> str:
    """Rate an utterance with ``_tasks.lexical_importance``, in the reply format Fig. 1 asks."""
    score, reasons = lexical_importance(content)
    return f"Score: {score}\nReason: {'; '.join(reasons) or 'mundane small talk'}"


IMPORTANCE_TASK: PromptTask[float] = PromptTask(
    name="lufy.importance",
    template=IMPORTANCE_PROMPT,
    parse=parse_importance,
    offline=offline_importance,
    fallback=5.0,
    stage="memory",
    max_tokens=96,
    source=IMPORTANCE_SOURCE,
    reply=Pattern(r"Score: ([1-9]|10)\nReason: [^\n]{1,200}"),  # what Fig. 1 asks for
)  #  (fallback 5: the released IPE.py's value when a rating fails)

SurpriseFn = Callable[[Sequence[str], Sequence[str]], list[float]]


def unigram_surprise(
    texts: Sequence[str], contexts: Sequence[str], *, cap: float = SURPRISE_CAP, vocab: int = 50
) -> list[float]:
    """Deterministic surprise proxy: perplexity of a text's words under its context's unigrams.

    p(w) = (count of w in the context + 1) / (context words + ``vocab``), add-one smoothing over
    a nominal vocabulary; words the context did not use are unlikely, so a reply that departs
    from the bot's words scores high. Empty text: 0. Capped at ``cap``. No model, for tests.
    """
    out = []
    for text, context in zip(texts, contexts, strict=True):
        ws, ctx = words(text), Counter(words(context or ""))
        if not ws:
            out.append(0.0)
            continue
        total = sum(ctx.values()) + vocab
        nll = -sum(math.log((ctx[w] + 1) / total) for w in ws) / len(ws)
        out.append(min(math.exp(nll), cap))
    return out


def build_surprise(kind: str | SurpriseFn, model: str | None, cap: float) -> SurpriseFn:
    """Return the surprise function: ``lm`` (a causal LM's perplexity) or ``unigram``."""
    if callable(kind):
        return kind
    if kind == "unigram":
        return lambda texts, contexts: unigram_surprise(texts, contexts, cap=cap)
    if kind == "lm":

        def lm(texts: Sequence[str], contexts: Sequence[str]) -> list[float]:
            from recallbench.llm.perplexity import perplexity

            return perplexity(texts, contexts, model=model or DEFAULT_SURPRISE_MODEL, cap=cap)

        return lm
    raise ConfigError(f"surprise must be 'lm' or 'unigram', got {kind!r}")
