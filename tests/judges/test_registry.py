"""Judges build from conf/judge (their _target_, or a name without one); did-you-mean on a miss."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recallbench.cli.build import BY_NAME, build_judge
from recallbench.errors import ConfigError
from recallbench.judges import LexicalJudge, LLMJudge, Verdict
from recallbench.llm import build_llm

CONF = Path(__file__).resolve().parents[2] / "conf" / "judge"


def test_every_judge_config_builds():
    names = sorted(p.stem for p in CONF.glob("*.yaml"))
    by_name = BY_NAME["judge"][1]
    assert names == sorted(by_name)  # a judge written inline by name finds every config's class
    llm = build_llm({"backend": "extractive"})
    for path in CONF.glob("*.yaml"):
        cfg = yaml.safe_load(path.read_text())
        cfg.pop("cache_path", None)  # an interpolation outside a composed config
        assert cfg["_target_"] == by_name[cfg["name"]]
        judge = build_judge(cfg, llm=llm)
        assert judge.judge("Who?", "Zoe", "Zoe").label == 1
        inline = {k: v for k, v in cfg.items() if k != "_target_"}
        assert type(build_judge(inline, llm=llm)) is type(judge)


def test_unknown_judge_and_bad_keys():
    with pytest.raises(KeyError, match="Did you mean 'lexical'"):
        build_judge({"name": "lexicl"})
    with pytest.raises(ConfigError, match="judge: .*LexicalJudge.*treshold"):
        build_judge({"name": "lexical", "treshold": 0.5})
    with pytest.raises(ConfigError, match="judge: .*recallbench.judges.lexcal.LexicalJudge"):
        build_judge({"_target_": "recallbench.judges.lexcal.LexicalJudge", "name": "lexical"})
    with pytest.raises(ConfigError, match="no generator"):
        build_judge({"name": "llm"})
    assert isinstance(build_judge({"name": "lexical", "threshold": 0.6}), LexicalJudge)
    assert isinstance(build_judge({"name": "llm"}, llm=build_llm({})), LLMJudge)


def test_verdict_validates_label():
    with pytest.raises(ValueError, match="label"):
        Verdict(label=3, raw="3")
