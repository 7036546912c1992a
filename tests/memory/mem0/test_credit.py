"""memory=mem0 ``credit``: both turns of a memory's write batch, or the one turn its text is from.

Hand-built two-turn batches where the fact is in turn 1, in turn 2, or in both, through the
real mem0ai ``add``/``search`` with a scripted extraction; recall@k hand-checked on them.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

from recallbench.embed.hashing import HashingEmbedder
from recallbench.errors import UnknownChoiceError
from recallbench.llm import LLM, Cache, Completion
from recallbench.memory.mem0 import Mem0Memory
from recallbench.memory.mem0._credit import credited, source_turn
from recallbench.protocols.locomo import recall_at
from recallbench.records import Episode, Query, Session, Turn
from recallbench.testing.backend import ReplyBackend

ADA, BEN = "Ada", "Ben"
T1 = Turn("ep/D1:1", ADA, "I adopted a beagle named Pixel last week.")
T2 = Turn("ep/D1:2", BEN, "Lovely! I moved to Oslo for a bakery job.")
T3 = Turn("ep/D1:3", ADA, "Pixel and I swim at the lake every morning.")
T4 = Turn("ep/D1:4", BEN, "I swim at the lake every morning too!")

# the scripted extraction: (scope's first turn of the batch) -> the facts it states
FACTS = {
    # Ada's scope, batch 1: the fact is in turn 1 (Ada's, the scope's "user")
    (ADA, T1.text): [("Ada adopted a beagle named Pixel", "user")],
    # Ben's scope, batch 1: the fact is in turn 2 (Ben's, the scope's "user")
    (BEN, T1.text): [("Ben moved to Oslo for a bakery job", "user")],
    # Ada's scope, batch 2: the fact is in both turns; the extraction names Ada's side
    (ADA, T3.text): [("Ada swims at the lake every morning", "user")],
    # Ben's scope, batch 2: the same fact in both turns, no attribution: overlap ties, turn 1
    (BEN, T3.text): [("Someone swims at the lake every morning", "")],
}


class _Script(ReplyBackend):
    """A model that states the facts ``FACTS`` lists for the batch it is shown."""

    name, local, offline, is_async, model, context_length = "script", True, False, False, "s", 99999
    endpoint = None

    def complete(self, messages, dec):
        user = messages[-1]["content"]
        lines = re.search(r"## New Messages\n(.*?)\n", user).group(1)
        role, _, said = lines.partition(": ")
        name, _, text = said.partition(": ")
        scope = name if role == "user" else ({ADA, BEN} - {name}).pop()
        facts = [
            {"id": str(k), "text": t, "attributed_to": a, "linked_memory_ids": []}
            for k, (t, a) in enumerate(FACTS[(scope, text)])
        ]
        return Completion(json.dumps({"memory": facts}), 10, 5, 0.0)

    def count_tokens(self, text):
        return len(text.split())

    def close(self):
        pass


def _episode() -> Episode:
    session = Session("ep/s1", 1, datetime(2023, 5, 1, 10, 0), (T1, T2, T3, T4))
    return Episode("ep", "locomo", (ADA, BEN), (session,))


def _snapshot(tmp_path, credit):
    method = Mem0Memory(
        LLM(_Script(), Cache(tmp_path / f"{credit}.sqlite")),
        HashingEmbedder(),
        threshold=0.0,
        credit=credit,
    )
    episode = _episode()
    method.reset(episode)
    method.observe(episode.sessions[0])
    return method, method.snapshot()


def test_batch_credit_gives_every_memory_both_turns_of_its_batch(tmp_path):
    _, items = _snapshot(tmp_path, "batch")
    assert [i.source_ids for i in items] == [
        (T1.turn_id, T2.turn_id),
        (T3.turn_id, T4.turn_id),
        (T1.turn_id, T2.turn_id),
        (T3.turn_id, T4.turn_id),
    ]
    assert all("batch_turn_ids" not in i.attrs for i in items)  # the default's records unchanged


def test_source_turn_credit_gives_each_memory_the_turn_its_fact_came_from(tmp_path):
    method, items = _snapshot(tmp_path, "source_turn")
    speakers = [i.attrs["speaker"] for i in items]
    assert speakers == [ADA, ADA, BEN, BEN]  # writing order: Ada's scope, then Ben's
    assert [i.source_ids for i in items] == [
        (T1.turn_id,),  # in turn 1
        (T3.turn_id,),  # in both turns: the extraction said Ada's ("user") side
        (T2.turn_id,),  # in turn 2
        (T3.turn_id,),  # in both, no attribution, equal overlap: the earlier turn
    ]
    assert items[0].attrs["batch_turn_ids"] == [T1.turn_id, T2.turn_id]
    assert items[0].attrs["attributed_to"] == "user"
    query = Query("ep", 1, (), ADA, None, "Where did Ben move?")
    recalled = method.recall(query).items
    assert len(recalled) == 4 and all(len(i.source_ids) == 1 for i in recalled)


def test_recall_at_k_hand_checked_under_both_credits(tmp_path):
    # the snapshot's order stands for a ranking: [Ada b1, Ada b2, Ben b1, Ben b2]
    _, batch = _snapshot(tmp_path, "batch")
    _, single = _snapshot(tmp_path, "source_turn")
    by_batch = [i.source_ids for i in batch]
    by_turn = [i.source_ids for i in single]
    # evidence in turn 2 (Ben's Oslo move): Ada's batch-1 memory is about Pixel, yet the
    # batch credit counts it at rank 1; the memory that holds it is at rank 3
    assert recall_at([T2.turn_id], by_batch, 1) == 1.0
    assert recall_at([T2.turn_id], by_turn, 1) == 0.0
    assert recall_at([T2.turn_id], by_turn, 2) == 0.0
    assert recall_at([T2.turn_id], by_turn, 3) == 1.0
    # evidence in turn 1 (Ada's beagle) is found at rank 1 either way
    assert recall_at([T1.turn_id], by_batch, 1) == recall_at([T1.turn_id], by_turn, 1) == 1.0
    # two evidence turns of batch 2: the batch credit gets both from rank 2; one turn per
    # memory never credits turn 4 (no memory is attributed to it)
    assert recall_at([T3.turn_id, T4.turn_id], by_batch, 2) == 1.0
    assert recall_at([T3.turn_id, T4.turn_id], by_turn, 4) == 0.5


def test_source_turn_rules():
    ada1, ada2 = Turn("x/1", ADA, "I bake sourdough bread."), Turn("x/2", ADA, "Pixel chews shoes.")
    ben = Turn("x/3", BEN, "I bake sourdough bread too.")
    # the attribution names one turn: it wins over a larger overlap elsewhere
    assert source_turn("Ben bakes sourdough bread", [ada1, ben], ADA, "user") is ada1
    assert source_turn("Ben bakes sourdough bread", [ada1, ben], ADA, "assistant") is ben
    # both turns on the named side: the larger overlap (the speaker's name counts, as sent)
    assert source_turn("Pixel chews shoes", [ada1, ada2], ADA, "user") is ada2
    # no attribution, or a side without turns: overlap over the whole batch; ties: earlier
    assert source_turn("Ada bakes sourdough bread", [ben, ada1], ADA, None) is ada1
    assert source_turn("nothing shared", [ben, ada1], ADA, None) is ben
    assert source_turn("nothing shared", [ada2, ada1], ADA, "assistant") is ada2
    with pytest.raises(ValueError, match="no turns"):
        source_turn("x", [], ADA, "user")


def test_bad_records_and_options_are_named():
    turns = {"x/1": Turn("x/1", ADA, "hi there friend")}
    assert credited({"memory": "hi"}, [], turns, ADA) == ()  # no batch recorded: no credit
    with pytest.raises(KeyError, match="x/9"):
        credited({"memory": "hi"}, ["x/1", "x/9"], turns, ADA)
    with pytest.raises(UnknownChoiceError, match="mem0 credit .turn."):
        Mem0Memory(LLM(_Script(), None), HashingEmbedder(), credit="turn")
