"""LangMem (langmem's memory store manager on LangGraph's InMemoryStore) as a memory method:
``memory=langmem`` (see ``_langmem`` for what is LangMem's and what is ours)."""

from recallbench.memory.langmem._adapters import EXTRACT_TASK, LangMemChat
from recallbench.memory.langmem._langmem import LangMemFailed, LangMemMemory

__all__ = ["EXTRACT_TASK", "LangMemChat", "LangMemFailed", "LangMemMemory"]
