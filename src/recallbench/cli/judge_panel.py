"""``recallbench judge-panel``: re-score a QA run with a panel of judges and probes.

    recallbench judge-panel <run or sweep folder> [--judge SPEC ...] [--variants a,b,...]
        [--probes a,b,...] [--seed 0] [--distractors 4] [--out DIR] [--cache-dir DIR]

A SPEC is a ``conf/judge`` choice (``lexical``, ``llm``) or a YAML mapping:

    --judge lexical
    --judge '{name: lexical, threshold: 1.0, label: lexical-strict}'
    --judge '{name: llm, generator: openai, variants: [lufy_c1, strict]}'   # a conf/generator choice
    --judge '{name: llm, generator: {backend: openai, model: gpt-4o-mini,
              base_url: "http://127.0.0.1:8000/v1"}, label: local}'

An ``llm`` judge runs every prompt variant (``--variants``, default all:
``recallbench.judgepanel.variants``) on its generator (null: the run's own, from its
resolved config); its calls go through the LLM cache (``<cache dir>/llm.sqlite``) and their usage is
in panel.json. Without ``--judge`` the panel is ``lexical`` and ``llm`` on the run's generator.
Offline (extractive backend) an LLM judge's variants are their offline twins (lexical rules,
said in the table header) or unavailable (n/a): only an LLM can stand in for an LLM judge.

Files go to ``<run>/judge_panel/`` (``--out`` for another folder; with a sweep folder each run
gets ``<out>/<job>``): see ``recallbench.judgepanel.report``. Logic: ``recallbench.judgepanel``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import yaml

from recallbench.cli.build import build_generator, build_judge
from recallbench.cli.config import check_choices, compose_job, user_errors
from recallbench.errors import ConfigError
from recallbench.run.read import RunConfig, RunRecord

DEFAULT_JUDGES = ("lexical", "llm")
LLM_KEYS = {"name", "label", "generator", "variants", "cache_path"}
# keys of conf/judge/llm.yaml that concern the run's LLMJudge only (its C.1 fallback, Table 8)
LLM_IGNORED = {"_target_", "fallback", "rating_samples", "rating_temperature"}


def parse_spec(text: str) -> dict[str, Any]:
    """A ``--judge`` value as a mapping: ``{"name": choice}`` or the YAML mapping given."""
    if text.replace("_", "").replace("-", "").isalnum():
        return {"choice": text}
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"--judge {text!r}: not a judge choice nor a YAML mapping ({exc})"
        ) from None
    if not isinstance(spec, dict) or not ("name" in spec or "_target_" in spec):
        raise ConfigError(
            f"--judge {text!r}: expected a conf/judge choice or a mapping with name "
            "(lexical | llm) or _target_"
        )
    return spec


def _choice(group: str, name: str, cache_dir: Path) -> dict[str, Any]:
    """The composed ``conf/<group>/<name>.yaml`` as plain values."""
    from omegaconf import OmegaConf

    plus = "+" if group == "judge" else ""  # the app config has no judge group by default
    check_choices([f"{group}={name}"])  # an unknown name: "did you mean"
    cfg, _ = compose_job([f"{plus}{group}={name}", f"paths.cache_dir={cache_dir}"])
    return dict(OmegaConf.to_container(cfg[group], resolve=True))  # type: ignore[arg-type]


def _llm_node(spec: dict[str, Any], run_config: RunConfig, cache_dir: Path) -> Any:
    generator = spec.get("generator")
    if generator is None:
        run_generator = dict(run_config.generator.settings)
        return run_generator or {"backend": "extractive", "model": "extractive"}
    if isinstance(generator, str):
        return _choice("generator", generator, cache_dir)
    return generator


def build_panel_judges(
    specs: list[str], run_config: RunConfig, cache_dir: Path, variants: list[str] | None
) -> tuple[list[Any], list[Any]]:
    """The panel's judges from ``--judge`` values; also the LLMs built (to close them)."""
    from recallbench.judgepanel import AnswerJudge, pick_variants, prompt_judges

    judges: list[Any] = []
    llms: list[Any] = []
    for text in specs or DEFAULT_JUDGES:
        spec = parse_spec(text)
        if "choice" in spec:
            spec = _choice("judge", spec["choice"], cache_dir)
        label = spec.pop("label", None)
        if spec.get("name") == "llm":
            unknown = sorted(set(spec) - LLM_KEYS - LLM_IGNORED)
            if unknown:
                raise ConfigError(f"--judge {text!r}: unknown keys {unknown} ({sorted(LLM_KEYS)})")
            cache = spec.get("cache_path") or cache_dir / "llm.sqlite"
            llm = build_generator(_llm_node(spec, run_config, cache_dir), cache, "judge.generator")
            llms.append(llm)
            picked = pick_variants(spec.get("variants") or variants)
            protocol = run_config.protocol.name
            judges += prompt_judges(llm, picked, label, protocol)
        else:
            spec.pop("variants", None)
            judges.append(AnswerJudge(build_judge(spec), label))
    return judges, llms


