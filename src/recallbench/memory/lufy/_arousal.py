"""Emotional arousal (LUFY metric A): ridge regression on EmoBank over an embedder's features.

LUFY (Sumida et al. 2024, sec. 2 and 3.1) measures the arousal of a user utterance with RoBERTa
fine-tuned on EmoBank (Buechel and Hahn, EACL 2017; 10k sentences rated for Valence, Arousal and
Dominance on a 1-5 SAM scale; public at github.com/JULIELab/EmoBank). No arousal model ships on
PyPI, so recallbench trains a small one: ridge regression from the configured embedder's
sentence vectors (MiniLM by default; the hashing embedder in tests) to EmoBank's ``A`` column.

- Data: ``<data_dir>/lufy/Code/roberta/emobank.csv`` (columns ``id,split,V,A,D,text``; the LUFY
  repository ships a copy). EmoBank's own ``split`` column is used: fit on ``train``, choose the
  ridge penalty on ``dev`` (highest Pearson r), report Pearson r on ``test``.
- Cache: the fitted model is saved as ``arousal-<embedder>-<csv sha256[:8]>.npz`` in a cache
  folder (default ``results/models``); the first use trains it (~15 s with MiniLM on 2 CPUs).
- Output: predicted arousal on EmoBank's 1-5 scale (clipped to [1, 5]).

Deviations:
- Ridge regression on frozen sentence embeddings instead of fine-tuned RoBERTa-large: RoBERTa
  weights are not available offline here; held-out Pearson r is reported so the gap is visible.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recallbench.embed.base import TextEmbedder
from recallbench.errors import DatasetFormatError
from recallbench.io import atomic_path
from recallbench.store import JSONValue

EMOBANK_COLUMNS = ("id", "split", "V", "A", "D", "text")
EMOBANK_RELPATH = "lufy/Code/roberta/emobank.csv"
SCALE = (1.0, 5.0)  # EmoBank SAM rating scale
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


@dataclass(frozen=True)
class EmoBank:
    """EmoBank rows: texts, arousal ratings and split names, in file order."""

    texts: tuple[str, ...]
    arousal: np.ndarray
    splits: tuple[str, ...]
    sha256: str

    def part(self, split: str) -> tuple[list[str], np.ndarray]:
        """Return (texts, arousal) of one split (``train`` | ``dev`` | ``test``)."""
        rows = [i for i, s in enumerate(self.splits) if s == split]
        return [self.texts[i] for i in rows], self.arousal[rows]


def read_emobank(path: str | Path) -> EmoBank:
    """Read an EmoBank CSV (``id,split,V,A,D,text``) and check every row."""
    path = Path(path)
    if not path.is_file():
        raise DatasetFormatError(
            f"{path}: EmoBank CSV not found (expected <data_dir>/{EMOBANK_RELPATH})"
        )
    raw = path.read_bytes()
    reader = csv.DictReader(raw.decode("utf-8").splitlines())
    if tuple(reader.fieldnames or ()) != EMOBANK_COLUMNS:
        raise DatasetFormatError(
            f"{path} line 1: expected columns {list(EMOBANK_COLUMNS)}, got {reader.fieldnames}"
        )
    texts, values, splits = [], [], []
    for row in reader:
        where = f"{path} record {row.get('id')!r} (line {reader.line_num})"
        if row["split"] not in ("train", "dev", "test"):
            raise DatasetFormatError(f"{where}: split must be train|dev|test, got {row['split']!r}")
        try:
            value = float(row["A"])
        except (TypeError, ValueError):
            raise DatasetFormatError(f"{where}: A must be a number, got {row['A']!r}") from None
        if not SCALE[0] <= value <= SCALE[1]:
            raise DatasetFormatError(f"{where}: A must be in [1, 5], got {value}")
        texts.append(row["text"] or "")
        values.append(value)
        splits.append(row["split"])
    if "train" not in splits:
        raise DatasetFormatError(f"{path}: no 'train' rows")
    digest = hashlib.sha256(raw).hexdigest()
    return EmoBank(tuple(texts), np.asarray(values, dtype=np.float64), tuple(splits), digest)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Return Pearson's r of two vectors (0.0 when either is constant)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    dx, dy = x - x.mean(), y - y.mean()
    denom = math.sqrt(float(dx @ dx) * float(dy @ dy))
    return float(dx @ dy / denom) if denom > 0 else 0.0


def _ridge(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Closed-form ridge on centred data; the intercept is not penalized."""
    mx, my = x.mean(axis=0), float(y.mean())
    xc = x - mx
    if x.shape[0] < x.shape[1]:  # fewer sentences than features: solve the n x n dual system
        coef = xc.T @ np.linalg.solve(xc @ xc.T + alpha * np.eye(x.shape[0]), y - my)
    else:
        coef = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ (y - my))
    return coef, my - float(mx @ coef)


