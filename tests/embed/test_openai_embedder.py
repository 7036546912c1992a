"""OpenAIEmbedder against a local /v1/embeddings stub on 127.0.0.1 (started and stopped here)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from recallbench.embed import OpenAIEmbedder
from recallbench.errors import ConfigError

KEY_ENV = "RECALLBENCH_TEST_EMBED_KEY"


def stub_vector(text: str, dim: int) -> list[float]:
    """Deterministic, deliberately unnormalized vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).tolist()


class _Stub(BaseHTTPRequestHandler):
    requests: list[dict] = []
    fail_with: int | None = None

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
        )
        if self.path != "/v1/embeddings" or type(self).fail_with:
            self.send_response(type(self).fail_with or 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "stub failure", "type": "server_error"}}')
            return
        dim = body.get("dimensions", 1536)
        data = [
            {"object": "embedding", "index": i, "embedding": stub_vector(t, dim)}
            for i, t in enumerate(body["input"])
        ]
        payload = {
            "object": "list",
            "data": data[::-1],  # out of order on purpose: the client must sort by index
            "model": body["model"],
            "usage": {"prompt_tokens": 5, "total_tokens": 5},
        }
        raw = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stub(monkeypatch) -> Iterator[str]:
    """Serve the stub on 127.0.0.1 (random port); yield its base_url; stop it afterwards."""
    _Stub.requests, _Stub.fail_with = [], None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(KEY_ENV, "sk-local-test")
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _embedder(base_url: str, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        "text-embedding-3-small", base_url=base_url, api_key_env=KEY_ENV, max_retries=0, **kw
    )


def test_openai_embedder_batches_normalizes_and_caches(stub, tmp_path):
    emb = _embedder(stub, batch_size=2, cache_path=tmp_path / "e.sqlite")
    texts = ["alpha", "beta", "", "gamma", "alpha"]
    vecs = emb.encode(texts)
    assert vecs.shape == (5, 1536) and vecs.dtype == np.float32
    assert [len(r["body"]["input"]) for r in _Stub.requests] == [2, 1]  # 3 distinct non-empty
    assert all(r["auth"] == "Bearer sk-local-test" for r in _Stub.requests)
    assert all(r["body"]["encoding_format"] == "float" for r in _Stub.requests)
    expected = np.asarray(stub_vector("beta", 1536))
    np.testing.assert_allclose(vecs[1], expected / np.linalg.norm(expected), atol=1e-6)
    np.testing.assert_array_equal(vecs[0], vecs[4])
    assert not vecs[2].any(), "empty text is a zero row and is never sent (the API rejects it)"
    emb.encode(texts)
    fresh = _embedder(stub, batch_size=2, cache_path=tmp_path / "e.sqlite")
    np.testing.assert_array_equal(fresh.encode(texts), vecs)
    assert len(_Stub.requests) == 2, "memory and disk cache hits make no request"


def test_openai_embedder_dimensions_and_name(stub):
    emb = _embedder(stub, dimensions=256)
    assert emb.encode(["x"]).shape == (1, 256)
    assert _Stub.requests[0]["body"]["dimensions"] == 256
    assert emb.name == "text-embedding-3-small@256"


def test_openai_embedder_server_error_propagates(stub):
    import openai

    _Stub.fail_with = 500
    with pytest.raises(openai.InternalServerError):
        _embedder(stub).encode(["x"])
    assert len(_Stub.requests) == 1, "max_retries=0: no retry"


def test_openai_embedder_needs_key_env(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ConfigError, match=KEY_ENV):
        OpenAIEmbedder(api_key_env=KEY_ENV, base_url="http://127.0.0.1:9/v1")


def test_openai_embedder_unknown_model_needs_dim(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    with pytest.raises(ConfigError, match="set dim"):
        OpenAIEmbedder("my-local-model", api_key_env=KEY_ENV, base_url="http://127.0.0.1:9/v1")
    emb = OpenAIEmbedder(
        "my-local-model", dim=768, api_key_env=KEY_ENV, base_url="http://127.0.0.1:9/v1"
    )
    assert emb.dim == 768
