"""Pairwise G-Eval of retrieved-memory helpfulness (THEANINE App. E.1, Fig. 26; Fig. 5 left).

For the same dialogue contexts, two runs (any two memory methods on the same dataset, protocol
``response``) recalled memories; an LLM judge picks the more helpful MEMORY for answering the
last utterance. Each context is judged twice with the memories' order swapped to cancel
position bias; the two verdicts give A 1 (win), 0.5 (tie) or 0 (loss) point each, and the
context counts as A's win when A's points sum above 1, a loss below 1, a tie at exactly 1
(e.g. a win in one order and a loss in the other is a tie). Raw judge outputs are kept.

Input: each run folder's ``predictions.jsonl`` with the recalled memory text in
``Prediction.meta["recall_text"]`` (recorded by the response protocol), paired on ``pred_id``;
the dialogue context is rebuilt from the episodes (the turn before which the response was made).
Offline (``extractive``): the more helpful memory is the one sharing more content words with the
last utterance (then the whole context), a documented no-LLM stand-in for GPT-4.

    result = compare_runs(run_a, run_b, episodes, llm, max_episodes=5)   # paper: 5 episodes
    result.summary  -> {"win": .., "tie": .., "loss": .., "n": .., "sign_test_p": ..}

Deviation: the paper reports win/tie/loss without saying how it handled order; the swap rule
above is ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbench.llm.task import ParseError, PromptTask
from recallbench.records import Episode, Prediction, Turn, read_jsonl
from recallbench.text import answer_content as content
from recallbench.text import answer_words as words
from recallbench.text import light_stem as stem

# THEANINE Fig. 26 "Prompt for G-Eval: Helpfulness of Retrieved Memories", verbatim.
GEVAL_PROMPT = """Your task is to choose a more helpful MEMORY based on the below criterion.

CRITERION:

Helpfulness - A more helpful MEMORY should contain speaker information that is related to CURRENT DIALOGUE CONTEXT, enabling the {speaker} to respond in an appropriate context to the last utterance of the CURRENT DIALOGUE CONTEXT.

The output format should be as follows: Explanation: (a brief explanation) Choice: (answer with "1", "2", or "tie")

Now choose the MEMORY that has better Helpfulness.

CURRENT DIALOGUE CONTEXT: {current_dialogue_context}

MEMORY 1: {memory1}

MEMORY 2: {memory2}

YOUR OUTPUT:"""  # noqa: E501
GEVAL_SOURCE = "THEANINE (Ong et al., NAACL 2025) Fig. 26, verbatim"
EMPTY_MEMORY = "(no memory)"

_CHOICE = re.compile(r"Choice\s*:\s*[\"'*`(]*\s*(1|2|tie)\b", re.I)


def parse_choice(reply: str) -> str:
    """Parse a Fig. 26 reply: the last ``Choice: 1|2|tie`` -> "1", "2" or "tie"."""
    found = _CHOICE.findall(reply)
    if not found:
        raise ParseError(f"Fig. 26 reply has no 'Choice: 1/2/tie': {reply[-120:]!r}")
    return found[-1].lower()


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content(words(text))}


def offline_choice(last_utterance: str, context: str, memory1: str, memory2: str, **_: Any) -> str:
    """Fig. 26 without an LLM: more content words shared with the last utterance, then context."""
    keys = []
    for memory in (memory1, memory2):
        have = _stems(memory)
        keys.append((len(have & _stems(last_utterance)), len(have & _stems(context))))
    choice = "tie" if keys[0] == keys[1] else ("1" if keys[0] > keys[1] else "2")
    return (
        f"Explanation: offline lexical overlap (last utterance, context): memory 1 {keys[0]}, "
        f"memory 2 {keys[1]}. Choice: {choice}"
    )


GEVAL_TASK = PromptTask(
    name="judge.geval_helpfulness",
    template=GEVAL_PROMPT,
    parse=parse_choice,
    offline=offline_choice,
    fallback=None,
    stage="judge",
    max_tokens=256,
    temperature=0.0,
    source=GEVAL_SOURCE,
)


@dataclass
class GEvalResult:
    """Per-context rows (raw judge outputs of both orders) and win/tie/loss rates of A vs B."""

    name_a: str
    name_b: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``geval_<a>_vs_<b>.jsonl`` (rows) and ``.json`` (summary) into ``out_dir``."""
        from recallbench.io import write_json, write_jsonl_rows

        out = Path(out_dir)
        stem_ = f"geval_{self.name_a}_vs_{self.name_b}"
        write_json(out / f"{stem_}.json", self.summary)
        write_jsonl_rows(out / f"{stem_}.jsonl", self.rows)
        return out / f"{stem_}.json"


