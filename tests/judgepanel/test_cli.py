"""``recallbench judge-panel``: defaults offline, sweep folders, one-line errors."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from recallbench.cli import main
from recallbench.cli.judge_panel import judge_panel_main


def test_default_panel_offline_says_what_is_unavailable(tiny_run, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["recallbench", "judge-panel", str(tiny_run)])
    main()  # dispatched through cli.SUBCOMMANDS
    out = tiny_run / "judge_panel"
    panel = json.loads((out / "panel.json").read_text())
    status = {j["label"]: j.get("status", "rule") for j in panel["judges"]}
    assert status == {
        "lexical": "rule",
        "extractive:extractive/lufy_c1": "offline twin",
        "extractive:extractive/caim_correctness": "offline twin",
        "extractive:extractive/teafarm_fig29": "unavailable",  # its twin fits TeaFarm only
        "extractive:extractive/mem0_j": "unavailable",  # its twin fits LoCoMo runs only
        "extractive:extractive/lenient": "unavailable",
        "extractive:extractive/strict": "unavailable",
    }
    # C.1's offline twin is the lexical judge: identical verdicts
    acc = panel["acceptance"]
    assert acc["lexical"] == acc["extractive:extractive/lufy_c1"]
    assert acc["extractive:extractive/strict"]["vague"]["value"] is None
    md = (out / "judge_panel.md").read_text()
    assert (
        "**unavailable**: extractive:extractive/teafarm_fig29, extractive:extractive/mem0_j, "
        "extractive:extractive/lenient" in md
    )
    fig29 = next(j for j in panel["judges"] if j["label"].endswith("teafarm_fig29"))
    assert "for qa runs (its twin fits teafarm)" in fig29["note"]
    assert "n/a" in md.split("extractive:extractive/strict |")[1].splitlines()[0]
    assert str(out) in capsys.readouterr().out


def test_sweep_folder_gets_one_panel_per_run(tiny_run, tmp_path):
    second = tiny_run.parent / "other-job"
    shutil.copytree(tiny_run, second)
    judge_panel_main([str(tiny_run.parent), "--judge", "lexical", "--out", str(tmp_path / "p")])
    assert (tmp_path / "p" / "tiny-job" / "judge_panel.md").is_file()
    assert (tmp_path / "p" / "other-job" / "judge_panel.md").is_file()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--judge", "{name: llm, colour: red}"], "unknown keys ['colour']"),
        (["--judge", "[1, 2]"], "expected a conf/judge choice or a mapping"),
        (["--judge", "lexcal"], "Did you mean"),
        (["--variants", "lenint"], "Did you mean"),
        (["--probes", "vauge"], "unknown probes"),
    ],
)
def test_bad_options_are_one_line(tiny_run, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        judge_panel_main([str(tiny_run), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1 and message in err[0], err


def test_a_folder_without_qa_runs_is_one_line(tmp_path, make_run, capsys):
    make_run(tmp_path, protocol="response")
    with pytest.raises(SystemExit):
        judge_panel_main([str(tmp_path)])
    assert "no finished run of a QA-style protocol" in capsys.readouterr().err


def test_an_offline_twin_serves_only_the_protocol_it_was_built_for():
    from recallbench.judgepanel import VARIANTS, PromptJudge
    from recallbench.llm import build_llm

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    fig29, c1 = VARIANTS["teafarm_fig29"], VARIANTS["lufy_c1"]
    assert PromptJudge(llm, fig29, protocol="teafarm").available
    assert not PromptJudge(llm, fig29, protocol="qa").available
    assert not PromptJudge(llm, fig29).available  # protocol unknown: no fit claimed
    assert PromptJudge(llm, c1, protocol="qa_gvd").available  # C.1's twin: any QA run
    assert not PromptJudge(llm, VARIANTS["strict"], protocol="qa").available  # no twin at all
