"""Summary-Memory, TimeRAG-Memory's baseline (Sun et al. 2023, Table III): "maintain a running
summary/persona string and always include it".

Implemented: the recursive summary of ``rsum_llm.RSumLLM`` (the memory rewritten after every
session from the previous memory and the session) as the running summary, shown whole, in the
TimeRAG generation prompt (sec. 3.5) so that only the memory differs from ``timerag`` ("all
variants share the same generator, prompt template, and decoding parameters", sec. 4): each
summary sentence is one memory line ``- [summary] <sentence>``.

Deviations:
- The paper does not say how its running summary is produced; RSum-LLM's recursive update (its
  prompts reconstructed, see ``rsum_llm``) is the project's existing running summary.
"""

from __future__ import annotations

from recallbench.llm.types import Message
from recallbench.memory.blocks.prompts import response_messages
from recallbench.memory.rsum_llm import RSumLLM
from recallbench.records import Query, Recall


class SummaryMemory(RSumLLM):
    """A running summary always in the prompt, rendered in TimeRAG's template."""

    def recall(self, query: Query) -> Recall:
        """The whole running summary, one memory line per sentence."""
        pool = super().recall(query)
        lines = "\n".join(f"- [summary] {item.text}" for item in pool.items)
        return Recall(pool.items, lines, pool.info)

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        return response_messages("timerag", recall.text, query)
