"""The least time the embeddings of a results folder's runs can take: encodes at MiniLM's rate.

    python bench/embed_floor.py --data-dir ../shared/data <results folder> [...]
    python bench/embed_floor.py --data-dir ../shared/data --corpus longmemeval <folder> [...]

``bench/tables.py`` prices LM scoring against a floor (``bench/lm_floor.py``) but not the
embedding stage. Here the floor of a folder's stage is priced two ways, in this process:

- **on its own texts (token floor)**: the word pieces the runs sent to the model
  (``usage.json`` ``compute.embeddings.miss_tokens``: each missed text's tokens as MiniLM reads
  them, truncated at its 256) over MiniLM's batched throughput in tokens/s. That rate is
  measured on a mix of real texts in buckets of length (MSC utterances; runs of 3, 8 and 20
  consecutive utterances, the length of TimeRAG's queries and of session texts; LongMemEval's
  user and assistant turns when ``--data-dir`` holds ``longmemeval/longmemeval_oracle.json``),
  the same tokens per bucket, each bucket in one call of a fresh embedder (no cache), at the
  start and at the end; it prints the rate per bucket, so one sees it holds across lengths.
  Runs made before the counter have no ``miss_tokens``: their folder says "not recorded".
- **per text (text floor, as before)**: the misses (texts sent to the model) over the rate at
  which MiniLM encodes MSC's first utterances (``--corpus longmemeval``: the first distinct
  user turns of S, the oracle file when S is absent). It prices every text at that corpus's
  length, so a stage of longer texts looks slower than it is.

A run's embedding seconds also hold its cache lookups (hits); the model's load is timed apart
(``seconds.embedder_load``) and paid once per process whatever the misses, so each ratio is
given with the load (``x``) and without it (``x w/o load``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the command line sets it (before torch)

# Token-count buckets of the throughput check (MiniLM reads at most 256 word pieces).
BUCKETS = ((1, 16), (17, 32), (33, 64), (65, 128), (129, 255), (256, 256))
RUNS_OF = (1, 3, 8, 20)  # MSC utterances joined per text (3: TimeRAG's query of the last 3 turns)


def utterances(data_dir: Path, n: int) -> list[str]:
    """The first ``n`` distinct MSC test utterances (what most offline targets embed)."""
    from recallbench.datasets import msc

    seen: dict[str, None] = {}
    for episode in msc.load(data_dir):
        for session in episode.sessions:
            for turn in session.turns:
                seen.setdefault(turn.text, None)
                if len(seen) >= n:
                    return list(seen)
    return list(seen)


def longmemeval_turns(data_dir: Path, n: int) -> list[str]:
    """The first ``n`` distinct user turns of LongMemEval's S histories (what the flat index
    embeds; the oracle file when S is absent)."""
    from recallbench.datasets import longmemeval

    seen: dict[str, None] = {}
    for variant in ("s", "oracle"):
        try:
            episodes = longmemeval.load(data_dir, variant=variant, limit=max(1, n // 100))
        except FileNotFoundError:
            continue
        for episode in episodes:
            for session in episode.sessions:
                for turn in session.turns:
                    if turn.speaker == "user" and turn.text.strip():
                        seen.setdefault(turn.text, None)
                    if len(seen) >= n:
                        return list(seen)
        return list(seen)
    return list(seen)


def mixed_texts(data_dir: Path, n: int = 4000) -> list[str]:
    """Real texts of every length: MSC utterances alone and joined in runs (``RUNS_OF``), and
    the first distinct turns (user and assistant) of LongMemEval's oracle file if present."""
    msc = utterances(data_dir, n)
    texts = ["\n".join(msc[i : i + k]) for k in RUNS_OF for i in range(0, len(msc) - k + 1, k)]
    oracle = data_dir / "longmemeval" / "longmemeval_oracle.json"
    if oracle.is_file():
        for item in json.loads(oracle.read_text(encoding="utf-8"))[:300]:
            texts += [t["content"] for s in item["haystack_sessions"] for t in s]
    return list(dict.fromkeys(t for t in texts if t.strip()))


def token_counts(texts: Sequence[str]) -> list[int]:
    """Each text's word pieces as MiniLM reads them (``MiniLMEmbedder._count_tokens``, per text)."""
    from recallbench.embed.minilm import load_sentence_transformer, minilm_path

    model = load_sentence_transformer(str(minilm_path()))
    out: list[int] = []
    for start in range(0, len(texts), 512):
        mask = model.preprocess(list(texts[start : start + 512]))["attention_mask"]
        out += [int(x) for x in mask.sum(dim=1)]
    return out


def bucket_sets(texts: Sequence[str], counts: Sequence[int], tokens: int) -> list[list[str]]:
    """Per ``BUCKETS`` entry, texts of that length in input order up to ``tokens`` tokens."""
    out: list[list[str]] = [[] for _ in BUCKETS]
    got = [0] * len(BUCKETS)
    for text, n in zip(texts, counts, strict=True):
        for b, (lo, hi) in enumerate(BUCKETS):
            if lo <= n <= hi and got[b] < tokens:
                out[b].append(text)
                got[b] += n
    return out


def _fresh_encode(texts: list[str]) -> tuple[int, float]:
    """(tokens, seconds) of one encode of ``texts`` by a fresh MiniLM embedder (no cache)."""
    from recallbench.embed.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    start = time.perf_counter()
    embedder.encode(texts)
    return embedder.cache_info.miss_tokens, time.perf_counter() - start


