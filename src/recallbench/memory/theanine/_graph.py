"""THEANINE's memory graph: linking rule (Algorithm 1) and raw timeline extraction (Algorithm 2).

Pure graph logic, no LLM and no embedder: ``_theanine.py`` decides which memories are assigned a
relation; this module decides where edges go and which linear paths are timelines.

Ong et al., "Towards Lifelong Dialogue Agents via Timeline-based Memory Management", NAACL 2025:
- G = (V, E) with directed edges <m_i, r_ij, m_j> from an older memory to a newer one (Eq. 1-5).
- Algorithm 1 lines 7-9: among the assigned associative memories M_a*, find the connected
  components of G^t holding them and link m_new to the most recent assigned memory of each.
- Eq. 9-10 / Algorithm 2 lines 6-7: from the oldest memory of the retrieved memory's component,
  every directed linear path through the retrieved memory to an out-degree-0 end is a raw timeline.

"Most recent" / "oldest" is insertion order: memories are added session by session, in the order
the summarizer wrote them, so a later node is never older than an earlier one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Edge:
    """A directed edge from an older memory ``src`` to a newer memory ``dst``."""

    src: str
    relation: str
    dst: str


class MemoryGraph:
    """A directed acyclic memory graph whose nodes are memory item ids in insertion order."""

    def __init__(self) -> None:
        self._order: dict[str, int] = {}
        self._out: dict[str, list[Edge]] = {}
        self._in: dict[str, list[Edge]] = {}

    # --- building ------------------------------------------------------------------------

    def add(self, node: str) -> None:
        """Add a memory; it is the most recent one so far."""
        if node in self._order:
            raise ValueError(f"memory {node!r} is already in the graph")
        self._order[node] = len(self._order)
        self._out[node] = []
        self._in[node] = []

    def link(self, src: str, relation: str, dst: str) -> Edge:
        """Add the edge ``src -relation-> dst``; ``src`` must be older than ``dst``."""
        for node in (src, dst):
            if node not in self._order:
                raise KeyError(f"memory {node!r} is not in the graph")
        if self._order[src] >= self._order[dst]:
            raise ValueError(f"edge {src!r} -> {dst!r} must go from an older to a newer memory")
        edge = Edge(src, relation, dst)
        self._out[src].append(edge)
        self._in[dst].append(edge)
        return edge

    # --- reading -------------------------------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self._order

    def __len__(self) -> int:
        return len(self._order)

    @property
    def nodes(self) -> list[str]:
        """Return the memories, oldest first."""
        return list(self._order)

    @property
    def edges(self) -> list[Edge]:
        """Return every edge, grouped by source in insertion order."""
        return [edge for node in self._order for edge in self._out[node]]

    def out_edges(self, node: str) -> list[Edge]:
        """Return the edges leaving ``node``."""
        return list(self._out[node])

    def in_edges(self, node: str) -> list[Edge]:
        """Return the edges entering ``node``."""
        return list(self._in[node])

    def relation(self, src: str, dst: str) -> str:
        """Return the relation label of the edge ``src -> dst``."""
        for edge in self._out[src]:
            if edge.dst == dst:
                return edge.relation
        raise KeyError(f"no edge {src!r} -> {dst!r}")

    def most_recent(self, nodes: Iterable[str]) -> str:
        """Return the most recent memory of ``nodes`` (Omega in Eq. 8)."""
        return max(nodes, key=self._order.__getitem__)

    def oldest(self, nodes: Iterable[str]) -> str:
        """Return the oldest memory of ``nodes`` (Theta in Eq. 9)."""
        return min(nodes, key=self._order.__getitem__)

    def components(self) -> dict[str, str]:
        """Map every memory to its weakly connected component, named by its oldest memory."""
        comp: dict[str, str] = {}
        for root in self._order:  # oldest first, so the first node reached names the component
            if root in comp:
                continue
            stack = [root]
            comp[root] = root
            while stack:
                node = stack.pop()
                neighbours = [e.dst for e in self._out[node]] + [e.src for e in self._in[node]]
                for nxt in neighbours:
                    if nxt not in comp:
                        comp[nxt] = root
                        stack.append(nxt)
        return comp

    # --- Algorithm 1: where m_new is linked --------------------------------------------

    def link_targets(
        self, assigned: Mapping[str, str], components: Mapping[str, str]
    ) -> list[tuple[str, str]]:
        """Return ``(memory, relation)`` pairs m_new is linked to (Algorithm 1, lines 7-9).

        Args:
            assigned: M_a* -- associative memories assigned a relation (not None), with it.
            components: component of each memory in G^t, frozen before the session's new
                memories are added (``components()`` of the graph before linking).
        """
        by_component: dict[str, list[str]] = {}
        for node in assigned:
            by_component.setdefault(components[node], []).append(node)
        targets = [self.most_recent(nodes) for nodes in by_component.values()]
        return [(node, assigned[node]) for node in sorted(targets, key=self._order.__getitem__)]

    # --- Algorithm 2: raw timelines ------------------------------------------------------

    def ancestors(self, node: str) -> set[str]:
        """Return the memories with a directed path to ``node`` (``node`` excluded)."""
        seen: set[str] = set()
        stack = [node]
        while stack:
            for edge in self._in[stack.pop()]:
                if edge.src not in seen:
                    seen.add(edge.src)
                    stack.append(edge.src)
        return seen

    def timeline_start(self, node: str) -> str:
        """Return m_start for ``node``: the oldest memory of its component (Eq. 9) when it has a
        directed path to ``node``, else the oldest memory that has one (or ``node`` itself)."""
        comp = self.components()
        members = [n for n, c in comp.items() if c == comp[node]]
        start = self.oldest(members)
        ancestors = self.ancestors(node)
        if start == node or start in ancestors:
            return start
        return self.oldest(ancestors) if ancestors else node

    def timelines(self, node: str, limit: int = 64) -> list[tuple[str, ...]]:
        """Return raw timelines through ``node`` (Eq. 10): linear paths m_start -> ... -> node
        -> ... -> an out-degree-0 end, in depth-first edge order, at most ``limit`` of them."""
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        start = self.timeline_start(node)
        allowed = self.ancestors(node) | {node}
        heads = self._paths(start, lambda n: n == node, allowed, limit)
        tails = self._paths(node, lambda n: not self._out[n], None, limit)
        out = [head + tail[1:] for head in heads for tail in tails]
        return out[:limit]

    def _paths(
        self, start: str, is_end: Callable[[str], bool], allowed: set[str] | None, limit: int
    ) -> list[tuple[str, ...]]:
        """Return directed paths from ``start`` to nodes where ``is_end`` holds (depth-first)."""
        found: list[tuple[str, ...]] = []
        stack: list[tuple[str, ...]] = [(start,)]
        while stack and len(found) < limit:
            path = stack.pop()
            if is_end(path[-1]):
                found.append(path)
                continue
            nxt = [e.dst for e in self._out[path[-1]] if allowed is None or e.dst in allowed]
            stack.extend((*path, n) for n in reversed(nxt))  # first edge explored first
        return found
