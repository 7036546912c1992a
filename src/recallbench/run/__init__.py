"""The run layer: replaying episodes through a method and recording what happened.

``runner`` (the Runner: replay, score, write the run folder), ``resume`` (what a previous attempt
left), ``record`` (run.json, health, interruption), ``provenance`` (code and data identity),
``report`` (the end-of-run summary) and ``tracking`` (wandb). It sits above the protocols and
below ``analysis``, the tables and the cli (pyproject's import-linter layers).
"""
