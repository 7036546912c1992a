"""Every module a config's text names exists: notes and comments under ``conf/`` cite code by path
(``memory/blocks/bae_update/_charops.py``) or by dotted name in parentheses
(``(protocols.timerag.scores)``). Issue 36 moved every method and protocol into its own package
and five table notes kept naming the old modules; this catches the next move."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "recallbench"
UNITS = "protocols|memory|metrics|tables|run|llm|datasets|analysis|cli|papers|embed"
PATH = re.compile(rf"(?<![\w/.-])(?:{UNITS})/[\w/]+\.py\b")
DOTTED = re.compile(rf"\(((?:{UNITS})(?:\.\w+)+)[),;: ]")


def named(text: str) -> tuple[list[str], list[str]]:
    """The code paths and the dotted names a text cites."""
    return PATH.findall(text), DOTTED.findall(text)


def resolves(dotted: str) -> bool:
    """Whether ``recallbench.<dotted>`` is a module, or an attribute of its longest module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module("recallbench." + ".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


CONFIGS = sorted(ROOT.glob("conf/**/*.yaml"))


def test_the_patterns_find_what_notes_cite() -> None:
    paths, dotted = named(
        "fit (memory/blocks/bae_update/_charops.py CHARNGRAM_DEFAULTS); matching "
        "(protocols.timerag.scores); Mem0's evaluation/metrics/llm_judge.py prompt; memory.tau=0.2"
    )
    assert paths == ["memory/blocks/bae_update/_charops.py"] and dotted == [
        "protocols.timerag.scores"
    ]
    assert not (PACKAGE / "memory" / "_charops.py").exists()  # the path issue 36 moved
    assert resolves("protocols.timerag.scores") and not resolves("protocols.timerag_scores")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "conf")))
def test_code_a_config_names_exists(config: Path) -> None:
    paths, dotted = named(config.read_text(encoding="utf-8"))
    missing = [p for p in paths if not (PACKAGE / p).is_file()]
    missing += [d for d in dotted if not resolves(d)]
    assert not missing, f"{config.relative_to(ROOT)} names code that does not exist: {missing}"
