"""``pip install .`` (not editable) gives a ``recallbench`` that composes its packaged configs and
runs a small offline job from a folder outside the checkout.

The wheel is built from a copy of the checkout and installed with ``--no-deps`` into a fresh
venv whose dependencies come from the running interpreter's site-packages (a ``.pth`` line), so
the test needs no network and no second 2.5 GB install; the package itself, its ``conf/`` and
its resources come only from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "data" / "fixtures"


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def test_wheel_install_runs_an_offline_job(tmp_path):
    src = tmp_path / "checkout"
    for part in ("src", "conf"):
        shutil.copytree(
            ROOT / part,
            src / part,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
        )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(src),
        ]
    )
    wheel = next(dist.glob("recallbench-*.whl"))

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    Path(purelib.stdout.strip(), "_deps.pth").write_text("\n".join(deps) + "\n")
    # Without PYTHONPATH: a checkout's src/ on it carries recallbench.egg-info (an editable
    # install), and pip would take the package as already installed and skip the wheel.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], env=clean)

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "WANDB_MODE": "disabled",
        "PYTHONPATH": "",
    }
    where = _run(
        [str(py), "-c", "import recallbench; print(recallbench.__file__, recallbench.CONF_DIR)"],
        cwd=work,
        env=env,
    ).stdout.split()
    assert where[0].startswith(str(env_dir)), where
    assert (Path(where[1]) / "config.yaml").is_file() and not Path(where[1]).is_symlink()

    results = tmp_path / "results"
    _run(
        [
            str(env_dir / "bin" / "recallbench"),
            "dataset=msc",
            f"dataset.data_dir={FIXTURES}",
            "memory=memory_retrieval",
            "generator=extractive",
            "embedder=hashing",
            "metrics=lexical",
            "episodes=1",
            "progress=false",
            "wandb.mode=disabled",
            f"paths.results_dir={results}",
            "tag=install",
        ],
        cwd=work,
        env=env,
    )
    runs = list((results / "runs" / "install").glob("*/*/run.json"))
    assert len(runs) == 1
    assert json.loads(runs[0].read_text())["status"] == "finished"
    summary = json.loads((runs[0].parent / "summary.json").read_text())
    assert summary["n_predictions"] > 0 and "rouge_l" in summary["metrics"]

    # the table command is installed too and finds the papers' references in the wheel
    printed = _run(
        [
            str(env_dir / "bin" / "recallbench-table"),
            "carecall_table1",
            f"paths.data_dir={FIXTURES}",
            "--results",
            str(results),
        ],
        cwd=work,
        env=env,
    ).stdout.split()
    assert str(results / "tables" / "carecall_table1.csv") in printed
    rows = (results / "tables" / "carecall_table1.csv").read_text().splitlines()
    assert rows[1].startswith("Sessions,CareCall_mem (all sessions),sessions,")
