"""Probes built from a run's own questions: known answers whose right verdict is known.

For every question of the run (its gold answer ``reference``), with one seed:

- ``gold``: the gold answer itself (control: a judge should accept it).
- ``specific_wrong``: the gold answer of ANOTHER question of the run, assigned by a seeded
  derangement (Sattolo's algorithm: one random cycle, so no question keeps its own answer),
  repaired by swaps so that no question gets an answer without content words ("Yes") or with
  a content word near its own gold answer's; a question whose conflict no swap removes takes
  a seeded random fitting donor (counted: ``specific_wrong_fallbacks``), or gets no probe.
- ``vague``: a generic answer built from the question's topic words without the answer's
  content: the question's content words (``text.answer_content``) minus every word *near* a
  gold content word (same light stem, one containing the other at 4+ letters, or a difflib
  ratio >= 0.8 at 5+ letters: looser than the lexical judge's match, so no gold word slips in),
  at most ``TOPIC_WORDS`` of them in question order, put into the first of ``VAGUE_TEMPLATES``
  whose own words are not near a gold word: "They mentioned something about {topic} once, but
  that was a while back." When the gold answer restates every content word of the question
  ("What is Alexander's hobby?" / "Alexander's hobby is biking."), only the words that answer
  are banned (the lexical judge's key tokens, "biking"), so the answer stays on topic
  ("... about alexander and hobby ..."); without any topic word the topic is "it".
- ``verbose``: the gold answer at a seeded position among ``distractors`` sentences: other
  questions' gold answers and memory lines of the run's stores (at most ``MEMORY_WORDS`` words
  each), every one sharing no near word with this question's gold answer or its question.
- ``verbose_wrong``: the same distractors without the gold answer (what length alone earns).
- ``empty``: the empty answer.

A judge that accepts ``specific_wrong``, ``vague``, ``verbose_wrong`` or ``empty`` accepts a
wrong answer; ``verbose`` minus ``gold`` is what padding changes (EverMind-AI/EverOS#8).
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from recallbench.judges.lexical import match
from recallbench.text import answer_content, answer_words, light_stem

PROBES = ("gold", "specific_wrong", "vague", "verbose", "verbose_wrong", "empty")
WRONG_PROBES = ("specific_wrong", "vague", "verbose_wrong", "empty")
TOPIC_WORDS = 4
MEMORY_WORDS = 40
VAGUE_TEMPLATES = (
    "They mentioned something about {topic} once, but that was a while back.",
    "It had to do with {topic}, from one of our earlier chats.",
    "Something about {topic}.",
)


@dataclass(frozen=True)
class Question:
    """One question of the run: its id, episode, text and gold answer."""

    key: str  # "<episode>/<question id>"
    episode_id: str
    question: str
    reference: str


@dataclass(frozen=True)
class Probe:
    """A probe answer to ``question``; ``source`` says where its text came from."""

    kind: str
    question: Question
    answer: str
    source: str = ""


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    return frozenset(light_stem(w) for w in answer_content(answer_words(text)))


def _near(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) >= 4 and (a in b or b in a):
        return True
    return min(len(a), len(b)) >= 5 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def shares_content(text: str, stems: frozenset[str]) -> bool:
    """Return True when a content word of ``text`` is near one of ``stems`` (module rule)."""
    return any(_near(s, g) for s in _stems(text) for g in stems)


def gold_stems(question: Question) -> frozenset[str]:
    """The light stems of the gold answer's content words."""
    return _stems(question.reference)


def key_stems(question: Question) -> frozenset[str]:
    """The light stems of the words that answer: the lexical judge's key tokens of the gold
    answer (its content words that do not restate the question; ``judges.lexical.match``)."""
    return frozenset(light_stem(w) for w in match(question.question, question.reference, "").key)


def derangement(
    n: int, seed: int, ok: Callable[[int, int], bool] | None = None
) -> tuple[list[int], list[int]]:
    """A seeded permutation of ``range(n)`` without fixed points; pairs ``ok`` rejects are
    repaired by swapping targets. Return the permutation and the positions left not ``ok``.

    Sattolo's algorithm draws a uniformly random n-cycle, which has no fixed point for n >= 2.
    """
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 items, got {n}")
    rng = random.Random(seed)
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)  # j < i: Sattolo (Fisher-Yates would allow j == i)
        perm[i], perm[j] = perm[j], perm[i]
    if ok is None:
        return perm, []
    order = list(range(n))
    for i in range(n):
        if ok(i, perm[i]):
            continue
        rng.shuffle(order)
        for k in order:
            if k != i and perm[k] != i and perm[i] != k and ok(i, perm[k]) and ok(k, perm[i]):
                perm[i], perm[k] = perm[k], perm[i]
                break
    return perm, [i for i in range(n) if not ok(i, perm[i])]


