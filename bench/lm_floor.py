"""The least forward work that scoring a run's references under the embedded LM can take.

    python bench/lm_floor.py <run folder> [<run folder> ...]

For each run (a response run with ``store_context``: CareCall Table 4, THEANINE ...) it builds
the (context, reference) sequences the perplexity metric scores (``llm.lm_scores.sequences``),
plans them as ``llm.causal_scoring`` does (one pass per distinct shared prefix) and prints the
tokens a one-pass-per-text scorer would run, the forward tokens the plan needs, and that count
over this machine's forward throughput (``bench/tables.forward_throughput``, measured here): the
floor of an exact computation on this machine. Issue 25 used it to show that CareCall Table 4's
History-accumulate row alone needs ~535k forward tokens (~800 s on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def floor(run: Path, tokenizer) -> tuple[int, int, int]:
    """(pairs, tokens one pass per text, forward tokens of the best plan) of a run folder."""
    from recallbench.llm.causal_scoring import forward_tokens, plan
    from recallbench.llm.lm_scores import sequences

    lines = (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    preds = [json.loads(line) for line in lines if line.strip()]
    pairs = list(
        dict.fromkeys(
            (p["meta"].get("context"), p["reference"])
            for p in preds
            if p.get("kind") == "response" and p.get("reference")
        )
    )
    if not pairs:
        raise SystemExit(f"{run}: no response predictions with a reference")
    seqs = [
        (tuple(ids), n)
        for ids, n in sequences([t for _, t in pairs], [c for c, _ in pairs], tokenizer, 8192)
    ]
    return len(pairs), sum(len(ids) for ids, _ in seqs), forward_tokens(plan(seqs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    opts = parser.parse_args(argv)
    from tables import forward_throughput

    from recallbench.llm.perplexity import load_default_lm

    _, tokenizer = load_default_lm()
    rate = forward_throughput()
    print(f"forward throughput of the embedded LM here: {rate:.0f} tokens/s")
    for run in opts.runs:
        n, naive, forward = floor(run, tokenizer)
        print(
            f"{run.name}: {n} pairs; {naive:,} tokens one pass per text; {forward:,} forward "
            f"tokens at best = {forward / rate:.0f} s at least"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