@dataclass
class ArousalModel:
    """A linear arousal regressor over one embedder's unit vectors."""

    embedder_name: str
    coef: np.ndarray
    intercept: float
    alpha: float
    info: dict[str, JSONValue] = field(default_factory=dict)

    def predict_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Return arousal (1-5 scale, clipped) for rows of embedder vectors."""
        raw = np.asarray(vectors, dtype=np.float64) @ self.coef + self.intercept
        clipped: np.ndarray = np.clip(raw, *SCALE)
        return clipped

    def predict(self, texts: Sequence[str], embedder: TextEmbedder) -> np.ndarray:
        """Embed ``texts`` with ``embedder`` (must be the training embedder) and predict."""
        if embedder.name != self.embedder_name:
            raise ValueError(
                f"arousal model was trained on embedder {self.embedder_name!r}, "
                f"got {embedder.name!r}"
            )
        if not texts:
            return np.zeros(0)
        return self.predict_vectors(embedder.encode(list(texts)))

    def save(self, path: str | Path) -> None:
        """Write the model as .npz (atomic: temp file + rename)."""
        meta = json.dumps({"embedder": self.embedder_name, "alpha": self.alpha} | self.info)
        with atomic_path(path) as tmp:
            np.savez(tmp, coef=self.coef, intercept=np.float64(self.intercept), meta=np.array(meta))

    @classmethod
    def load(cls, path: str | Path) -> ArousalModel:
        """Read a model written by ``save``."""
        with np.load(Path(path), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            coef, intercept = data["coef"], float(data["intercept"])
        name, alpha = meta.pop("embedder"), float(meta.pop("alpha"))
        return cls(name, coef, intercept, alpha, meta)


def train_arousal(
    embedder: TextEmbedder, emobank: EmoBank | str | Path, alphas: Sequence[float] = ALPHAS
) -> ArousalModel:
    """Fit ridge on ``train``, pick alpha on ``dev`` (Pearson r), report r on ``dev``/``test``."""
    data = emobank if isinstance(emobank, EmoBank) else read_emobank(emobank)
    parts = {s: data.part(s) for s in ("train", "dev", "test")}
    vecs = {
        s: embedder.encode(t) if t else np.zeros((0, embedder.dim)) for s, (t, _) in parts.items()
    }
    x_train, y_train = np.asarray(vecs["train"], dtype=np.float64), parts["train"][1]
    select = "dev" if len(parts["dev"][0]) >= 3 else "train"
    best: tuple[float, float, np.ndarray, float] | None = None
    for alpha in alphas:
        coef, intercept = _ridge(x_train, y_train, alpha)
        r = pearson(np.asarray(vecs[select]) @ coef + intercept, parts[select][1])
        if best is None or r > best[0]:
            best = (r, alpha, coef, intercept)
    if best is None:
        raise ValueError("train_arousal: alphas is empty (give at least one ridge penalty)")
    _, alpha, coef, intercept = best
    model = ArousalModel(embedder.name, coef, intercept, float(alpha))
    info: dict[str, JSONValue] = {"emobank_sha256": data.sha256, "alpha_selected_on": select}
    for split, (texts, gold) in parts.items():
        info[f"n_{split}"] = len(texts)
        if len(texts) >= 3:
            info[f"pearson_{split}"] = round(pearson(model.predict_vectors(vecs[split]), gold), 4)
    model.info = info
    return model


def cache_file(cache_dir: str | Path, embedder_name: str, emobank_sha256: str) -> Path:
    """Return the cache path of the model for one embedder and one EmoBank file."""
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in embedder_name)
    return Path(cache_dir) / f"arousal-{safe}-{emobank_sha256[:8]}.npz"


def load_or_train(
    embedder: TextEmbedder, emobank_path: str | Path, cache_dir: str | Path | None
) -> ArousalModel:
    """Return the cached arousal model for ``embedder``; train and cache it on first use."""
    data = read_emobank(emobank_path)
    path = cache_file(cache_dir, embedder.name, data.sha256) if cache_dir else None
    if path is not None and path.is_file():
        model = ArousalModel.load(path)
        if model.embedder_name == embedder.name and model.coef.shape == (embedder.dim,):
            return model
    model = train_arousal(embedder, data)
    if path is not None:
        model.save(path)
    return model