def vague_answer(question: Question) -> str:
    """The vague-but-topical answer of ``question`` (module rule)."""
    asked = list(dict.fromkeys(answer_content(answer_words(question.question))))
    gold = gold_stems(question)
    topic = [w for w in asked if not shares_content(w, gold)]
    if not topic:  # the gold answer restates the question: keep what it restates, not the key
        gold = key_stems(question)
        topic = [w for w in asked if not shares_content(w, gold)]
    words = topic[:TOPIC_WORDS]
    text = ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)
    for template in VAGUE_TEMPLATES:
        if not shares_content(template.format(topic=""), gold):
            return template.format(topic=text or "it")
    return f"About {text or 'it'}."


def _sentence(text: str) -> str:
    words = text.split()
    text = " ".join(words[:MEMORY_WORDS]) + (" ..." if len(words) > MEMORY_WORDS else "")
    return text if text.endswith((".", "!", "?", "...")) else text + "."


def _unrelated(text: str, banned: frozenset[str]) -> bool:
    """A distractor has content words of its own, none near a banned stem."""
    return bool(_stems(text)) and not shares_content(text, banned)


def distractors(
    question: Question,
    others: Sequence[str],
    memory_lines: Sequence[str],
    k: int,
    rng: random.Random,
) -> list[str]:
    """Up to ``k`` sentences unrelated to ``question``: half other gold answers, half memory."""
    banned = gold_stems(question) | _stems(question.question)
    usable_answers = [t for t in dict.fromkeys(others) if _unrelated(t, banned)]
    usable_memory = [t for t in dict.fromkeys(memory_lines) if _unrelated(t, banned)]
    picked = rng.sample(usable_memory, min(len(usable_memory), k // 2))
    picked += rng.sample(usable_answers, min(len(usable_answers), k - len(picked)))
    if len(picked) < k:  # few other answers: more memory lines
        rest = [t for t in usable_memory if t not in picked]
        picked += rng.sample(rest, min(len(rest), k - len(picked)))
    rng.shuffle(picked)
    return [_sentence(t) for t in picked]


def _padded(q: Question, pads: list[str], rng: random.Random) -> dict[str, Probe]:
    """The ``verbose`` and ``verbose_wrong`` probes of ``q`` (none without distractors)."""
    if not pads:
        return {}
    at = rng.randrange(len(pads) + 1)
    verbose = " ".join([*pads[:at], _sentence(q.reference), *pads[at:]])
    note = f"{len(pads)} distractors, gold at {at}"
    return {
        "verbose": Probe("verbose", q, verbose, note),
        "verbose_wrong": Probe("verbose_wrong", q, " ".join(pads), f"{len(pads)} distractors"),
    }


def _swaps(questions: Sequence[Question], seed: int) -> tuple[list[int], int]:
    """Each question's specific-but-wrong donor (-1: none) and how many needed a fallback.

    The donors are a seeded derangement (``derangement``); a question whose conflict no swap
    removes (e.g. the only other answers are near its own) takes a seeded random donor that
    is ``ok`` (answers may then repeat), or none when no other answer is.
    """
    if len(questions) < 2:
        return [-1] * len(questions), 0
    stems = [gold_stems(q) for q in questions]

    def ok(i: int, j: int) -> bool:  # a donor answer with content, none of it near i's gold
        return bool(stems[j]) and not shares_content(questions[j].reference, stems[i])

    perm, conflicts = derangement(len(questions), seed, ok)
    rng = random.Random(seed)
    for i in conflicts:
        fits = [j for j in range(len(questions)) if j != i and ok(i, j)]
        perm[i] = rng.choice(fits) if fits else -1
    return perm, len(conflicts)


def build_probes(
    questions: Sequence[Question],
    memory_lines: Mapping[str, Sequence[str]],
    seed: int = 0,
    n_distractors: int = 4,
    kinds: Sequence[str] = PROBES,
) -> tuple[list[Probe], dict[str, int]]:
    """Build the probes ``kinds`` of every question; return them and counts of missing ones.

    ``memory_lines`` maps an episode id to its memory texts (distractors for ``verbose``).
    """
    unknown = sorted(set(kinds) - set(PROBES))
    if unknown:
        raise ValueError(f"unknown probes {unknown} (options: {', '.join(PROBES)})")
    rng = random.Random(seed)
    swap, conflicts = _swaps(questions, seed)
    references = [q.reference for q in questions]
    probes: list[Probe] = []
    for i, q in enumerate(questions):
        others = references[:i] + references[i + 1 :]
        pads = distractors(q, others, memory_lines.get(q.episode_id, ()), n_distractors, rng)
        made = {
            "gold": Probe("gold", q, q.reference),
            "vague": Probe("vague", q, vague_answer(q)),
            "empty": Probe("empty", q, ""),
            **_padded(q, pads, rng),
        }
        if swap[i] >= 0:
            donor = questions[swap[i]]
            made["specific_wrong"] = Probe("specific_wrong", q, donor.reference, donor.key)
        probes += [made[k] for k in kinds if k in made]
    counts = {f"missing_{k}": len(questions) - sum(p.kind == k for p in probes) for k in kinds}
    if "specific_wrong" in kinds:
        counts["specific_wrong_fallbacks"] = conflicts
    return probes, counts
