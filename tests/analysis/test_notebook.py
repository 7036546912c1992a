"""The shipped notebook finds the project's results from notebooks/ (where nbconvert runs its
kernel), plots a metric against a swept value, and says clearly when there are no runs."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "01_runs_overview.ipynb"


def _execute(cwd: Path) -> str:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()  # raises CellExecutionError on any failing cell
    return "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )


@pytest.fixture
def project(tmp_path, make_run, monkeypatch):
    """A checkout-shaped folder with a k-sweep's runs; the kernel will run in its notebooks/."""
    monkeypatch.delenv("RECALLBENCH_RESULTS_DIR", raising=False)
    monkeypatch.delenv("RECALLBENCH_TAG", raising=False)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text("tag: adhoc\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'recallbench'\n")
    (tmp_path / "notebooks").mkdir()
    for k, f1 in ((2, 0.25), (4, 0.5), (6, 0.75)):
        make_run(
            tmp_path / "results",
            "ksweep",
            "20260101-000000",
            f"msc-mr-memory.k_{k}",
            overrides=(f"memory.k={k}",),
            config={"memory": {"k": k}},
            metrics={"f1": f1},
        )
    return tmp_path


def test_notebook_finds_the_projects_runs_from_the_notebooks_folder(project):
    printed = _execute(project / "notebooks")
    assert f"3 finished runs under {project / 'results' / 'runs' / '*'}" in printed
    assert "numeric and varied: ['memory.k']" in printed
    assert (project / "results" / "figures" / "runs_by_memory.k.png").is_file()
    assert (project / "results" / "figures" / "runs_overview.png").is_file()


def test_notebook_says_there_are_no_runs_of_an_unknown_tag(project, monkeypatch):
    monkeypatch.setenv("RECALLBENCH_TAG", "mysweep")
    printed = _execute(project / "notebooks")
    assert f"No finished runs under {project / 'results' / 'runs' / 'mysweep'}" in printed
    assert "ksweep (3 finished)" in printed
    assert "no runs: nothing to plot" in printed
