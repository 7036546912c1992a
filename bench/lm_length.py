"""Forward throughput of the embedded LM by sequence length: what a floor at one length misses.

    python bench/lm_length.py [--lengths 128 512 1024 1800] [--seconds 6]

``bench/tables.py`` and ``bench/lm_floor.py`` price a run's LM scoring at the throughput of
8 x 128-token passes (``forward_throughput``). Attention's cost per token grows with the
sequence, so passes over long windows (CareCall Table 4's ~1,800-token History-accumulate
prompts, App. B.2) run fewer tokens per second than that: this prints tokens/s per length and
its ratio to the 128-token figure, measured in one process, so a floor priced at 128 tokens
can be read against it. Each length runs batches of about 1,024 tokens (8 x 128, 2 x 512,
1 x 1024, 1 x 1800), keeping the last 64 positions' logits, as scoring does.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command line sets it (before torch)


def throughput(model, length: int, seconds: float) -> float:
    """Tokens per second of forward passes over batches of ``length``-token sequences."""
    import torch

    rows = max(1, 1024 // length)
    ids = torch.randint(200, 40000, (rows, length), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        model(input_ids=ids[:, :16], logits_to_keep=1)  # warm-up
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds or done < 2:
            model(input_ids=ids, logits_to_keep=64, use_cache=False)
            done += 1
    return done * ids.numel() / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", nargs="+", type=int, default=[128, 512, 1024, 1800])
    parser.add_argument("--seconds", type=float, default=6.0)
    opts = parser.parse_args(argv)
    from recallbench.llm.perplexity import load_default_lm

    model, _ = load_default_lm()
    base = None
    first = f"x {opts.lengths[0]}"
    print(f"{'length':>7} {'tokens/s':>9} {first:>6}  load {os.getloadavg()[0]:.1f}")
    for length in opts.lengths:
        rate = throughput(model, length, opts.seconds)
        base = base or rate
        print(f"{length:>7} {rate:>9.0f} {rate / base:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
