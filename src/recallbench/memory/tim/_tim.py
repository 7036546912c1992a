"""TiM, Think-in-Memory (Liu, Yang, Shen, Hu, Zhang, Gu, Zhang; arXiv 2311.08719, 2023).

TiM keeps *inductive thoughts* instead of raw dialogue. Stage 1 (recall): before answering,
the agent recalls thoughts from a hash-based memory cache. Stage 2 (post-think): after a
question-response pair, the agent derives new thoughts and organizes the memory with three
operations -- insert, forget (drop thoughts made obsolete or contradicted) and merge (fuse
thoughts saying the same thing). Storage and retrieval use locality-sensitive hashing: each
thought's embedding x is hashed to bucket F(x) = argmax([xR; -xR]) with a fixed random matrix R
of shape (d, b/2) (random-rotation LSH); a query retrieves only within its own bucket, ranked
by cosine similarity (top ``top_k``).

Implemented here: post-thinking after every (user turn, reply) pair of each observed session, the
LSH memory cache, insert/forget/merge against the thoughts in the new thought's bucket,
bucket-restricted retrieval. Offline (extractive) rules: thoughts are the CAIM offline thoughts
(first-person or recommending sentences, compressed to third person; ``memory/caim/_post.py``);
merge when cosine >= ``merge_threshold`` (keep the longer text, union provenance); forget an older
thought that says the opposite of the new one (same words up to a negation: "Mara likes tea" vs
"Mara does not like tea").

What we could not pin down (the paper text was not available in this repository; the above is
from its public abstract and our reading): the exact post-thinking, forget and merge prompts
(ours below); the number of buckets b and the top-k (ours: 8 and 5); whether merge/forget are
decided by the LLM per pair or by rules (ours: an LLM decision per new thought, against its
bucket's most similar thoughts above ``organize_threshold``); and what happens when the query's
bucket is empty (ours: ``fallback_probe`` probes the next buckets in order of the hash scores,
a multi-probe LSH step, until one is non-empty; False gives nothing, strictly in-bucket).
Deviations: embeddings are the run's embedder (MiniLM offline), not the paper's.
"""

from __future__ import annotations

import re

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.llm.protocol import LLMClient
from recallbench.llm.shapes import Pattern
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory._base import MemoryMethod, Message, render_history
from recallbench.memory.caim import compress, key_sentences
from recallbench.records import Episode, MemoryItem, Query, Recall, Session
from recallbench.text import DIALOGUE_STOPWORDS as STOPWORDS
from recallbench.text import light_stem as stem
from recallbench.text import words

SOURCE = "ours (TiM, Liu et al. 2023: prompt not available here)"
POST_THINK_PROMPT = (
    "Below is one exchange between {user} and {bot}. Post-think about it: write the inductive "
    "thoughts worth remembering for future conversations, each a short self-contained "
    "statement relating two entities (e.g. '{user}'s dog is named Rex'). Write one thought per "
    "line and nothing else; write NONE if there is nothing worth remembering.\n\n{pair}"
)
ORGANIZE_PROMPT = (
    "A new thought is about to be stored in memory next to similar existing thoughts.\n"
    "New thought: {new}\nExisting thoughts:\n{existing}\n\n"
    "Reply with exactly one line: MERGE <n>: <merged thought> if the new thought says the same "
    "as existing thought <n>; FORGET <n> if the new thought contradicts or updates existing "
    "thought <n>, which should be forgotten; INSERT otherwise."
)
RESPONSE_PROMPT = (
    "You are {bot}, talking with {user}. Your memory holds these thoughts from past "
    "conversations:\n{memory}\n\nConversation so far:\n{dialogue}\n\n"
    "Reply to {user}'s last message in one short turn, using the thoughts only if relevant."
)
NEGATIONS = frozenset("not no never don't doesn't didn't isn't wasn't aren't won't dislike".split())


