"""Parse rate of every PromptTask family on a REAL small model: free text vs structured outputs.

1. Real inputs: the memory methods and protocols run one episode of the real data (MSC, LUFY,
   GVD; ``--data-dir``) on the ``extractive`` backend through a recording LLM, which keeps the
   fields of every task call (THEANINE linking and refinement, LUFY, the QA judge, CAIM, TiM,
   MemoChat, COMEDY, RSum, the TimeRAG extractor, the Fig. 25 memory operations of THEANINE's
   "+ Memory Update" baseline, TeaFarm). Tasks with no offline twin (G-Eval, NLI, entailment,
   CAIM coherence, LUFY's rating) get inputs built from the same episodes.
2. Up to ``--per-task`` calls per task are sent to a real llama-cpp-python server serving the
   SmolLM2-135M GGUF (``recallbench.testing.llama_server``), once per mode (``off`` = the papers'
   free text, ``llamacpp`` = the task's reply shape as a GBNF grammar / JSON schema), and the
   parse rate, calls and seconds are printed per task. Free-text replies are cut at
   ``--max-tokens`` (SmolLM2 rambles to the task's bound otherwise; a cut reply that parses
   counts as parsed). Nothing is cached: every call is a real request.

    .venv/bin/python bench/structured.py --data-dir ../shared/data [--per-task 20]

The LAST line is ``structured_min=<lowest structured parse rate over the tasks>``.

Measured (2026-11-26, ``--per-task 20``, 5 episodes of ../shared/data per source, 2 cores shared
with other jobs): with structured replies every one of the 39 tasks parsed >= 95% (comedy.compress
19/20, every other task all of its calls; the CAIM relevance, review and ontology-expansion rows
after this session's reply-shape and parser fixes); free text parsed nothing for 18 tasks.
Of the tasks with a reply shape only judge.caim.contextual_coherence is not measured: it has no
offline stand-in, so the recording run makes no such call (its siblings, the same 0/0.5/1 choice,
parsed 11/11).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from recallbench.cli import compose_job
from recallbench.cli.build import build_dataset, build_memory_factory, build_protocol
from recallbench.embed import HashingEmbedder
from recallbench.judges.entailment import ENTAILMENT_TASK
from recallbench.judges.geval import GEVAL_TASK
from recallbench.judges.llm import RATING_TASK
from recallbench.judges.nli import NLI_TASK
from recallbench.llm import LLM, ExtractiveBackend, PromptTask, build_llm
from recallbench.records import Episode
from recallbench.testing.llama_server import LlamaServer

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"
MSC = ["dataset=msc", "embedder=hashing"]
RESPONSE = [*MSC, "protocol.target_sessions=[3]"]
GVD = ["experiment=caim_table3", "embedder=hashing"]
# label -> (overrides, keys set after composing): each runs episodes on the recording LLM
SOURCES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "theanine": ([*RESPONSE, "memory=theanine"], {}),
    "memory_update": ([*RESPONSE, "memory=memory_update"], {}),
    "memochat": ([*RESPONSE, "memory=memochat"], {}),
    "comedy": ([*RESPONSE, "memory=comedy"], {}),
    "rsum": ([*RESPONSE, "memory=rsum_llm"], {}),
    "timerag": ([*MSC, "memory=timerag", "memory.writer=llm", "protocol=response_timerag"], {}),
    "teafarm": (
        [*MSC, "memory=memory_retrieval", "protocol=teafarm"],
        {"protocol.summaries": "llm"},
    ),
    "lufy": (
        ["experiment=lufy_table11", "lufy_pair=lufy", "judge=llm", "embedder=hashing"],
        {"memory.surprise": "unigram"},
    ),
    "caim": ([*GVD, "memory=caim"], {"protocol.caim_judge": {"name": "llm"}}),
    "tim": ([*GVD, "memory=tim"], {}),
}


class Recorder(LLM):
    """The extractive LLM that also keeps every task call (its task and fields)."""

    def __init__(self) -> None:
        super().__init__(ExtractiveBackend())
        self.calls: dict[str, list[tuple[PromptTask, dict[str, Any]]]] = defaultdict(list)

    def run(self, task: PromptTask, **fields: Any) -> Any:
        self.calls[task.name].append((task, fields))
        return super().run(task, **fields)

    def run_many(self, task: PromptTask, fields_list: list[dict[str, Any]], **kw: Any) -> Any:
        self.calls[task.name] += [(task, f) for f in fields_list]
        return super().run_many(task, fields_list, **kw)


def record(label: str, data_dir: Path, tmp: Path, episodes: int) -> Recorder:
    """Run the first ``episodes`` episodes of a source on a ``Recorder``; return it."""
    overrides, patches = SOURCES[label]
    cfg, _ = compose_job([*overrides, f"paths.results_dir={tmp}", f"paths.cache_dir={tmp}"])
    for key, value in patches.items():
        OmegaConf.update(cfg, key, value, merge=False)
    cfg.dataset.data_dir = str(data_dir if (data_dir / cfg.dataset.name).exists() else FIXTURES)
    chosen = build_dataset(cfg.dataset)[:episodes]
    llm, embedder = Recorder(), HashingEmbedder()
    protocol = build_protocol(cfg.protocol, 0, llm, embedder, str(tmp))
    if (prepare := getattr(protocol, "prepare", None)) is not None:
        prepare(chosen)
    make = build_memory_factory(cfg.memory, llm, embedder)
    started = time.perf_counter()
    for episode in chosen:
        protocol.run_episode(episode, make(), llm)
    print(
        f"recorded {label}: {sum(map(len, llm.calls.values()))} calls, "
        f"{time.perf_counter() - started:.0f} s ({len(chosen)} episodes)",
        flush=True,
    )
    return llm


def built_inputs(episode: Episode, texts: list[str]) -> dict[str, list[tuple[PromptTask, dict]]]:
    """Inputs of the tasks without an offline twin, from an MSC episode's turns and summaries."""
    turns = [t for s in episode.sessions for t in s.turns]
    summary = [str(x) for s in episode.sessions for x in s.gold.get("summary") or []]
    facts = summary or [t.text for t in turns]
    out: dict[str, list[tuple[PromptTask, dict]]] = defaultdict(list)
    for i, turn in enumerate(turns[1:40]):
        context = "\n".join(f"{t.speaker}: {t.text}" for t in turns[max(0, i - 4) : i + 1])
        fact, other = facts[i % len(facts)], texts[(i * 7) % len(texts)]
        out[NLI_TASK.name].append((NLI_TASK, {"premise": fact, "hypothesis": turn.text}))
        out[ENTAILMENT_TASK.name].append(
            (ENTAILMENT_TASK, {"memory": fact, "dialogue": context, "response": turn.text})
        )
        fields = {"speaker": turn.speaker, "current_dialogue_context": context}
        out[GEVAL_TASK.name].append((GEVAL_TASK, {**fields, "memory1": fact, "memory2": other}))
        script = "\n".join(f"{t.speaker}: {t.text}" for t in turns[i : i + 8])
        out[RATING_TASK.name].append(
            (RATING_TASK, {"user_name": turn.speaker, "conversation_script": script})
        )
    return out


