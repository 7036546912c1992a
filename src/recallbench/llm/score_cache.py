"""On-disk cache of causal-LM scores: (model, context, text) -> (summed NLL, token count).

Every perplexity user (LUFY's surprise, the perplexity metric of CareCall Tables 4 and 6, the
LUFY weight fit) reads and writes one file, ``<paths.cache_dir>/lm_scores.sqlite``, so a triple
scored by one run is never scored again by another: LUFY and its five ablations, the tables that
reuse LUFY's runs, the CareCall rows that share contexts, a rerun.

Key: the model's identity (``model_key``: name, revision, quantization, dtype, and the scoring
recipe ``SCHEME``) and the sha256 of the (context, text) pair. Values are the summed NLL in nats
(SQLite REAL, a float64: read back bit for bit) and the number of scored tokens. The values go
through the one cache layer (``recallbench.store.values``): a model's scores are the namespace
``lm:<model key>`` (value ``[nll, tokens]``; JSON floats read back bit for bit), the identities
``lm-models``; on a server store (``store=redis://...``) as they are, in the SQLite file (created
under a file lock, WAL, so parallel jobs of a joblib sweep or a SLURM array on one node share
it) in its tables ``scores`` and ``models`` as the first runs wrote them; a batch is one ``BEGIN
IMMEDIATE`` transaction. Identical keys hold identical values, so two writers of one key are
harmless.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from recallbench.store import JSONValue, Store
from recallbench.store.values import (
    Layout,
    Row,
    Table,
    Values,
    cache_values,
    dumps,
    json_column,
    json_value,
)

# The scoring recipe of ``recallbench.llm.perplexity``: a change to it must change this string.
SCHEME = (
    "nll-v1: <|endoftext|> (else BOS, else EOS), context + '\\n' and text tokenized apart without "
    "special tokens; text cut from the right to window-1, context from the left to what remains"
)
PREFIX, MODELS = "lm:", "lm-models"  # a model's scores: lm:<model key>; the identities

Pair = tuple[str | None, str]  # (context, text); None and "" both mean "no context"


def model_key(identity: Mapping[str, object]) -> str:
    """Return the cache's model key: sha256 (first 24 hex) of the identity + ``SCHEME``."""
    blob = json.dumps({**identity, "scheme": SCHEME}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def pair_key(context: str | None, text: str) -> str:
    """Return the row key of a (context, text) pair: sha256 hex of its canonical JSON."""
    blob = json.dumps([context or "", text], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _json_score(value: JSONValue) -> tuple[float, int]:
    """``(nll, tokens)`` of a server's value ``[nll, tokens]``; another shape is an error."""
    match value:
        case [int() | float() as nll, int() as tokens]:
            return float(nll), tokens
    raise ValueError(f"corrupt score: expected [nll, tokens], got {value!r:.80}")


def _score_row(score: tuple[float, int]) -> Row:
    return float(score[0]), int(score[1])


def _score_value(row: Row) -> tuple[float, int]:
    nll, tokens = row
    if not isinstance(nll, float | int) or not isinstance(tokens, int):
        raise ValueError(f"corrupt score row: expected (nll, tokens), got {tuple(row)!r:.80}")
    return float(nll), tokens


def _score_json(score: tuple[float, int]) -> JSONValue:
    return [score[0], score[1]]


def _identity_row(value: JSONValue) -> Row:
    return dumps(value), time.time()


# The file's tables, as every run since the first wrote them (``store.values``): a model's
# scores are the namespace ``lm:<model key>``, what each model key stands for ``lm-models``.
SCORES: Table[tuple[float, int]] = Table(
    "scores", PREFIX, ("nll", "tokens"), _score_row, _score_value, _score_json, _json_score
)
IDENTITIES: Table[JSONValue] = Table(
    "models",
    MODELS,
    ("identity",),
    _identity_row,
    json_column,
    json_value,
    json_value,
    insert="IGNORE",
    key="model",
)
LAYOUT = Layout(
    "LM score cache",
    """
CREATE TABLE IF NOT EXISTS scores (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    nll REAL NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (model, key)
);
CREATE TABLE IF NOT EXISTS models (
    model TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    created REAL NOT NULL
);
""",
    (SCORES, IDENTITIES),
)


class ScoreCache:
    """A persistent ``(model key, context, text) -> (nll, tokens)`` store in one SQLite file,
    or a server store, through the one cache layer (``store.values``).

    Args:
        path: the database file (its folder is created); ``":memory:"`` for a private cache.
        store: a server store (``recallbench.store``): the rows live there, ``path`` is unused.
    """

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.store = store
        self.values: Values = cache_values(path, store, LAYOUT)
        self.path = self.values.url

    def register(self, key: str, identity: Mapping[str, object]) -> None:
        """Record what a model key stands for (for people reading the file)."""
        value = json.loads(dumps({**identity, "scheme": SCHEME}))  # JSON, or a TypeError here
        self.values.put(IDENTITIES, MODELS, {key: value})

    def get_many(self, model: str, pairs: Iterable[Pair]) -> dict[Pair, tuple[float, int]]:
        """Return the stored scores of ``pairs`` under ``model`` (pairs not stored are absent)."""
        by_key = {pair_key(c, t): (c, t) for c, t in pairs}
        got = self.values.get(SCORES, f"{PREFIX}{model}", list(by_key))
        return {by_key[k]: v for k, v in got.items()}

    def put_many(self, model: str, scores: Mapping[Pair, tuple[float, int]]) -> None:
        """Store ``(context, text) -> (nll, tokens)`` rows under ``model``, in one transaction."""
        values = {pair_key(c, t): v for (c, t), v in scores.items()}
        self.values.put(SCORES, f"{PREFIX}{model}", values)

    def __bool__(self) -> bool:
        return True  # a cache is there even when empty (``__len__`` may ask a server)

    def __len__(self) -> int:
        spaces = (n for n in self.values.namespaces() if n.startswith(PREFIX))
        return sum(self.values.count(n) for n in spaces)

    def close(self) -> None:
        """Close the database file (a server store stays open: the run closes it)."""
        self.values.close()

    def __repr__(self) -> str:
        return f"ScoreCache({self.path!r})"
