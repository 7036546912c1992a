"""Evaluation protocols, one ``EvalProtocol`` subclass per module.

A ``conf/protocol`` config names its class with ``_target_`` (and its ``name:``, the class's
``name``, which tables and run records read); ``recallbench.cli.build.build_protocol`` builds it
with the models its ``MODELS`` declares. Modules are imported on first use only.
"""
