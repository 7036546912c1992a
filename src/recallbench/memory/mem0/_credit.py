"""Which turns a Mem0 memory is credited with (``memory.credit``): its write batch or its turn.

Mem0's LoCoMo recipe writes a session in batches of 2 turns (``add`` per batch and speaker
scope), and mem0 keeps the batch's metadata on every memory the call produced: the memory's
source is known only down to its batch. ``credit: batch`` (the default; what every committed
run did) gives each memory both turn ids of its batch as ``source_ids``, so recall@k and the
attribution tables count a memory as recalling the evidence when the evidence is either turn.
``credit: source_turn`` gives it the one turn its text came from (``source_turn``), and keeps
the batch under ``attrs["batch_turn_ids"]`` and the extraction's attribution under
``attrs["attributed_to"]``.

How the one turn is found:

1. The extraction's own attribution: mem0ai 2.2's extraction returns, per fact,
   ``attributed_to: user | assistant`` (which side of the messages it came from), and mem0 keeps
   it on the memory. In Mem0's recipe the scope's speaker is ``user`` and the other speaker
   ``assistant``, so it names the batch's turns of one speaker; when that is one turn, it is the
   source. (LoCoMo's speakers alternate, so a batch of 2 usually holds one turn of each.)
2. Otherwise (both turns of the batch are the named side's, or no attribution, or it names a
   side with no turn in the batch): among those candidate turns (all of the batch when the
   attribution names none), the one whose message as mem0 read it (``"Name: text"``) shares the
   most distinct content words (``text.content_words``) with the memory's text.

Deviations:
- The extraction says which side a fact came from, not which message: within one side the turn
  is the text-overlap choice of step 2, a heuristic of ours. Ties (and no overlap at all) go to
  the earlier turn of the batch.
- The attribution is the extraction model's claim; it is not checked against the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from recallbench.records import Turn
from recallbench.text import content_words

CREDITS = ("batch", "source_turn")
ROLES = ("user", "assistant")


def role(turn: Turn, speaker: str) -> str:
    """The role mem0 saw ``turn`` in, in ``speaker``'s scope (Mem0's LoCoMo recipe)."""
    return "user" if turn.speaker == speaker else "assistant"


def message(turn: Turn) -> str:
    """The message text mem0 was given for ``turn`` (``"Name: text"``)."""
    return f"{turn.speaker}: {turn.text}"


def source_turn(text: str, batch: Sequence[Turn], speaker: str, attributed_to: object) -> Turn:
    """The one turn of ``batch`` that the memory ``text`` of ``speaker``'s scope came from."""
    if not batch:
        raise ValueError("mem0 source_turn: the memory's write batch has no turns")
    named = [t for t in batch if attributed_to in ROLES and role(t, speaker) == attributed_to]
    candidates = named or list(batch)
    if len(candidates) == 1:
        return candidates[0]
    words = set(content_words(text))
    # max keeps the first of equal keys: ties go to the earlier turn of the batch
    return max(candidates, key=lambda t: len(words & set(content_words(message(t)))))


def credited(
    row: Mapping[str, object], batch_ids: Sequence[str], turns: Mapping[str, Turn], speaker: str
) -> tuple[str, ...]:
    """The source turn id of one mem0 result ``row`` (its memory text and ``attributed_to``);
    none when the memory records no batch."""
    if not batch_ids:
        return ()
    missing = [i for i in batch_ids if i not in turns]
    if missing:
        raise KeyError(f"mem0 source_turn: turn {missing[0]!r} of a memory's batch was not written")
    batch = [turns[i] for i in batch_ids]
    return (
        source_turn(str(row.get("memory", "")), batch, speaker, row.get("attributed_to")).turn_id,
    )
