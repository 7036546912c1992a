"""Failure attribution of a ``locomo_qa`` run (``analysis.attribution.run_items``).

LoCoMo names each question's evidence turns, so nothing is located: an item's evidence is its
``QAItem.evidence`` as the prediction recorded it (``meta["evidence"]``; an oracle run's
``meta["oracle"]`` turns), the store it met is the snapshot after the session it was asked after
(``locomo_qa`` asks after the last session by default), and recalled = the evidence turns among
the sources of what the method recalled. Credit: Mem0's J label (categories 1-4, the primary
judge), with LoCoMo's F1 beside it; category 5, which J does not judge, is credited by LoCoMo's
rule (1 when the reply says the conversation does not mention it). A question without evidence
has unknown evidence (attribution counts it apart). ``subset`` keeps the items of one category
(``meta["subsets"]``: a category name or ``answerable``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recallbench.analysis.attribution_reads import (
    decayed_of,
    is_oracle,
    outcome_of,
    read_stores,
    turn_facts,
)
from recallbench.metrics.attribution import ItemFacts
from recallbench.protocols.locomo import locomo_f1
from recallbench.records import Prediction
from recallbench.run.read import RunRecord
from recallbench.verdict import verdict_of

J_NAME = "J {judge}"  # the run's judge: mem0_j (Mem0's J), or another QA judge
F1_NAME = "LoCoMo F1"
NO_EVIDENCE = "the question cites no evidence turn"


def _credit(p: Prediction, j_name: str) -> tuple[float, dict[str, float], str]:
    f1 = float(locomo_f1(int(p.meta["category"]), p.output, p.reference or ""))
    verdict = verdict_of(p)
    if verdict is None:  # category 5: LoCoMo's rule
        return f1, {}, F1_NAME
    return float(verdict.correct), {F1_NAME: f1}, j_name


def locomo_items(
    run: RunRecord, preds: list[Prediction], subset: str | None = None
) -> tuple[list[ItemFacts], dict[str, Any]]:
    """Return the attribution facts of the run's answers (of one category with ``subset``)."""
    answers = [p for p in preds if p.kind == "answer"]
    if subset is not None:
        answers = [p for p in answers if subset in (p.meta.get("subsets") or ())]
    stores = {e: read_stores(run, e) for e in dict.fromkeys(p.episode_id for p in answers)}
    j_name = J_NAME.format(judge=run.choice("judge") or "judge")
    items: list[ItemFacts] = []
    judges: dict[str, None] = {}
    for p in answers:
        credit, others, judge = _credit(p, j_name)
        judges[judge] = None
        oracle = p.meta.get("oracle")
        units = tuple(
            oracle.get("turn_ids") or ()
            if isinstance(oracle, Mapping)
            else p.meta.get("evidence") or ()
        )
        found = (units, "" if units else NO_EVIDENCE)
        items.append(
            turn_facts(
                p,
                credit,
                outcome_of(credit, p.output),
                found,
                stores[p.episode_id],
                p.session_index,
                others,
                decayed_of(run),
            )
        )
    info = {
        "judges": tuple(judges) or (j_name,),
        "evidence": "given: LoCoMo's evidence turn ids",
        "oracle": is_oracle(run),
    }
    return items, info
