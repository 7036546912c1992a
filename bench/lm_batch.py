"""Benchmark: CPU seconds of batched causal-LM scoring per ``token_budget`` (padded tokens/pass).

    python bench/lm_batch.py [--budgets 512 1024 2048] [--repeats 2] [--threads 1]

Scores the same 64 random LUFY-like sequences (30-110 tokens, the last 8-40 scored, no shared
prefixes) with the embedded SmolLM2 at each budget, interleaved, and prints the CPU seconds of
each pass and the best per budget, as a ratio to the first budget's. CPU seconds (one thread by
default) rather than wall time, so other processes on a shared machine disturb the figures less.
``llm.causal_scoring.TOKEN_BUDGET`` was chosen with it.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    opts = parser.parse_args(argv)
    import torch

    from recallbench.llm.causal_scoring import sequence_nll
    from recallbench.llm.perplexity import load_default_lm

    torch.set_num_threads(opts.threads)
    model, _ = load_default_lm()
    rng = random.Random(0)
    seqs = []
    for _ in range(64):
        length = rng.randint(30, 110)
        scored = rng.randint(8, min(40, length - 2))
        seqs.append(([rng.randint(200, 40000) for _ in range(length)], scored))
    best: dict[int, float] = {}
    for _ in range(opts.repeats):
        for budget in opts.budgets:
            cpu = time.process_time()
            sequence_nll(model, seqs, min_shared=0, token_budget=budget)
            cpu = time.process_time() - cpu
            best[budget] = min(best.get(budget, cpu), cpu)
            print(f"budget {budget:>5}: {cpu:6.2f} CPU s (load {os.getloadavg()[0]:.1f})")
    first = best[opts.budgets[0]]
    for budget, cpu in best.items():
        print(f"best {budget:>5}: {cpu:6.2f} CPU s  x{cpu / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
