"""Recompute a LongMemEval run's retrieval scores with the authors' own eval_utils.py.

    python bench/longmemeval_retrieval_check.py --data-dir ../shared/data RUN_FOLDER [...]

For every answer of a ``longmemeval_qa`` run that recorded a ranking (``meta["retrieval"]``),
the question's corpus is rebuilt from the raw data file, written here again from
``run_retrieval.py``'s ``process_item_flat_index`` (not with the protocol's ``corpus_of``); the
recorded ids become indices into it (a relevant id as it is, another with "answer" -> "noans",
the authors' renaming) and the authors' ``evaluate_retrieval`` / ``evaluate_retrieval_turn2session``
(imported from ``<data-dir>/longmemeval/reference/eval_utils.py``) score that ranking. Skipped as
the authors skip them: abstention questions and questions without a has_answer user turn. Prints,
per run, the items and values compared and every disagreement with the run's ``scores.jsonl``;
exits 1 on any.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import lzma
import sys
from pathlib import Path
from typing import Any

import numpy as np

from recallbench.datasets.longmemeval import find_file
from recallbench.run.read import read_run


def reference(data_dir: Path) -> Any:
    """The authors' eval_utils module (numpy 2 lacks ``asfarray``, which it calls)."""
    if not hasattr(np, "asfarray"):
        np.asfarray = lambda a: np.asarray(a, dtype=float)  # type: ignore[attr-defined]
    path = data_dir / "longmemeval" / "reference" / "eval_utils.py"
    spec = importlib.util.spec_from_file_location("lme_eval_utils", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: cannot import the authors' eval_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def raw_instances(data_dir: Path, variant: str) -> dict[str, Any]:
    path = find_file(data_dir, variant)
    opener: Any = {".xz": lzma.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "rt", encoding="utf-8") as fh:
        return {x["question_id"]: x for x in json.load(fh)}


def flat_index(entry: dict[str, Any], granularity: str) -> list[str]:
    """``process_item_flat_index`` over the instance's sessions: the corpus ids only."""
    ids: list[str] = []
    for sid, session in zip(entry["haystack_session_ids"], entry["haystack_sessions"], strict=True):
        users = [t for t in session if t["role"] == "user"]
        if granularity == "session":
            empty = all(not t.get("has_answer", False) for t in users)
            ids.append(sid.replace("answer", "noans") if "answer" in sid and empty else sid)
            continue
        for n, turn in enumerate(session, start=1):
            if turn["role"] == "user":
                tid = f"{sid}_{n}"
                if "answer" in sid and not turn.get("has_answer", False):
                    tid = tid.replace("answer", "noans")
                ids.append(tid)
    return ids


def indices(recorded: list[str], corpus: list[str]) -> list[int]:
    where = {c: i for i, c in enumerate(corpus)}
    out = []
    for r in recorded:
        i = where.get(r, where.get(r.replace("answer", "noans")))
        if i is None:
            raise SystemExit(f"recorded id {r!r} is not in the question's corpus")
        out.append(i)
    return out


def expected(ref: Any, entry: dict[str, Any], ranking: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    if ranking["granularity"] == "turn":
        corpus = flat_index(entry, "turn")
        correct = list({c for c in corpus if "answer" in c})
        order = indices(ranking["turns"], corpus)
        for k in (5, 10, 50):
            values = ref.evaluate_retrieval(order, correct, corpus, k=k)
            out.update({f"turn_{m}@{k}": v for m, v in zip(MEASURES, values, strict=True)})
        for k in (5, 10):
            values = ref.evaluate_retrieval_turn2session(order, correct, corpus, k=k)
            out.update({f"session_{m}@{k}": v for m, v in zip(MEASURES, values, strict=True)})
        return out
    corpus = flat_index(entry, "session")
    correct = list({c for c in corpus if "answer" in c})
    order = indices(ranking["sessions"], corpus)
    for k in (5, 10):
        values = ref.evaluate_retrieval(order, correct, corpus, k=k)
        out.update({f"session_{m}@{k}": v for m, v in zip(MEASURES, values, strict=True)})
    return out


MEASURES = ("recall_any", "recall_all", "ndcg_any")


def check(folder: Path, data_dir: Path, ref: Any, cache: dict[str, dict[str, Any]]) -> int:
    run = read_run(folder)
    variant = str(run.config.value("dataset.options.variant") or "oracle")
    if variant not in cache:
        cache[variant] = raw_instances(data_dir, variant)
    data = cache[variant]
    got = {(s.pred_id, s.metric): s.value for s in run.scores}
    items = values = 0
    bad = []
    for p in run.predictions:
        ranking = p.meta.get("retrieval")
        qid = str(p.meta.get("question_id", ""))
        if p.kind != "answer" or not isinstance(ranking, dict) or "_abs" in qid:
            continue
        entry = data[qid]
        target = any(
            t.get("has_answer")
            for s in entry["haystack_sessions"]
            for t in s
            if t["role"] == "user"
        )
        if not target:
            continue
        items += 1
        for name, want in expected(ref, entry, ranking).items():
            values += 1
            if abs(got.get((p.pred_id, name), float("nan")) - want) > 1e-9:
                bad.append(f"{qid} {name}: run {got.get((p.pred_id, name))} reference {want}")
    print(f"{folder}: {items} questions ({variant}), {values} values compared, {len(bad)} disagree")
    for line in bad[:20]:
        print("  " + line)
    return len(bad)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    ref = reference(args.data_dir)
    cache: dict[str, dict[str, Any]] = {}
    bad = sum(check(folder, args.data_dir, ref, cache) for folder in args.runs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
