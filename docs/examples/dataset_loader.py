"""A new dataset loader: one JSON line per episode, ``{"id": ..., "sessions": [[[speaker,
text], ...], ...]}``.

In the project: ``src/recallbench/datasets/toy_jsonl.py`` exposing ``load(data_dir, **options)``,
``conf/dataset/toy_jsonl.yaml`` (``_target_: recallbench.datasets.toy_jsonl.load``, ``name``,
``data_dir: ${paths.data_dir}``, ``options``) and fixtures under ``data/fixtures/toy_jsonl/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from recallbench.errors import DataNotFoundError, DatasetFormatError
from recallbench.records import Episode, Session, Turn


def load(
    data_dir: str | Path, *, file: str = "toy.jsonl", limit: int | None = None
) -> list[Episode]:
    """Read ``<data_dir>/toy_jsonl/<file>``; bad input names the file, the line and the problem."""
    path = Path(data_dir) / "toy_jsonl" / file
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no such file (expected the toy_jsonl folder)")
    episodes = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            sessions = tuple(
                Session(
                    f"{row['id']}/s{i}",
                    i,
                    None,
                    tuple(
                        Turn(f"{row['id']}/s{i}/t{j}", speaker, text)
                        for j, (speaker, text) in enumerate(turns)
                    ),
                )
                for i, turns in enumerate(row["sessions"], 1)
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetFormatError(
                f"{path}:{line_no}: expected {{'id', 'sessions': [[[speaker, text], ...]]}}: {exc!r}"
            ) from exc
        speakers = tuple(dict.fromkeys(t.speaker for s in sessions for t in s.turns))
        episodes.append(Episode(str(row["id"]), "toy_jsonl", speakers, sessions))
    return episodes[:limit]
