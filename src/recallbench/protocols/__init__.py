"""Evaluation protocols, one package per protocol: its ``EvalProtocol`` and its scoring.

A ``conf/protocol`` config names its class with ``_target_`` (and its ``name:``, the class's
``name``, which tables and run records read); ``recallbench.cli.build.build_protocol`` builds it
with the models its ``MODELS`` declares. Modules are imported on first use only. At this root
only the contract (``base``) and what several protocols share (``evidence``: a question's
evidence turns and the oracle recall); ``tests/test_architecture.py`` keeps the layout.
"""