def token_rate(buckets: list[list[str]], label: str) -> float:
    """Tokens/s over all buckets (each encoded in one call); prints the rate per bucket."""
    tokens, seconds, parts = 0, 0.0, []
    for (lo, hi), texts in zip(BUCKETS, buckets, strict=True):
        if not texts:
            continue
        n, s = _fresh_encode(texts)
        tokens, seconds = tokens + n, seconds + s
        parts.append(f"{lo}-{hi}: {n / s:.0f} ({len(texts)} texts)")
    rate = tokens / seconds
    print(f"MiniLM {label}: {rate:.0f} tokens/s; per bucket of tokens: " + ", ".join(parts))
    return rate


def encode_rate(texts: list[str]) -> float:
    """Texts per second of MiniLM encodes of ``texts`` (no cache), this process."""
    from recallbench.embed.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.encode(texts[:32])  # load and warm up
    start = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - start)


@dataclass(frozen=True)
class Stage:
    """A folder's embedding stage, summed over its runs. ``miss_tokens`` is None when some run
    that sent texts to the model did not record them (made before the counter)."""

    misses: int
    miss_tokens: int | None
    seconds: float
    load: float


def stage(folder: Path) -> Stage:
    """The embedding stage of every run under ``folder`` (``runs/**/usage.json``)."""
    misses, tokens, seconds, load, recorded = 0, 0, 0.0, 0.0, True
    for path in folder.glob("runs/**/usage.json"):
        compute = json.loads(path.read_text()).get("compute") or {}
        counts = compute.get("embeddings") or {}
        misses += int(counts.get("misses", 0))
        if "miss_tokens" in counts:
            tokens += int(counts["miss_tokens"])
        elif int(counts.get("misses", 0)):
            recorded = False
        seconds += float((compute.get("seconds") or {}).get("embeddings", 0.0))
        load += float((compute.get("seconds") or {}).get("embedder_load", 0.0))
    return Stage(misses, tokens if recorded else None, seconds, load)


def ratios(got: Stage, text_rate: float, tok_rate: float) -> dict[str, float | None]:
    """The floors of a stage and its time over them, with the load and without it (None: no
    misses, or tokens not recorded)."""

    def over(seconds: float, floor: float | None) -> float | None:
        return seconds / floor if floor else None

    text_floor = got.misses / text_rate
    tok_floor = None if got.miss_tokens is None else got.miss_tokens / tok_rate
    total = got.seconds + got.load
    return {
        "text_floor": text_floor,
        "x_text": over(total, text_floor),
        "x_text_bare": over(got.seconds, text_floor),
        "token_floor": tok_floor,
        "x_token": over(total, tok_floor),
        "x_token_bare": over(got.seconds, tok_floor),
    }


def _cell(value: float | None, width: int, digits: int = 2) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def report(rows: list[tuple[Path, Stage]], text_rate: float, tok_rate: float) -> list[str]:
    """The printed table: per folder its counts, seconds, both floors and ratios."""
    lines = [
        f"{'results folder':<40} {'misses':>7} {'tokens':>9} {'embed s':>8} {'load s':>7} "
        f"{'tok floor':>9} {'x tok':>6} {'w/o load':>8} {'txt floor':>9} {'x txt':>6} "
        f"{'w/o load':>8}"
    ]
    for folder, got in rows:
        r = ratios(got, text_rate, tok_rate)
        tokens = f"{got.miss_tokens:>9}" if got.miss_tokens is not None else f"{'not rec.':>9}"
        lines.append(
            f"{str(folder)[-40:]:<40} {got.misses:>7} {tokens} {got.seconds + got.load:>8.1f} "
            f"{got.load:>7.1f} {_cell(r['token_floor'], 9, 1)} {_cell(r['x_token'], 6)} "
            f"{_cell(r['x_token_bare'], 8)} {_cell(r['text_floor'], 9, 1)} "
            f"{_cell(r['x_text'], 6)} {_cell(r['x_text_bare'], 8)}"
        )
    if any(got.miss_tokens is None for _, got in rows):
        lines.append(
            "not rec.: tokens not recorded (runs made before compute.embeddings.miss_tokens)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--texts", type=int, default=2000, help="texts of the text floor")
    parser.add_argument("--corpus", choices=("msc", "longmemeval"), default="msc")
    parser.add_argument("--tokens", type=int, default=20000, help="tokens per length bucket")
    opts = parser.parse_args(argv)
    corpus: dict[str, tuple[str, Callable[[Path, int], list[str]]]] = {
        "msc": ("MSC utterances", utterances),
        "longmemeval": ("LongMemEval S user turns", longmemeval_turns),
    }
    label, read = corpus[opts.corpus]
    texts = read(opts.data_dir, opts.texts)
    mix = mixed_texts(opts.data_dir)
    buckets = bucket_sets(mix, token_counts(mix), opts.tokens)
    _fresh_encode(texts[:32])  # load and warm up
    rates = [encode_rate(texts)]
    print(f"MiniLM: {rates[0]:.0f} texts/s on {len(texts)} {label}", flush=True)
    tok_rates = [token_rate(buckets, "at the start")]
    rows = [(f, stage(f)) for f in opts.folders]
    tok_rates.append(token_rate(buckets, "at the end"))
    rates.append(encode_rate(texts))
    rate, tok_rate = sum(rates) / 2, sum(tok_rates) / 2
    print(f"MiniLM at the end: {rates[1]:.0f} texts/s; floors at the means, {rate:.0f} texts/s")
    print(f"and {tok_rate:.0f} tokens/s (token floor: miss_tokens / that rate)")
    print("\n".join(report(rows, rate, tok_rate)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
