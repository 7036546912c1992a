"""Test support shipped with the package: an OpenAI-compatible stub server (``testing.stub``).

Nothing else in ``src/`` imports this package; tests and benchmarks do.
"""