def _cache_dir(given: str | None, run_config: RunConfig) -> Path:
    if given:
        return Path(given)
    configured = run_config.path("cache_dir")
    return Path(configured) if configured else Path("results/cache")


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def panel_one(run: RunRecord, ns: argparse.Namespace, out: Path) -> dict[str, Path]:
    """Run the panel on one run (a ``run.read.RunRecord``) and write its files into ``out``."""
    from recallbench.judgepanel import PanelOptions, run_panel, write_report

    probes = tuple(ns.probes.split(",")) if ns.probes else PanelOptions.probes
    options = PanelOptions(probes=probes, seed=ns.seed, distractors=ns.distractors)
    variants = ns.variants.split(",") if ns.variants else None
    judges, llms = build_panel_judges(
        ns.judge or [], run.config, _cache_dir(ns.cache_dir, run.config), variants
    )
    try:
        result = run_panel(run.path, judges, options)
    finally:
        for llm in llms:
            llm.close()
    for label, rates in result.acceptance.items():
        shown = ", ".join(f"{k} {_percent(v['value'])}" for k, v in rates.items())
        print(f"  {label}: {shown}")
    return write_report(result, out)


def _check_options(ns: argparse.Namespace, probes: tuple[str, ...], pick_variants: Any) -> None:
    """Check ``--probes``, ``--variants`` and ``--judge`` before any work."""
    unknown = sorted(set(ns.probes.split(",")) - set(probes)) if ns.probes else []
    if unknown:
        raise ConfigError(f"--probes: unknown probes {unknown} (options: {', '.join(probes)})")
    pick_variants(ns.variants.split(",") if ns.variants else None)
    for text in ns.judge or []:
        spec = parse_spec(text)
        if "choice" in spec:
            check_choices([f"judge={spec['choice']}"])


def judge_panel_main(argv: list[str] | None = None) -> None:
    """Console entry ``recallbench judge-panel`` (module docstring)."""
    parser = argparse.ArgumentParser(
        prog="recallbench judge-panel",
        description="Re-score a QA run's answers (LUFY qa, GVD qa_gvd, TeaFarm) and probes "
        "built from it with several judges and prompt variants; write acceptance per probe, "
        "agreement and the spread of the headline metric as tables, a figure and JSON.",
    )
    parser.add_argument("folder", help="a run folder, or a sweep folder (each QA run in it)")
    parser.add_argument("--judge", action="append", metavar="SPEC", help="repeatable; see doc")
    parser.add_argument("--variants", help="prompt variants of LLM judges (default: all)")
    parser.add_argument("--probes", help="probes to build (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="probe seed (default 0)")
    parser.add_argument("--distractors", type=int, default=4, help="verbose padding sentences")
    parser.add_argument("--out", type=Path, help="output folder (default: <run>/judge_panel)")
    parser.add_argument("--cache-dir", help="LLM cache folder (default: the run's paths)")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of user errors")
    ns = parser.parse_args(argv)
    if ns.verbose:
        os.environ["RECALLBENCH_VERBOSE"] = "1"
    with user_errors("recallbench judge-panel"):
        from recallbench.analysis import runs_in
        from recallbench.judgepanel import PROBES, PROTOCOLS, pick_variants

        _check_options(ns, PROBES, pick_variants)
        runs = runs_in(ns.folder)
        usable = [r for r in runs if r.config.protocol.name in PROTOCOLS]
        if not usable:
            raise ConfigError(
                f"{ns.folder}: no finished run of a QA-style protocol ({', '.join(PROTOCOLS)}) "
                f"in it ({len(runs)} finished run(s) of other protocols)"
            )
        for run in usable:
            single = len(usable) == 1
            out = ns.out if ns.out and single else (ns.out / run.job if ns.out else None)
            print(f"recallbench judge-panel: {run.path}")
            paths = panel_one(run, ns, out or run.path / "judge_panel")
            print(f"  -> {paths['table.md'].parent}")
