"""What the methods and protocols that need something of the data say they need
(``MemoryMethod.needs``, ``EvalProtocol.needs``/``refuses``; the matrix's reasons)."""

from __future__ import annotations

from recallbench.datasets import needs


def test_what_methods_and_protocols_need(llm, embedder):
    from recallbench.judges.lexical import LexicalJudge
    from recallbench.memory.caim import CAIM
    from recallbench.memory.gold_memory import GoldMemory
    from recallbench.memory.no_memory import NoMemory
    from recallbench.memory.session_summaries import SessionSummaries
    from recallbench.protocols.memory_ops import MemoryOpsProtocol
    from recallbench.protocols.qa import QAProtocol
    from recallbench.protocols.response import ResponseProtocol
    from recallbench.protocols.timerag import TimeRAGProtocol

    assert CAIM(llm, embedder).needs() == {needs.DATED}
    assert GoldMemory(llm, embedder).needs() == {"gold memory"}
    assert SessionSummaries(llm, embedder).needs() == frozenset()
    assert SessionSummaries(llm, embedder, source="gold").needs() == {needs.GOLD_SUMMARY}
    assert NoMemory(llm, embedder).needs() == frozenset()
    assert ResponseProtocol(target_sessions=[3, 4, 5]).needs() == {"session 3"}
    assert TimeRAGProtocol(target_sessions=[2, 3]).needs() == frozenset()  # splits one session
    assert TimeRAGProtocol(split_single_session=False).needs() == {"session 2"}
    assert QAProtocol(judge=LexicalJudge()).needs() == {needs.QA_ITEMS, needs.QA_ANSWERS}
    ops = MemoryOpsProtocol()
    assert ops.needs() == {"gold memory"}
    assert ops.refuses(SessionSummaries(llm, embedder)) is None
    assert ops.refuses(NoMemory(llm, embedder)) == "NoMemory has no memory updater (HasUpdater)"
