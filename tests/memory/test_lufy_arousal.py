"""The LUFY arousal metric: ridge regression on EmoBank over embedder features."""

from __future__ import annotations

import numpy as np
import pytest

from recallbench.embed import HashingEmbedder, MiniLMEmbedder
from recallbench.errors import DatasetFormatError
from recallbench.memory.lufy import (
    EMOBANK_RELPATH,
    ArousalModel,
    cache_file,
    load_or_train,
    pearson,
    read_emobank,
    train_arousal,
)

HEADER = "id,split,V,A,D,text\n"


@pytest.fixture(scope="module")
def hashing():
    return HashingEmbedder(dim=256)


@pytest.fixture
def emobank(fixtures_dir):
    return fixtures_dir / EMOBANK_RELPATH


def test_read_fixture(emobank):
    data = read_emobank(emobank)
    assert {s: data.splits.count(s) for s in ("train", "dev", "test")} == {
        "train": 40,
        "dev": 10,
        "test": 10,
    }
    assert 'Remember what she said in her note? "' in data.texts  # quoted quotes survive
    assert float(data.arousal.min()) >= 1 and float(data.arousal.max()) <= 5
    assert len(data.sha256) == 64


def test_train_predict_save_load(emobank, hashing, tmp_path):
    model = train_arousal(hashing, emobank)
    assert model.embedder_name == "hashing-256" and model.info["alpha_selected_on"] == "dev"
    assert {"pearson_train", "pearson_dev", "pearson_test", "n_test"} <= set(model.info)
    texts, gold = read_emobank(emobank).part("train")
    hi, lo = texts[int(np.argmax(gold))], texts[int(np.argmin(gold))]
    excited, calm = model.predict([hi, lo], hashing)
    assert 1 <= calm < excited <= 5  # 40 sentences, 256 features: the train split is fitted
    assert model.info["pearson_train"] > 0.9
    path = tmp_path / "m.npz"
    model.save(path)
    again = ArousalModel.load(path)
    assert again.embedder_name == model.embedder_name and again.alpha == model.alpha
    assert np.allclose(again.coef, model.coef) and again.info == model.info
    other = HashingEmbedder(dim=64)
    with pytest.raises(ValueError, match="hashing-256"):
        model.predict(["x"], other)


def test_load_or_train_caches(emobank, hashing, tmp_path):
    first = load_or_train(hashing, emobank, tmp_path)
    path = cache_file(tmp_path, "hashing-256", read_emobank(emobank).sha256)
    assert path.is_file() and path.name.startswith("arousal-hashing-256-")
    path.write_bytes(path.read_bytes())  # the cached file is what the second call returns
    second = load_or_train(hashing, emobank, tmp_path)
    assert np.array_equal(first.coef, second.coef)
    assert load_or_train(hashing, emobank, None).info == first.info  # no cache dir: retrain


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id,split,V,A,text\nx,train,3,3,hi\n", "expected columns"),
        (HEADER + "r1,train,3,high,3,hi\n", "record 'r1' .*A must be a number"),
        (HEADER + "r2,train,3,7.5,3,hi\n", r"record 'r2' .*\[1, 5\]"),
        (HEADER + "r3,validation,3,3,3,hi\n", "record 'r3' .*train\\|dev\\|test"),
        (HEADER + "r4,test,3,3,3,hi\n", "no 'train' rows"),
    ],
)
def test_bad_csv(tmp_path, body, message):
    path = tmp_path / "emobank.csv"
    path.write_text(body)
    with pytest.raises(DatasetFormatError, match=message):
        read_emobank(path)
    with pytest.raises(DatasetFormatError, match="not found"):
        read_emobank(tmp_path / "missing.csv")


def test_pearson():
    assert pearson(np.array([1, 2, 3]), np.array([2, 4, 6])) == pytest.approx(1.0)
    assert pearson(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)
    assert pearson(np.array([1, 1, 1]), np.array([1, 2, 3])) == 0.0


def test_real_emobank_hashing(real_data_dir, hashing):
    """Held-out r of the model-free baseline on EmoBank's real test split (measured: 0.17)."""
    model = train_arousal(hashing, real_data_dir / EMOBANK_RELPATH)
    assert model.info["n_train"] == 8062 and model.info["n_test"] == 1000
    assert model.info["pearson_test"] > 0.1


@pytest.mark.slow
def test_real_emobank_minilm(real_data_dir, tmp_path):
    """Held-out r of the default arousal model (MiniLM + ridge) on EmoBank test (measured: 0.434)."""
    minilm = MiniLMEmbedder()
    model = train_arousal(minilm, real_data_dir / EMOBANK_RELPATH)
    assert model.info["pearson_test"] > 0.35