def spread(items: list[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (all when there are fewer)."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 else items[:1]


def measure(
    calls: list[tuple[PromptTask, dict]], base_url: str, mode: str, cap: int, repairs: int = 0
) -> dict:
    """Send ``calls`` with ``structured=mode`` (and ``repairs`` repair turns); return parsed,
    calls, seconds, one failed reply."""
    cfg = {"backend": "openai", "model": "smollm2", "base_url": base_url, "structured": mode}
    cfg |= {"concurrency": 1, "timeout_s": 600, "max_retries": 0, "repairs": repairs}
    llm = build_llm(cfg, None)
    parsed, seconds, sample = 0, 0.0, ""
    try:
        for task, fields in calls:
            if task.reply is None or mode == "off":  # free text: cut at the bench's bound
                task = dataclasses.replace(task, max_tokens=min(task.max_tokens, cap))
            started = time.perf_counter()
            result = llm.run(task, **fields)
            seconds += time.perf_counter() - started
            parsed += result.failure is None
            if result.failure and not sample:
                sample = result.raw[:160]
    finally:
        llm.close()
    return {"parsed": parsed, "calls": len(calls), "seconds": seconds, "unparsed_sample": sample}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=FIXTURES)
    parser.add_argument("--per-task", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=5, help="episodes recorded per source")
    parser.add_argument("--max-tokens", type=int, default=256, help="cap of free-text replies")
    parser.add_argument("--modes", default="off,llamacpp")
    parser.add_argument("--only", default="", help="comma-separated sources (default: all)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--repairs", type=int, default=0, help="repair turns per unparsed reply (generator.repairs)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama.cpp threads (1: spinning threads on loaded cores stall)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on a kill too
    os.environ.setdefault("RECALLBENCH_DATA_DIR", str(args.data_dir))  # LUFY's EmoBank file
    calls: dict[str, list[tuple[PromptTask, dict]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for label in SOURCES:
            if args.only and label not in args.only.split(","):
                continue
            recorder = record(label, args.data_dir, Path(tmp), args.episodes)
            for name, got in recorder.calls.items():
                calls[name] += got
        cfg, _ = compose_job(MSC)
        cfg.dataset.data_dir = str(args.data_dir if (args.data_dir / "msc").exists() else FIXTURES)
        texts = [f["sentence1"] for _, f in calls.get("theanine.link_relation", [])] or ["-"]
        for name, got in built_inputs(build_dataset(cfg.dataset)[0], texts).items():
            calls[name] += got
    modes = args.modes.split(",")
    figures: dict[str, dict[str, Any]] = {}
    with LlamaServer(n_threads=args.threads) as server:
        for name in sorted(n for n in calls if not args.tasks or n in args.tasks.split(",")):
            chosen = spread(calls[name], args.per_task)
            shape = chosen[0][0].reply
            row: dict[str, Any] = {"shape": shape.kind if shape else "free text"}
            for mode in modes:
                row[mode] = measure(chosen, server.base_url, mode, args.max_tokens, args.repairs)
            figures[name] = row
            print(_line(name, row, modes), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    constrained = next((m for m in modes if m != "off"), modes[-1])
    shaped = [r[constrained] for r in figures.values() if r["shape"] != "free text"]
    lowest = min((r["parsed"] / r["calls"] for r in shaped if r["calls"]), default=0.0)
    print(f"structured_min={lowest:.3f}")


def _line(name: str, row: dict[str, Any], modes: list[str]) -> str:
    cells = []
    for mode in modes:
        m = row[mode]
        rate = m["parsed"] / m["calls"] if m["calls"] else 0.0
        cells.append(f"{mode} {m['parsed']:>3}/{m['calls']:<3} {rate:>6.1%} {m['seconds']:>6.0f} s")
    return f"{name:<38} {row['shape']:<9} " + " | ".join(cells)


if __name__ == "__main__":
    main()