def parse_thoughts(reply: str) -> list[str]:
    """One thought per line (bullets dropped); NONE or nothing -> []."""
    lines = [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s*", "", ln).strip() for ln in reply.splitlines()]
    return [ln for ln in lines if ln and ln.upper().strip(".") != "NONE" and len(words(ln)) >= 2]


def offline_post_think(pair: str, speakers: tuple[str, ...] = (), **_: object) -> str:
    """The qualifying sentences of the pair, compressed to third-person thoughts."""
    out = []
    for line in pair.splitlines():
        speaker, sep, text = line.partition(": ")
        if sep:
            out += [compress(e, speakers) for e in key_sentences(speaker, text)]
    return "\n".join(out) or "NONE"


def parse_organize(reply: str) -> tuple[str, int, str]:
    """Parse ``MERGE n: text`` / ``FORGET n`` / ``INSERT`` into (op, 0-based n, text)."""
    text = reply.strip()
    if m := re.match(r"^MERGE\s+(\d+)\s*:\s*(.+)$", text, re.I | re.S):
        return "merge", int(m.group(1)) - 1, m.group(2).strip().splitlines()[0]
    if m := re.match(r"^FORGET\s+(\d+)\b", text, re.I):
        return "forget", int(m.group(1)) - 1, ""
    if re.match(r"^INSERT\b", text, re.I):
        return "insert", -1, ""
    raise ParseError(f"expected MERGE/FORGET/INSERT, got {reply[:40]!r}")


def _core(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and w not in NEGATIONS)


def _negated(text: str) -> bool:
    ws = words(text)
    return sum(w in NEGATIONS or w.endswith("n't") for w in ws) % 2 == 1


def offline_organize(
    new: str, candidates: list[tuple[str, float]], merge_threshold: float, **_: object
) -> str:
    """FORGET the first candidate equal to the new thought up to a negation; MERGE the first
    with cosine >= merge_threshold into the longer text; else INSERT."""
    for i, (text, _sim) in enumerate(candidates, 1):
        if _core(text) == _core(new) and _negated(text) != _negated(new):
            return f"FORGET {i}"
    for i, (text, sim) in enumerate(candidates, 1):
        if sim >= merge_threshold:
            return f"MERGE {i}: {max(text, new, key=len)}"
    return "INSERT"


POST_THINK_TASK: PromptTask[list[str]] = PromptTask(
    name="tim.post_think",
    template=POST_THINK_PROMPT,
    parse=parse_thoughts,
    offline=offline_post_think,
    fallback=[],
    stage="memory",
    max_tokens=256,
    source=SOURCE,
)
ORGANIZE_TASK: PromptTask[tuple[str, int, str]] = PromptTask(
    name="tim.organize",
    template=ORGANIZE_PROMPT,
    parse=parse_organize,
    offline=offline_organize,
    fallback=("insert", -1, ""),
    stage="memory",
    max_tokens=96,
    source=SOURCE,
    reply=Pattern(r"INSERT|FORGET \d{1,2}|MERGE \d{1,2}: [^\n]{3,300}"),
)


class LSH:
    """Random-rotation LSH: F(x) = argmax([xR; -xR]) over ``n_buckets`` buckets (seeded R)."""

    def __init__(self, dim: int, n_buckets: int, seed: int) -> None:
        if n_buckets < 2 or n_buckets % 2:
            raise ValueError(f"n_buckets must be an even number >= 2, got {n_buckets}")
        self.R = np.random.default_rng(seed).standard_normal((dim, n_buckets // 2))

    def scores(self, x: np.ndarray) -> np.ndarray:
        proj = np.asarray(x, dtype=np.float64) @ self.R
        return np.concatenate([proj, -proj], axis=-1)

    def bucket(self, x: np.ndarray) -> int:
        return int(np.argmax(self.scores(x)))


class TiM(MemoryMethod):
    """Think-in-Memory: inductive thoughts in an LSH memory cache with insert/forget/merge."""

    name = "tim"

    def __init__(
        self,
        llm: LLMClient,
        embedder: TextEmbedder,
        *,
        n_buckets: int = 8,
        top_k: int = 5,
        seed: int = 0,
        merge_threshold: float = 0.85,
        organize_threshold: float = 0.5,
        fallback_probe: bool = True,
        recent_turns: int = 6,
    ) -> None:
        self.llm, self.embedder = llm, embedder
        self.lsh = LSH(embedder.dim, int(n_buckets), int(seed))
        self.top_k, self.merge_threshold = int(top_k), float(merge_threshold)
        self.organize_threshold, self.fallback_probe = float(organize_threshold), fallback_probe
        self.recent_turns = int(recent_turns)
        self.episode_id: str | None = None
        self.speakers: tuple[str, ...] = ()
        self._items: list[MemoryItem] = []
        self._counter = 0
        self.ops: dict[str, int] = {}

    def reset(self, episode: Episode) -> None:
        """Start ``episode`` with an empty memory cache."""
        super().reset(episode)
        self._items, self._counter = [], 0
        self.ops = {"insert": 0, "merge": 0, "forget": 0}

    def observe(self, session: Session) -> None:
        """Post-think after every (turn, reply) pair of the session and organize the memory."""
        if self.episode_id is None:
            raise RuntimeError("TiM: call reset(episode) before use")
        turns = session.turns
        for i in range(0, len(turns), 2):
            pair = turns[i : i + 2]
            res = self.llm.run(
                POST_THINK_TASK,
                pair=render_history(pair),
                user=pair[0].speaker,
                bot=self._other(pair[0].speaker),
                speakers=self.speakers,
            )
            for thought in res.value:
                self._organize(thought, tuple(t.turn_id for t in pair), session)

    def recall(self, query: Query) -> Recall:
        """Hash the query, rank the thoughts of its bucket by cosine, return the top_k."""
        if self.episode_id is None or query.episode_id != self.episode_id:
            raise RuntimeError(f"TiM: query for {query.episode_id!r}; call reset(episode) first")
        text = query.question or "\n".join(t.text for t in query.history[-1:])
        if not self._items or not text.strip():
            return Recall((), "", {"bucket": None})
        q = self.embedder.encode([text])[0]
        order = np.argsort(-self.lsh.scores(q), kind="stable")
        probes = order if self.fallback_probe else order[:1]
        for bucket in (int(b) for b in probes):
            members = [it for it in self._items if it.attrs["bucket"] == bucket]
            if members:
                break
        else:
            return Recall((), "", {"bucket": int(order[0]), "probed": len(probes)})
        sims = self.embedder.encode([it.text for it in members]) @ q
        ranked = sorted(range(len(members)), key=lambda i: (-float(sims[i]), i))[: self.top_k]
        items = tuple(members[i] for i in ranked)
        info = {
            "bucket": bucket,
            "query_bucket": int(order[0]),
            "scores": [round(float(sims[i]), 6) for i in ranked],
        }
        return Recall(items, "\n".join(it.text for it in items), info)

    def prompt(self, query: Query, recall: Recall) -> list[Message]:
        """The response prompt (ours) with the recalled thoughts and the recent dialogue."""
        user = query.history[-1].speaker if query.history else self._other(query.speaker)
        dialogue = render_history(query.history[-self.recent_turns :]) or "(none)"
        if query.question:
            dialogue += f"\n{user}: {query.question}"
        text = RESPONSE_PROMPT.format(
            bot=query.speaker, user=user, memory=recall.text or "(none)", dialogue=dialogue
        )
        return [{"role": "user", "content": text}]

    def snapshot(self) -> list[MemoryItem]:
        """Return the memory cache (thoughts with their bucket)."""
        return list(self._items)

    def _organize(self, thought: str, sources: tuple[str, ...], session: Session) -> None:
        vec = self.embedder.encode([thought])[0]
        bucket = self.lsh.bucket(vec)
        members = [it for it in self._items if it.attrs["bucket"] == bucket]
        sims = self.embedder.encode([it.text for it in members]) @ vec if members else []
        near = sorted(
            (
                (float(s), it)
                for s, it in zip(sims, members, strict=True)
                if s >= self.organize_threshold
            ),
            key=lambda p: -p[0],
        )[:5]
        op, index, text = "insert", -1, ""
        if near:
            existing = "\n".join(f"[{i}] {it.text}" for i, (_, it) in enumerate(near, 1))
            op, index, text = self.llm.run(
                ORGANIZE_TASK,
                new=thought,
                existing=existing,
                candidates=[(it.text, s) for s, it in near],
                merge_threshold=self.merge_threshold,
            ).value
            if not 0 <= index < len(near):
                op = "insert"
        self.ops[op] += 1
        if op == "forget":
            self._items.remove(near[index][1])
        if op == "merge":
            old = near[index][1]
            self._items[self._items.index(old)] = MemoryItem(
                old.item_id,
                text,
                "thought",
                old.created,
                tuple(dict.fromkeys(old.source_ids + sources)),
                {
                    **old.attrs,
                    "bucket": self.lsh.bucket(self.embedder.encode([text])[0]),
                    "merged": old.attrs.get("merged", 0) + 1,
                },
            )
            return
        self._counter += 1
        self._items.append(
            MemoryItem(
                f"{self.episode_id}/tim/{self._counter}",
                thought,
                "thought",
                session.start,
                sources,
                {"bucket": bucket, "session": session.index},
            )
        )

    def _other(self, speaker: str) -> str:
        return next((s for s in self.speakers if s != speaker), "the assistant")