def _recall_text(pred: Prediction, where: str) -> str:
    if "recall_text" not in pred.meta:
        raise KeyError(
            f"{where}: prediction {pred.pred_id!r} has no meta['recall_text'] (keys: "
            f"{sorted(pred.meta)}); G-Eval needs the recalled memory text: rerun with a "
            "response protocol that records it"
        )
    return str(pred.meta["recall_text"]).strip() or EMPTY_MEMORY


def _contexts(episodes: Sequence[Episode]) -> dict[str, tuple[str, tuple[Turn, ...]]]:
    """turn id -> (episode id, the session's turns before it)."""
    out = {}
    for ep in episodes:
        for session in ep.sessions:
            for j, turn in enumerate(session.turns):
                out[turn.turn_id] = (ep.episode_id, session.turns[:j])
    return out


def pair_predictions(
    preds_a: Sequence[Prediction], preds_b: Sequence[Prediction], where: tuple[str, str]
) -> list[tuple[Prediction, Prediction]]:
    """Pair ``response`` predictions of two runs on ``pred_id`` (the same dialogue context)."""
    by_b = {p.pred_id: p for p in preds_b if p.kind == "response"}
    pairs = [(p, by_b[p.pred_id]) for p in preds_a if p.kind == "response" and p.pred_id in by_b]
    if not pairs:
        raise ValueError(f"{where[0]} and {where[1]} share no response predictions (pred_id)")
    return pairs


def compare(
    pairs: Sequence[tuple[Prediction, Prediction]],
    episodes: Sequence[Episode],
    llm,
    *,
    names: tuple[str, str] = ("a", "b"),
    max_episodes: int | None = None,
    where: tuple[str, str] = ("run a", "run b"),
) -> GEvalResult:
    """Judge every paired context in both orders and aggregate win/tie/loss of A."""
    contexts = _contexts(episodes)
    kept, seen = [], []
    for a, b in pairs:
        if max_episodes is not None and a.episode_id not in seen:
            if len(seen) >= max_episodes:
                continue
            seen.append(a.episode_id)
        turn_id = a.pred_id.rsplit("/", 1)[0]
        if turn_id not in contexts:
            raise KeyError(f"{where[0]}: {a.pred_id!r}: turn {turn_id!r} not in the episodes")
        kept.append((a, b, contexts[turn_id][1]))
    fields = []
    for a, b, history in kept:
        mem_a, mem_b = _recall_text(a, where[0]), _recall_text(b, where[1])
        base = {
            "speaker": a.meta.get("speaker", "speaker"),
            "current_dialogue_context": "\n".join(f"{t.speaker}: {t.text}" for t in history),
            "last_utterance": history[-1].text if history else "",
            "context": " ".join(t.text for t in history),
        }
        fields += [
            {**base, "memory1": mem_a, "memory2": mem_b},
            {**base, "memory1": mem_b, "memory2": mem_a},
        ]
    results = llm.run_many(GEVAL_TASK, fields, progress=False) if fields else []
    result = GEvalResult(*names)
    for i, (a, _b, _h) in enumerate(kept):
        first, swapped = results[2 * i], results[2 * i + 1]
        result.rows.append(_row(a, first, swapped))
    result.summary = summarize(result.rows, names, llm)
    return result


_POINTS_AS_1 = {"1": 1.0, "tie": 0.5, "2": 0.0}


