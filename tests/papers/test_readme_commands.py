"""Every command a paper README (``src/recallbench/papers/*/README.md``) tells a user to run.

- a make target (``make reproduce-table-lufy-11 ...``, or a bare ``reproduce-*`` / ``attribution-*``
  target in a README table) runs as ``make -n`` (every target needs data, models or an API to run
  for real: the dry run proves the target exists and prints its steps), and every experiment its
  steps name exists under ``conf/experiment/``; a target without a rule of its own is planned by
  ``recallbench reproduce --dry-run``'s planner;
- ``recallbench human-eval export <experiment>`` runs for real: on the project's fixtures when
  the study reads the data, and against an empty results folder when it reads runs, where it
  must fail only for want of those runs (``make`` them on the data first);
- ``recallbench-table <experiment>``: the experiment exists and has a table block;
- a command written as a template (``<embedder>``, ``...``) is checked for its program only.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from recallbench import CONF_DIR, cli
from recallbench.cli.reproduce import steps

ROOT = Path(__file__).resolve().parents[2]
READMES = sorted((ROOT / "src" / "recallbench" / "papers").glob("*/README.md"))
FIXTURES = ROOT / "data" / "fixtures"
SPAN = re.compile(
    r"`((?:make |recallbench[ -]|python )[^`]*|(?:reproduce-(?:table|figure)|attribution)-[\w-]+)`"
)


def readme_commands() -> list[tuple[str, str]]:
    """(README's paper, command) for every command span of every paper README."""
    found = []
    for readme in READMES:
        text = " ".join(readme.read_text(encoding="utf-8").split())  # spans may wrap lines
        found += [(readme.parent.name, m[1]) for m in SPAN.finditer(text)]
    return sorted(set(found))


COMMANDS = readme_commands()


def test_the_readmes_hold_commands():
    papers = {paper for paper, _ in COMMANDS}
    assert papers == {p.parent.name for p in READMES} and len(COMMANDS) >= 20


def _experiments_named(lines: str) -> set[str]:
    """The experiments a dry run's steps sweep (``experiment=X``) or render (``table X Y``)."""
    named = set(re.findall(r"experiment=(\w+)", lines))
    for tail in re.findall(r"-m recallbench\.cli table ([^\n]*)", lines):
        named |= {word for word in tail.split() if "=" not in word}
    return named


@pytest.mark.parametrize("paper,command", COMMANDS, ids=lambda x: str(x)[:60])
def test_every_readme_command_runs(paper, command, tmp_path, monkeypatch, capsys):
    template = "<" in command or "..." in command
    words = shlex.split(command.replace("...", ""))
    if words[0] == "make" or re.match(r"(reproduce|attribution)-", words[0]):
        args = words[1:] if words[0] == "make" else words
        target = args[0]
        out = subprocess.run(
            ["make", "-n", "-o", ".venv/.installed", "RESULTS=" + str(tmp_path), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"{paper} README: `{command}`: {out.stderr[-400:]}"
        for experiment in _experiments_named(out.stdout):
            assert (CONF_DIR / "experiment" / f"{experiment}.yaml").exists(), (
                f"{paper} README: `{command}` names the unknown experiment {experiment}"
            )
        for line in out.stdout.splitlines():  # no rule of its own: the planner's (a rule may
            if "-m recallbench.cli reproduce" not in line:  # also hand over to another target)
                continue
            planned = shlex.split(line)[-1]
            found = steps(
                planned, results=tmp_path, gen_args=[], args=[], judge="lexical", make=["make"]
            )
            assert found and found[-1].kind == "table", (target, planned, found)
        return
    if words[0] == "recallbench-table":
        if not template:
            assert (CONF_DIR / "experiment" / f"{words[1]}.yaml").exists(), command
        return
    if words[:2] == ["recallbench", "human-eval"]:
        _human_eval(words[2:], tmp_path, monkeypatch, capsys)
        return
    if words[0] == "python":
        assert (ROOT / words[1]).exists(), f"{paper} README: `{command}`: no {words[1]}"
        if not template:
            subprocess.run([sys.executable, *words[1:]], cwd=ROOT, check=True, timeout=120)
        return
    pytest.fail(f"{paper} README: `{command}`: no rule to check this command")


def _human_eval(args: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    """Run ``recallbench human-eval <args>`` in-process on the fixtures into ``tmp_path``."""
    from recallbench.tables import load_spec

    action, experiment = args[0], args[1]
    human = load_spec(experiment).option("human", None)
    assert isinstance(human, dict), f"{experiment} has no human study"
    if action == "import":  # needs annotators' sheets: the round trip is tests/cli/test_human_eval
        return
    argv = ["recallbench", "human-eval", *args, f"paths.data_dir={FIXTURES}"]
    monkeypatch.setattr(sys, "argv", [*argv, "--results", str(tmp_path)])
    if human.get("runs") is None:  # the study reads the data: the fixtures are enough
        cli.main()
        assert "sheet.csv" in capsys.readouterr().out
        return
    with pytest.raises(SystemExit):  # reads runs: none here, and the error says which
        cli.main()
    err = capsys.readouterr().err
    assert human["runs"] in err and "unknown experiment" not in err, err
