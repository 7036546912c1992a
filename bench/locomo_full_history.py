"""Benchmark: the per-question work of LoCoMo's Full history job, before and after issue 38.

    python bench/locomo_full_history.py [--data-dir ../shared/data] [--conversations 1]

Per question of a conversation (all asked after its last session, as ``locomo_qa`` asks them):
the method's recall (``FullHistory.recall``: ~16k tokens of history kept), the token count of
the answer prompt the LLM layer records as usage (``count_message_tokens``), and the offline
reader (``offline_answer`` over the ~400 recalled items). Each step runs the way the code did
before (the history re-rendered and re-counted per question, every prompt encoded whole, every
item's content words stemmed per question) and the way it does now, in this process, and
prints seconds and the ratio new / before.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from recallbench.datasets.locomo import load
from recallbench.llm.backends.gguf import gguf_tokenizer, line_memo_counter, smollm2_gguf
from recallbench.llm.types import count_message_tokens
from recallbench.memory.full_history import FullHistory, _render
from recallbench.protocols.locomo._tasks import ANSWER_TASK
from recallbench.protocols.qa import offline_answer
from recallbench.records import Query
from recallbench.text import answer_content, answer_words, content_stems, light_stem


class Counter:
    """An LLM stand-in with the extractive backend's context length and a given counter."""

    context_length = 16385

    def __init__(self, count):
        self.count_tokens = count


def before_answer(question: str, items: list[str], names: list[str]) -> str:
    """``offline_answer`` as it was: every item's content stems computed per question."""
    skip = {light_stem(w) for n in names for w in answer_words(n)}
    asked = {light_stem(w) for w in answer_content(answer_words(question))} - skip
    best, top = "I don't know.", 0
    for text in items:
        overlap = len(asked & {light_stem(w) for w in answer_content(answer_words(text))})
        if overlap > top:
            best, top = text, overlap
    return best


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--conversations", type=int, default=1)
    opts = parser.parse_args()
    tok = gguf_tokenizer(smollm2_gguf())

    def whole(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    totals = {"recall": [0.0, 0.0], "prompt count": [0.0, 0.0], "offline reader": [0.0, 0.0]}
    questions = 0
    for episode in load(str(opts.data_dir))[: opts.conversations]:
        names = list(episode.speakers)
        runs = []
        for k, count in enumerate((whole, line_memo_counter(tok))):
            method = FullHistory(Counter(count), None)  # type: ignore[arg-type]
            method.reset(episode)
            for session in episode.sessions:
                method.observe(session)
            if k == 0:  # the code before: the rendered history counted per question (it
                # counted it once more for the record: "before" is a lower bound)
                method._history_tokens = (
                    lambda past, start, c=count: (  # type: ignore[method-assign]
                        c(_render(past[start:])) if past[start:] else 0
                    )
                )
            queries = [
                Query(episode.episode_id, len(episode.sessions), (), names[0], None, qa.question)
                for qa in episode.qa
            ]
            t, recalls = timed(lambda m=method, qs=queries: [m.recall(q) for q in qs])
            totals["recall"][k] += t
            prompts = [
                ANSWER_TASK.render(memory=r.text, question=q.question)
                for r, q in zip(recalls, queries, strict=True)
            ]
            t, counted = timed(lambda c=count, ps=prompts: [count_message_tokens(p, c) for p in ps])
            totals["prompt count"][k] += t
            reader = before_answer if k == 0 else offline_answer
            content_stems.cache_clear()
            t, answers = timed(
                lambda rd=reader, rs=recalls, qs=queries, ns=names: [
                    rd(q.question or "", [i.text for i in r.items], ns)
                    for r, q in zip(rs, qs, strict=True)
                ]
            )
            totals["offline reader"][k] += t
            runs.append((counted, answers, [r.info for r in recalls]))
        assert runs[0] == runs[1], "the new code must give the same counts, answers and recalls"
        questions += len(episode.qa)
    print(f"{questions} questions, {opts.conversations} conversation(s); same results both ways")
    for step, (old, new) in totals.items():
        print(f"{step:<16} before {old:7.2f} s   now {new:7.2f} s   now/before {new / old:.3f}")
    old, new = (sum(v[k] for v in totals.values()) for k in (0, 1))
    print(f"{'all':<16} before {old:7.2f} s   now {new:7.2f} s   now/before {new / old:.3f}")


if __name__ == "__main__":
    main()