def _row(a: Prediction, first, swapped) -> dict[str, Any]:
    choices = [first.value, swapped.value]
    if None in choices:
        outcome = "unjudged"
    else:
        points = _POINTS_AS_1[choices[0]] + (1.0 - _POINTS_AS_1[choices[1]])
        outcome = "win" if points > 1 else ("loss" if points < 1 else "tie")
    return {
        "pred_id": a.pred_id,
        "episode_id": a.episode_id,
        "session_index": a.session_index,
        "outcome_a": outcome,
        "choice_a_first": choices[0],
        "choice_b_first": choices[1],
        "raw_a_first": first.raw,
        "raw_b_first": swapped.raw,
        "failures": [r.failure for r in (first, swapped) if r.failure],
    }


def summarize(rows: Sequence[dict], names: tuple[str, str], llm) -> dict[str, Any]:
    """Win / tie / loss rates of A (unjudged contexts excluded) and a two-sided sign test."""
    from scipy.stats import binomtest

    judged = [r["outcome_a"] for r in rows if r["outcome_a"] != "unjudged"]
    n = len(judged)
    counts = {k: judged.count(k) for k in ("win", "tie", "loss")}
    decided = counts["win"] + counts["loss"]
    p = binomtest(counts["win"], decided, 0.5).pvalue if decided else 1.0
    return {
        "a": names[0],
        "b": names[1],
        "n": n,
        "unjudged": len(rows) - n,
        **{k: (v / n if n else 0.0) for k, v in counts.items()},
        "counts": counts,
        "sign_test_p": float(p),
        "episodes": len({r["episode_id"] for r in rows}),
        "judge": {
            "backend": llm.backend.name,
            "model": llm.model,
            "prompt": GEVAL_SOURCE,
            "order": "both orders; A's points summed (see module docstring)",
        },
    }


def _episodes_of(run_dir: Path) -> list[Episode]:
    import yaml

    from recallbench.datasets import load

    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    ds = cfg["dataset"]
    return load(ds["name"], ds["data_dir"], **(ds.get("options") or {}))


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    llm,
    episodes: Sequence[Episode] | None = None,
    *,
    max_episodes: int | None = None,
) -> GEvalResult:
    """Compare two run folders; episodes default to run A's dataset config (``config.yaml``)."""
    run_a, run_b = Path(run_a), Path(run_b)
    where = (str(run_a / "predictions.jsonl"), str(run_b / "predictions.jsonl"))
    pairs = pair_predictions(
        read_jsonl(where[0], Prediction), read_jsonl(where[1], Prediction), where
    )
    episodes = list(episodes) if episodes is not None else _episodes_of(run_a)
    names = (_run_name(run_a), _run_name(run_b))
    return compare(pairs, episodes, llm, names=names, max_episodes=max_episodes, where=where)


def _run_name(run_dir: Path) -> str:
    import yaml

    cfg_path = run_dir / "config.yaml"
    if cfg_path.exists():
        choice = (yaml.safe_load(cfg_path.read_text()) or {}).get("choices", {}).get("memory")
        if choice:
            return str(choice)
    return run_dir.name


def main(argv: list[str] | None = None) -> None:
    """``python -m recallbench.judges.geval RUN_A RUN_B --out DIR [--generator YAML]``."""
    import argparse

    import yaml

    from recallbench.llm import build_llm

    parser = argparse.ArgumentParser(description="Pairwise G-Eval (THEANINE Fig. 26) of two runs")
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--out", required=True, help="folder for geval_<a>_vs_<b>.json/.jsonl")
    parser.add_argument(
        "--generator", default=None, help="conf/generator/*.yaml (default: extractive)"
    )
    parser.add_argument(
        "--model", default=None, help="override the generator's model (paper: gpt-4)"
    )
    parser.add_argument("--cache", default=None, help="SQLite LLM cache file")
    parser.add_argument("--max-episodes", type=int, default=5, help="THEANINE App. E.1: 5 episodes")
    args = parser.parse_args(argv)
    cfg = (
        yaml.safe_load(Path(args.generator).read_text())
        if args.generator
        else {"backend": "extractive"}
    )
    if args.model:
        cfg["model"] = args.model
    llm = build_llm(cfg, args.cache)
    result = compare_runs(args.run_a, args.run_b, llm, max_episodes=args.max_episodes)
    path = result.write(args.out)
    print(json.dumps({k: result.summary[k] for k in ("a", "b", "n", "win", "tie", "loss")}))
    print(path)


if __name__ == "__main__":
    main()
