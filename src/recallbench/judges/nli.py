"""Natural-language inference of a response against a statement: TimeRAG-Memory's ContradRate
(Sun et al. 2023, sec. 4: "an NLI-based contradiction rate computed using a pretrained dialogue
NLI classifier (DialogueNLI-style)").

For each generated response y and each relevant statement s the judge labels the pair (s, y)
entailment / neutral / contradiction; y is contradictory when some pair is labelled
contradiction. ContradRate is the share of contradictory responses (``protocols.timerag``).

Offline it is **unavailable**: no NLI model ships offline and a lexical rule cannot judge
contradiction, so on the ``extractive`` backend the protocol records the reason and no label
(never an invented one).

Deviations:
- The paper's classifier is a DialogueNLI-style model with a contradiction-probability threshold
  of 0.50; here an LLM judge answers with one label (a PromptTask; the prompt is ours, the paper
  prints none). A user with a local NLI model can serve it behind the same task name.
"""

from __future__ import annotations

import re

from recallbench.llm.shapes import Choice
from recallbench.llm.task import ParseError, PromptTask

NLI_PROMPT = """Premise: {premise}
Hypothesis: {hypothesis}

Does the premise entail the hypothesis, contradict it, or neither? The hypothesis is a reply in a \
conversation and the premise is something known about its speaker.
Answer with exactly one word: entailment, neutral or contradiction."""
NLI_SOURCE = "recallbench (TimeRAG-Memory sec. 4 names a DialogueNLI classifier, prints no prompt)"
UNAVAILABLE = (
    "unavailable offline: no NLI model ships offline and a lexical rule cannot judge "
    "contradiction; run with an LLM generator (generator=openai, an NLI model behind it)"
)
_LABEL = re.compile(
    r"^[\s\"'*`]*(entailment|entail|neutral|contradiction|contradict)\w*[\s\"'*`.]*$", re.I
)


def parse_nli(reply: str) -> str:
    """Parse the reply: entailment, neutral or contradiction (one word; quotes tolerated)."""
    found = _LABEL.match(reply.strip())
    if not found:
        raise ParseError(f"NLI reply must be entailment, neutral or contradiction: {reply[:80]!r}")
    word = found.group(1).lower()
    return (
        "entailment"
        if word.startswith("entail")
        else ("contradiction" if word.startswith("contradict") else "neutral")
    )


NLI_TASK: PromptTask[str | None] = PromptTask(
    name="judge.nli",
    template=NLI_PROMPT,
    parse=parse_nli,
    offline=None,
    fallback=None,
    stage="judge",
    max_tokens=4,
    temperature=0.0,
    source=NLI_SOURCE,
    reply=Choice(("entailment", "neutral", "contradiction")),
)
