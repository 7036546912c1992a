"""``recallbench import-answers``: a published answer file as an ordinary run folder.

    recallbench import-answers FILE --format {locomo-audit,zep,mem0,jsonl,longmemeval}
        --name NAME [--latency FILE] [--system TEXT] [KEY=VALUE ...]

The command hashes FILE, composes the run config (LoCoMo formats: ``dataset=locomo
protocol=locomo_import memory=no_memory generator=extractive +judge=mem0_j tag=imported``;
``longmemeval``: ``dataset=longmemeval protocol=longmemeval_import +judge=longmemeval``, the
same memory, generator and tag; then the user's overrides, e.g. ``dataset.options.errata=default``,
``protocol.errata=default`` or ``judge.generator=...``) and runs it through the run layer
(``cli.job.run``, ``run.job.run_job``): the run folder is ``results/runs/<tag>/<stamp>/<NAME>``
and its path is the last line printed. A bad file is one line naming the file and the item,
exit 2, and no run folder is left behind. Logic: ``recallbench.protocols.locomo_import`` and
``recallbench.protocols.longmemeval_import``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from recallbench.cli.config import check_choices, compose_job, picked_choices, user_errors
from recallbench.errors import DatasetFormatError, did_you_mean
from recallbench.protocols import longmemeval_import
from recallbench.protocols.locomo_import import FORMATS as LOCOMO_FORMATS
from recallbench.protocols.locomo_import import file_sha256, read_answer_file
from recallbench.run.sweep import new_stamp

LME = longmemeval_import.FORMAT
FORMATS = (*LOCOMO_FORMATS, LME)
DEFAULTS = ("dataset=locomo", "memory=no_memory", "generator=extractive", "protocol=locomo_import")
LME_DEFAULTS = (
    "dataset=longmemeval",
    "memory=no_memory",
    "generator=extractive",
    "protocol=longmemeval_import",
)
JUDGE = {LME: "longmemeval"}  # the run's judge per format (else mem0_j, LoCoMo's J)


def read_file(path: Path, fmt: str) -> None:
    """Read ``path`` as ``fmt`` (a bad file raises ``DatasetFormatError`` naming the item)."""
    if fmt == LME:
        longmemeval_import.read_hypotheses(path)
    else:
        read_answer_file(path, fmt)


def parser() -> argparse.ArgumentParser:
    """The command's arguments (a format is checked by ``import_overrides``: did you mean)."""
    p = argparse.ArgumentParser(
        prog="recallbench import-answers",
        description="Turn a published answer file into a run folder (last line printed).",
    )
    p.add_argument("file", type=Path, help="the answer file")
    p.add_argument("--format", required=True, help=f"one of: {', '.join(FORMATS)}")
    p.add_argument("--name", required=True, help="the run's job name (its folder)")
    p.add_argument("--latency", type=Path, help="zep: the responses file with duration_ms")
    p.add_argument("--system", help="what produced the answers (recorded in run.json)")
    p.add_argument("overrides", nargs="*", help="config overrides, e.g. tag=referee")
    return p


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def import_overrides(args: argparse.Namespace) -> list[str]:
    """The run's overrides: the defaults, the file's keys, then the user's."""
    if args.format not in FORMATS:
        raise did_you_mean("--format", args.format, FORMATS)
    for path in (args.file, args.latency):
        if path is not None and not path.is_file():
            raise DatasetFormatError(f"{path}: no such answer file")
    if args.format == LME and args.latency is not None:
        raise DatasetFormatError(f"{args.latency}: --latency is for zep files, not {LME}")
    user = list(args.overrides)
    keys = {o.split("=", 1)[0].lstrip("+~") for o in user}
    defaults = LME_DEFAULTS if args.format == LME else DEFAULTS
    out = [d for d in defaults if d.split("=")[0] not in keys]
    if "judge" not in keys:
        out.append(f"+judge={JUDGE.get(args.format, 'mem0_j')}")
    if "tag" not in keys:
        out.append("tag=imported")
    out += [
        f"protocol.file={_quoted(str(args.file.resolve()))}",
        f"protocol.format={args.format}",
        f"protocol.sha256={file_sha256(args.file)}",
    ]
    if args.latency is not None:
        out.append(f"protocol.latency_file={_quoted(str(args.latency.resolve()))}")
    if args.system:
        out.append(f"protocol.system={_quoted(args.system)}")
    return out + user


def import_main(argv: list[str]) -> None:
    """Entry point of ``recallbench import-answers``."""
    from recallbench.cli.job import run
    from recallbench.run.sweep import sweep_folder

    args = parser().parse_intermixed_args(argv)
    with user_errors("recallbench import-answers"):
        overrides = import_overrides(args)
        check_choices(overrides)
        cfg, choices = compose_job([*overrides, f"stamp={new_stamp()}"])
        sweep_dir = sweep_folder(cfg, False)
        read_file(args.file, args.format)  # a bad file fails before any folder exists
        mine = (sweep_dir.parent, sweep_dir, sweep_dir / args.name)
        made = [d for d in mine if not d.exists()]
        try:
            folder = run(cfg, args.name, picked_choices(choices), overrides)
        except BaseException:
            for d in reversed(made):  # no run folder left behind
                shutil.rmtree(d, ignore_errors=True)
            raise
    print(folder, flush=True)
    sys.stdout.flush()
