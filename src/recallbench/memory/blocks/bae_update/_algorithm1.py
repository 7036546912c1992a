"""Bae et al.'s Algorithm 1: the new memory M' from pairwise operations over (m_i, s_j).

Paper: Bae et al., "Keep Me Updated! Memory Management in Long-term Conversations", Findings of
EMNLP 2022, sec. 4.3, Algorithm 1: every pair (m_i, s_j) of old memory sentence and new summary
sentence gets O(m_i, s_j) in {P, R, A, D}; REPLACE and DELETE drop m_i, DELETE also drops s_j,
PASS against a surviving m_i drops s_j; M' = M u S of what is left. The pairwise classifier is
given (``operate``), so the LLM prompt, the English rule and the character n-gram rule all run
through the same function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

OPS = ("P", "R", "A", "D")
NAMES = {"P": "PASS", "R": "REPLACE", "A": "APPEND", "D": "DELETE"}


def algorithm1(
    n_memory: int, n_summary: int, ops: Mapping[tuple[int, int], str]
) -> tuple[list[int], list[int]]:
    """Run Algorithm 1 on indices; ``ops[(i, j)]`` is "P", "R", "A" or "D".

    Returns the indices of the memory and summary sentences that stay (M' = M u S, in order).
    """
    bad = {op for op in ops.values() if op not in OPS}
    if bad:
        raise ValueError(f"algorithm1: operations must be one of {OPS}, got {sorted(bad)}")
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


def update_texts(
    memory: Sequence[str], summary: Sequence[str], operate: Callable[[str, str], str]
) -> tuple[list[str], dict[tuple[int, int], str]]:
    """Return M' (texts) and the operations, ``operate(m, s)`` giving "P", "R", "A" or "D"."""
    ops = {(i, j): operate(m, s) for i, m in enumerate(memory) for j, s in enumerate(summary)}
    kept_m, kept_s = algorithm1(len(memory), len(summary), ops)
    return [memory[i] for i in kept_m] + [summary[j] for j in kept_s], ops
