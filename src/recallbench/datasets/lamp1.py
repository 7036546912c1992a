"""LaMP-1, personalized citation identification (Salemi et al., ACL 2024, arXiv 2304.11406).

Files (layout of the LaMP download, kept by ``FadyRezkGhattas/LaMP``):
``<data_dir>/lamp1/{user,time}/LaMP_1/{split}_questions.json`` and ``{split}_outputs.json``
(``setting`` = user- or time-based separation; ``split`` = ``train``/``dev``/``test``; test has no
outputs: its gold is withheld for the leaderboard).

``*_questions.json``: ``[{"id", "input", "profile": [{"id", "title", "abstract", "date"}, ...]}]``;
``*_outputs.json``: ``{"task": "LaMP_1", "golds": [{"id", "output": "[1]"|"[2]"}]}``.

Mapping (LaMP-1 is not a dialogue; the profile plays the long-term memory, the input the query):

- one Episode per question, ``episode_id`` = the question ``id``, speakers ``("profile",)``;
- one Session (index 1, ``clock.EPOCH``) whose turns are the profile items in file order:
  speaker ``"profile"``, text ``title`` (+ ``"\\n"`` + ``abstract`` when ``abstracts=True`` and
  present), ``labels = {"date": <year as string>, "item_id": <id>}``; turn ids
  ``<question id>/s1/<item id>``;
- one QAItem: ``qa_id`` = id, ``question`` = ``input``, ``answers`` = ``("[1]",)`` or
  ``("[2]",)`` (``()`` for test), ``after_session=1``, ``kind="lamp1"``, ``meta`` = the paper title
  and the two candidate reference titles parsed from the input when it has the standard wording.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from recallbench.clock import EPOCH
from recallbench.datasets._common import display, get, read_json, require_file, session_id
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode, QAItem, Session, Turn

FOLDER = Path("lamp1")
SETTINGS = ("user", "time")
SPLITS = ("train", "dev", "test")
LABELS = ("[1]", "[2]")
# The standard LaMP-1 prompt (LaMP repo, data/datasets.py); used only to fill QAItem.meta.
_INPUT = re.compile(
    r'For an author who has written the paper with the title "(?P<title>.*)", which reference is'
    r" related\? Just answer with \[1\] or \[2\] without explanation\. "
    r'\[1\]: "(?P<ref1>.*)" \[2\]: "(?P<ref2>.*)"',
    re.S,
)


def load(
    data_dir: Path,
    setting: Literal["user", "time"] = "user",
    split: Literal["train", "dev", "test"] = "dev",
    limit: int | None = None,
    abstracts: bool = True,
) -> list[Episode]:
    """Load LaMP-1 questions as one-session episodes with one QAItem each (see module docstring)."""
    data_dir = Path(data_dir)
    if setting not in SETTINGS:
        raise ConfigError(f"lamp1: unknown setting {setting!r} (options: {', '.join(SETTINGS)})")
    if split not in SPLITS:
        raise ConfigError(f"lamp1: unknown split {split!r} (options: {', '.join(SPLITS)})")
    folder = data_dir / FOLDER / setting / "LaMP_1"
    qpath = require_file(folder / f"{split}_questions.json", data_dir, "LaMP-1 questions")
    questions = read_json(qpath, data_dir)
    qname = display(qpath, data_dir)
    if not isinstance(questions, list):
        raise DatasetFormatError(f"{qname}: expected a JSON list of questions")
    golds = None if split == "test" else _golds(folder / f"{split}_outputs.json", data_dir)
    episodes = []
    for i, question in enumerate(questions[:limit] if limit is not None else questions):
        where = f"{qname} record {i}"
        episodes.append(_episode(question, where, golds, setting, split, abstracts))
    if golds is not None and limit is None:
        extra = sorted(set(golds) - {e.episode_id for e in episodes})
        if extra:
            raise DatasetFormatError(
                f"{display(folder / f'{split}_outputs.json', data_dir)}: golds for ids not in "
                f"{qname}: {extra[:5]}{' ...' if len(extra) > 5 else ''}"
            )
    return episodes


def _golds(path: Path, data_dir: Path) -> dict[str, tuple[str, str]]:
    path = require_file(path, data_dir, "LaMP-1 outputs")
    name = display(path, data_dir)
    data = read_json(path, data_dir)
    task = get(data, "task", str, name)
    if task != "LaMP_1":
        raise DatasetFormatError(f"{name}: 'task' should be 'LaMP_1', got {task!r}")
    golds: dict[str, tuple[str, str]] = {}
    for i, gold in enumerate(get(data, "golds", list, name)):
        where = f"{name} golds[{i}]"
        qid, output = get(gold, "id", str, where), get(gold, "output", str, where)
        if output not in LABELS:
            raise DatasetFormatError(f"{where}: output should be '[1]' or '[2]', got {output!r}")
        if qid in golds:
            raise DatasetFormatError(f"{where}: duplicate id {qid!r}")
        golds[qid] = (output, where)
    return golds


def _episode(
    question: Any,
    where: str,
    golds: dict[str, tuple[str, str]] | None,
    setting: str,
    split: str,
    abstracts: bool,
) -> Episode:
    qid = str(get(question, "id", (str, int), where))
    where = f"{where} (id {qid})"
    text = get(question, "input", str, where)
    sid = session_id(qid, 1)
    turns, seen = [], set[str]()
    for j, item in enumerate(get(question, "profile", list, where)):
        turns.append(_profile_turn(item, f"{where} profile[{j}]", sid, seen, abstracts))
    if golds is not None and qid not in golds:
        raise DatasetFormatError(f"{where}: no gold output for this id in the outputs file")
    answers = (golds[qid][0],) if golds is not None else ()
    m = _INPUT.fullmatch(text.strip())
    meta = {"title": m["title"], "options": {"[1]": m["ref1"], "[2]": m["ref2"]}} if m else {}
    qa = QAItem(qid, text, answers, 1, (), "lamp1", meta)
    session = Session(sid, 1, EPOCH, tuple(turns), {})
    ep_meta = {"setting": setting, "split": split, "source": where, "gold": golds is not None}
    return Episode(qid, "lamp1", ("profile",), (session,), (qa,), ep_meta)


def _profile_turn(item: Any, where: str, sid: str, seen: set[str], abstracts: bool) -> Turn:
    item_id = str(get(item, "id", (str, int), where))
    title = get(item, "title", str, where)
    abstract = item.get("abstract") or ""
    if not isinstance(abstract, str):
        raise DatasetFormatError(f"{where}: 'abstract' should be a string")
    date = item.get("date")
    labels = {"item_id": item_id, "date": None if date is None else str(date)}
    # Item ids are unique per profile in LaMP; suffix a repeat rather than lose it.
    key = item_id if item_id not in seen else f"{item_id}#{len(seen)}"
    seen.add(key)
    text = f"{title}\n{abstract}" if abstracts and abstract.strip() else title
    return Turn(f"{sid}/{key}", "profile", text, labels)
