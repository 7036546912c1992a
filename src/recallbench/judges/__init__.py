"""Answer judges (``conf/judge/*.yaml``): ``lexical`` (offline) and ``llm`` (LUFY App. C.1).

```python
from recallbench.judges import build_judge
judge = build_judge({"name": "lexical"})
judge.judge("What is Zoe's dog called?", "Biscuit", "Her dog is Biscuit.").label   # 1
```
Labels: 1 correct, 0 incorrect, 2 don't-know (``recallbench.judges.base``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError, did_you_mean
from recallbench.judges.base import (
    CORRECT,
    DONT_KNOW,
    INCORRECT,
    LABELS,
    Judge,
    JudgeItem,
    Verdict,
)
from recallbench.judges.lexical import LexicalJudge
from recallbench.judges.llm import LLMJudge

__all__ = [
    "CORRECT",
    "DONT_KNOW",
    "INCORRECT",
    "JUDGES",
    "LABELS",
    "Judge",
    "JudgeItem",
    "LLMJudge",
    "LexicalJudge",
    "Verdict",
    "build_judge",
]

JUDGES: dict[str, type[Judge]] = {"lexical": LexicalJudge, "llm": LLMJudge}


def build_judge(cfg: Mapping[str, Any], llm=None) -> Judge:
    """Build the judge ``cfg["name"]`` from a ``conf/judge`` mapping.

    ``llm`` judges with the run's LLM when ``cfg["generator"]`` is null; a ``generator``
    mapping (a ``conf/generator`` config, e.g. gpt-4o as in LUFY) builds a separate LLM cached
    at ``cfg["cache_path"]``.
    """
    params = {str(k): v for k, v in dict(cfg).items()}
    name = params.pop("name", None)
    if name is None:
        raise ConfigError(f"judge config has no 'name' (keys: {sorted(params)})")
    if name not in JUDGES:
        raise did_you_mean("judge", str(name), JUDGES)
    if name == "lexical":
        try:
            return LexicalJudge(**params)
        except TypeError as exc:
            raise ConfigError(f"judge lexical: bad config keys {sorted(params)}: {exc}") from exc
    generator = params.pop("generator", None)
    cache_path = params.pop("cache_path", None)
    params.pop("rating_samples", None)
    params.pop("rating_temperature", None)
    if generator is not None:
        from recallbench.llm import build_llm

        llm = build_llm(dict(generator), Path(cache_path) if cache_path else None)
    if llm is None:
        raise ConfigError("judge llm: no generator configured and no run LLM given")
    try:
        return LLMJudge(llm, **params)
    except TypeError as exc:
        raise ConfigError(f"judge llm: bad config keys {sorted(params)}: {exc}") from exc
