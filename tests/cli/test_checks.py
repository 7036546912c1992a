"""Every shipped config passes the pre-run checks, and a wrong key or value in any of them does
not (``cli.checks``): the checks follow each constructor's signature, so a new config or a new
argument is covered without a test of its own."""

from __future__ import annotations

import copy
import typing
from pathlib import Path

import pytest
from omegaconf import OmegaConf, open_dict

from recallbench import CONF_DIR
from recallbench.cli.build import plain
from recallbench.cli.checks import check_config
from recallbench.cli.config import compose_job
from recallbench.cli.signatures import describe, fits, parameters
from recallbench.errors import ConfigError

GROUPS = ("memory", "protocol", "embedder", "dataset", "generator", "judge")
CHOICES = [
    (group, p.stem)
    for group in GROUPS
    for p in sorted((Path(CONF_DIR) / group).glob("*.yaml"))
    if not p.stem.startswith("_")
]


def _compose(group: str, choice: str):
    prefix = "+" if group == "judge" else ""
    cfg, _ = compose_job([f"{prefix}{group}={choice}"])
    return cfg


def _node(cfg, group: str):
    return cfg[group].options if group == "dataset" else cfg[group]


@pytest.mark.parametrize("group,choice", CHOICES, ids=[f"{g}={c}" for g, c in CHOICES])
def test_every_config_passes_and_its_keys_are_guarded(group, choice):
    cfg = _compose(group, choice)
    check_config(cfg)  # the shipped config is right as it is
    bad = copy.deepcopy(cfg)
    with open_dict(bad):
        _node(bad, group)["zz_unknown"] = 1
    with pytest.raises(ConfigError, match=r"zz_unknown=1: no such key"):
        check_config(bad)


def _typed_keys(group: str, node: dict) -> list[tuple[str, object]]:
    """Keys of ``node`` whose constructor annotation is a plain number or bool type."""
    from hydra.utils import get_object

    from recallbench.llm.config import KEY_TYPES

    if group == "generator":
        hints = KEY_TYPES
    else:
        target = node.get("_target_")
        if not target:
            return []
        _, hints, _ = parameters(get_object(target))
    keys = node.get("options", {}) if group == "dataset" else node
    plain_types = {int, float, bool, int | None, float | None, bool | None}
    return [(k, hints[k]) for k in keys if k in hints and hints[k] in plain_types]


@pytest.mark.parametrize("group,choice", CHOICES, ids=[f"{g}={c}" for g, c in CHOICES])
def test_a_value_of_the_wrong_type_names_key_value_and_type(group, choice):
    cfg = _compose(group, choice)
    for key, annotation in _typed_keys(group, plain(cfg[group])):
        bad = copy.deepcopy(cfg)
        with open_dict(bad):
            _node(bad, group)[key] = "abc"
        with pytest.raises(ConfigError) as caught:
            check_config(bad)
        assert f"{key}='abc': expected {describe(annotation)}" in str(caught.value)


@pytest.mark.parametrize(
    "value,annotation,ok",
    [
        (3, int, True),
        (True, int, False),  # a bool is not a count
        (2.5, int, False),
        (2, float, True),
        (None, float | None, True),
        (None, float, False),
        ("rif", typing.Literal["rif", "literal"], True),
        ("x", typing.Literal["rif", "literal"], False),
        ([1, 2], list[float], True),
        ({"a": 1}, typing.Mapping[str, float], True),
        ([1], typing.Mapping[str, float], False),
        ("p", Path, True),
        (object(), OmegaConf, True),  # an object a builder converts itself
    ],
)
def test_fits(value, annotation, ok):
    assert fits(value, annotation) is ok


def test_a_judge_chosen_by_name_inside_a_protocol_is_checked_against_its_class():
    """qa_gvd's ``caim_judge: {name: lexical, ...}`` has no ``_target_``: the name picks it."""
    cfg, _ = compose_job(["protocol=qa_gvd", "dataset=gvd"])
    check_config(cfg)
    for key, value, expected in [
        (
            "treshold",
            0.5,
            r"protocol.caim_judge.treshold=0.5: no such key. Did you mean 'threshold'",
        ),
        ("fuzzy", "abc", r"protocol.caim_judge.fuzzy='abc': expected"),
    ]:
        bad = copy.deepcopy(cfg)
        with open_dict(bad):
            bad.protocol.caim_judge[key] = value
        with pytest.raises(ConfigError, match=expected):
            check_config(bad)
    bad = copy.deepcopy(cfg)
    bad.protocol.caim_judge.name = "lexcal"
    with pytest.raises(KeyError, match="unknown caim_judge name 'lexcal'. Did you mean 'lexical'"):
        check_config(bad)


def _matrix_jobs() -> list[list[str]]:
    """The jobs of conf/experiment/matrix.yaml: every setting with the reference method, every
    method with the first setting (each override list as `recallbench-matrix` composes it)."""
    from recallbench.cli.matrix import job_overrides
    from recallbench.cli.matrix_plan import matrix_block, methods_of, settings_of

    cfg, _ = compose_job(["experiment=matrix"])
    block = matrix_block(cfg, "matrix.yaml")
    settings, methods = settings_of(block, "matrix"), methods_of(block, "matrix")
    reference = str(block["reference"])
    jobs = [job_overrides(s, reference, "matrix", []) for s in settings]
    return jobs + [job_overrides(settings[0], m.memory, "matrix", []) for m in methods]


@pytest.mark.parametrize("overrides", _matrix_jobs(), ids=lambda o: o[-1].split("=", 1)[1])
def test_every_matrix_job_passes_the_checks(overrides):
    cfg, choices = compose_job(overrides)
    check_config(cfg)
    assert choices["memory"] == overrides[-4].split("=", 1)[1]


def test_a_deletion_on_the_command_line_reaches_the_checked_job():
    """The documented switch to the LLM CAIM judge deletes the lexical node first
    (``conf/protocol/qa_gvd.yaml``); the checks compose the job with the deletion, so the
    lexical judge's ``threshold`` is not held against the LLM judge's constructor."""
    from recallbench.cli.checks import expand_jobs

    argv = [
        "protocol=qa_gvd",
        "~protocol.caim_judge",
        "+protocol.caim_judge={name: llm, generator: {backend: extractive}}",
    ]
    jobs, multirun = expand_jobs(argv)
    assert jobs == [argv] and not multirun
    cfg, _ = compose_job(jobs[0])
    assert "threshold" not in cfg.protocol.caim_judge
    check_config(cfg)  # raised "protocol.caim_judge.threshold=1.0: no such key" before
