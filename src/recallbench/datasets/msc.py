"""MSC, Multi-Session Chat (Xu, Szlam, Weston, ACL 2022, "Beyond Goldfish Memory").

Two layouts under ``<data_dir>/msc/``:

``format="parlai"`` (default): ParlAI's unpacked ``msc_v0.1`` folder ``msc/msc/``, JSON Lines:

- ``msc_dialogue/session_N/{split}.txt``: one record per episode whose LAST session (session N) is
  ``dialog`` (ids ``Speaker 1``/``Speaker 2``) and whose sessions 1..N-1 are ``previous_dialogs``
  (no speaker ids: even index = Speaker 1, every MSC session opens with Speaker 1).
- ``msc_personasummary/session_N/{split}.txt``: session N alone with per-utterance persona
  extraction; ids ``bot_0``/``bot_1``.

Episode reconstruction: for each ``initial_data_id`` take the highest ``msc_dialogue`` file that has
it (sessions 1..N), then append ``msc_personasummary/session_{N+1}``, ``_{N+2}`` ... while they
hold that id (their ``dialog`` is the next session). ParlAI's ``msc_v0.1`` (``make data``) has
dialogue files up to session_5 (session 5: valid/test only), so its valid/test episodes have 5
sessions; a copy with only the session_2/3 dialogues and personasummary 1-4 (e.g. ../shared/data)
gives 501 test and 500 valid episodes of 4 sessions.

Speakers: personasummary ``bot_0`` -> ``Speaker 1``, ``bot_1`` -> ``Speaker 2``. Checked per
episode wherever both files hold the same session (texts equal up to case): ``bot_0`` sits exactly
where the dialogue file's Speaker 1 does (all 501 test / 500 valid episodes, sessions 1-3). For the
appended session it rests on the same convention (every personasummary dialog opens with ``bot_0``).
Overlap of its extracted facts with the running persona summary was tried as a check and rejected:
it points the other way in 17% of test episodes. A ``dialog`` id other than ``Speaker 1/2`` (some
first turns carry a numeric worker id, e.g. ``"56152"``) is replaced by the position's speaker and
kept in ``labels["raw_speaker"]``; a crowd ``rating`` on a turn is kept in ``labels["rating"]``.

Gold per session ``k`` (``Session.gold``; speaker -> list of facts):

- ``persona``: running persona summary AFTER session k = top-level ``personas`` of the
  ``msc_dialogue/session_{k+1}`` record (its summary of sessions 1..k): sessions 1-4 with the
  full release, absent where the next session's dialogue file is (e.g. 3 and 4 without the
  session_4/5 files).
- ``persona_session``: facts extracted from session k alone = each speaker's last
  ``agg_persona_list`` in ``msc_personasummary/session_k``; when that file lacks the id,
  ``previous_dialogs[k-1].personas`` (same facts, grouped per utterance).
- per turn, ``labels["persona"]`` = the utterance's ``persona_text`` from the personasummary file.

``Episode.meta``: ``init_personas`` (PersonaChat personas), ``split``, ``source`` (file and line of
each part) and ``time``.

Time: ``previous_dialogs[i].time_num``/``time_unit`` is the gap between sessions i+1 and i+2;
``time_back`` (total time to the last dialogue session, often with a leading space) is kept
stripped in ``meta["time"]["time_back"]``. The gap before an appended personasummary session is
not in the files: ``clock.UNKNOWN_GAP``, listed in ``meta["time"]["assumed_before"]``.

``format="flat"`` (or ``path=``): THEANINE's flattened sample
``msc/theanine_sample/resources/data/sample_dialogue.json`` (JSON list of ``{dataID,
first..fifth_session_dialogue, first..fifth_session_speakers}``): speakers as given
(``Speaker A``/``Speaker B``), no gold, every gap ``UNKNOWN_GAP`` (assumed).
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from recallbench.clock import UNKNOWN_GAP, ClockError, from_gaps, unit_gap
from recallbench.datasets._common import (
    check_known_count,
    display,
    get,
    iter_jsonl,
    json_object,
    make_turns,
    read_json,
    require_file,
    require_records,
    session_id,
)
from recallbench.datasets._flat import build_episode, flat_sessions
from recallbench.datasets._msc_gold import (
    BOT_SPEAKERS,
    SPEAKERS,
    Files,
    _by_speaker,
    _dialog,
    _gold,
)
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode, Session

PARLAI_DIR = Path("msc/msc")
FLAT_SAMPLE = Path("msc/theanine_sample/resources/data/sample_dialogue.json")
SPLITS = ("train", "valid", "test")
# Records per session file in ParlAI's release (every dialogue and personasummary file of the
# split; train files differ by session, so they are not checked).
KNOWN_EPISODES = {"valid": 500, "test": 501}


def load(
    data_dir: Path,
    split: str = "test",
    format: Literal["parlai", "flat"] = "parlai",
    path: str | Path | None = None,
    max_sessions: int | None = None,
    extend: bool = True,
) -> list[Episode]:
    """Load MSC episodes (see the module docstring for layouts, gold and time).

    Args:
        data_dir: data root holding ``msc/``.
        split: ``train``, ``valid`` or ``test`` (ParlAI layout).
        format: ``parlai`` or ``flat``; giving ``path`` implies ``flat``.
        path: a flattened-schema JSON (list) or JSONL file, absolute or relative to ``data_dir``.
        max_sessions: keep only the first sessions of each episode.
        extend: append personasummary sessions beyond the highest dialogue file.
    """
    data_dir = Path(data_dir)
    if max_sessions is not None and max_sessions < 1:
        raise ConfigError(f"msc: max_sessions must be >= 1, got {max_sessions}")
    if path is not None or format == "flat":
        episodes = _load_flat(data_dir, Path(path) if path is not None else FLAT_SAMPLE)
    elif format == "parlai":
        episodes = _load_parlai(data_dir, split, extend)
    else:
        raise ConfigError(f"msc: unknown format {format!r} (options: 'parlai', 'flat')")
    if max_sessions is not None:
        episodes = [_truncate(e, max_sessions) for e in episodes]
    return episodes


def _truncate(episode: Episode, n: int) -> Episode:
    meta = dict(episode.meta, max_sessions=n)
    return Episode(
        episode.episode_id, episode.dataset, episode.speakers, episode.sessions[:n], (), meta
    )


# ---------------------------------------------------------------- flattened schema


def _load_flat(data_dir: Path, path: Path) -> list[Episode]:
    path = require_file(path if path.is_absolute() else data_dir / path, data_dir, "msc flat")
    name = display(path, data_dir)
    if path.suffix == ".jsonl":
        records = list(iter_jsonl(path, data_dir))
    else:
        data = read_json(path, data_dir)
        if not isinstance(data, list):
            raise DatasetFormatError(f"{name}: expected a JSON list of episodes, got {type(data)}")
        records = [
            (f"{name} record {i}", json_object(r, f"{name} record {i}")) for i, r in enumerate(data)
        ]
    episodes = []
    for where, record in records:
        sessions = flat_sessions(record, where)
        n = len(sessions)
        meta = {
            "source": {"file": where},
            "time": {
                "gaps_s": [UNKNOWN_GAP.total_seconds()] * (n - 1),
                "assumed_before": list(range(2, n + 1)),
            },
        }
        starts = from_gaps([UNKNOWN_GAP] * (n - 1))
        episode_id = get(record, "dataID", str, where)
        episodes.append(build_episode(episode_id, "msc", sessions, starts, None, meta))
    return episodes


# ---------------------------------------------------------------- ParlAI layout


def _load_parlai(data_dir: Path, split: str, extend: bool) -> list[Episode]:
    if split not in SPLITS:
        raise ConfigError(f"msc: unknown split {split!r} (options: {', '.join(SPLITS)})")
    root = data_dir / PARLAI_DIR
    dialogues = _read_files(root / "msc_dialogue", split, data_dir, ("metadata", "initial_data_id"))
    if not dialogues:
        require_file(root / "msc_dialogue" / "session_2" / f"{split}.txt", data_dir, "msc dialogue")
    summaries = _read_files(root / "msc_personasummary", split, data_dir, ("initial_data_id",))
    chosen: dict[str, int] = {}  # id -> highest dialogue file, in the order of that file
    for n in sorted(dialogues, reverse=True):
        for episode_id in dialogues[n][1]:
            chosen.setdefault(episode_id, n)
    return [_episode(i, n, split, dialogues, summaries, extend) for i, n in chosen.items()]


def _read_files(folder: Path, split: str, data_dir: Path, id_path: tuple[str, ...]) -> Files:
    files: Files = {}
    if not folder.is_dir():
        return files
    for sub in folder.iterdir():
        m = re.fullmatch(r"session_(\d+)", sub.name)
        if not m or not (sub / f"{split}.txt").is_file():
            continue
        path = sub / f"{split}.txt"
        records: dict[str, tuple[str, dict[str, Any]]] = {}
        for where, record in iter_jsonl(path, data_dir):
            node: Any = record
            for key in id_path:
                node = get(node, key, dict if key != id_path[-1] else str, where)
            if node in records:
                raise DatasetFormatError(f"{where}: duplicate initial_data_id {node!r}")
            records[node] = (where, record)
        name = display(path, data_dir)
        require_records(len(records), name, "records")
        check_known_count(len(records), KNOWN_EPISODES.get(split), name, "records")
        files[int(m.group(1))] = (path, records)
    return files


def _episode(
    episode_id: str, n: int, split: str, dialogues: Files, summaries: Files, extend: bool
) -> Episode:
    where, record = dialogues[n][1][episode_id]
    parts, gaps, time_back = _dialogue_parts(record, where, n)
    extension, k = [], n + 1
    while extend and k in summaries and episode_id in summaries[k][1]:
        ext_where, ext = summaries[k][1][episode_id]
        parts.append(_summary_session(ext, ext_where))
        extension.append(ext_where)
        k += 1
    assumed = list(range(n + 1, k))
    gaps += [UNKNOWN_GAP] * len(assumed)
    previous = (where, record["previous_dialogs"])
    sessions = []
    for index, (start, (utterances, labels)) in enumerate(
        zip(from_gaps(gaps), parts, strict=True), 1
    ):
        gold = _gold(episode_id, index, utterances, labels, previous, dialogues, summaries)
        sid = session_id(episode_id, index)
        sessions.append(Session(sid, index, start, make_turns(sid, utterances, labels), gold))
    meta = {
        "split": split,
        "init_personas": _by_speaker(get(record, "init_personas", list, where), where),
        "source": {"dialogue": where, "extension": extension},
        "time": {
            "gaps_s": [g.total_seconds() for g in gaps],
            "assumed_before": assumed,
            "time_back": time_back,
        },
    }
    return Episode(episode_id, "msc", SPEAKERS, tuple(sessions), (), meta)


def _dialogue_parts(
    record: dict[str, Any], where: str, n: int
) -> tuple[list[tuple[list[tuple[str, str]], list[dict[str, Any]]]], list[timedelta], list[str]]:
    """Return sessions 1..n of a session_n record as (utterances, labels), its gaps and time_back."""
    previous = get(record, "previous_dialogs", list, where)
    if len(previous) != n - 1:
        raise DatasetFormatError(
            f"{where}: a session_{n} record should have {n - 1} previous_dialogs, got {len(previous)}"
        )
    parts: list[tuple[list[tuple[str, str]], list[dict[str, Any]]]] = []
    gaps: list[timedelta] = []
    time_back: list[str] = []
    for i, prev in enumerate(previous):
        at = f"{where} previous_dialogs[{i}]"
        texts = [get(t, "text", str, f"{at} dialog[{j}]") for j, t in enumerate(_dialog(prev, at))]
        parts.append(([(SPEAKERS[j % 2], t) for j, t in enumerate(texts)], [{} for _ in texts]))
        gaps.append(_gap(prev, at))
        time_back.append(get(prev, "time_back", str, at).strip())
    parts.append(_current(record, where))
    return parts, gaps, time_back


def _gap(prev: dict[str, Any], where: str) -> timedelta:
    num = get(prev, "time_num", (int, float, str), where)
    unit = get(prev, "time_unit", str, where)
    try:
        return unit_gap(float(num), unit)
    except (ClockError, ValueError) as exc:
        raise DatasetFormatError(
            f"{where}: bad time_num/time_unit {num!r} {unit!r}: {exc}"
        ) from None


def _current(
    record: dict[str, Any], where: str
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    utterances, labels = [], []
    for j, turn in enumerate(_dialog(record, where)):
        at = f"{where} dialog[{j}]"
        raw = get(turn, "id", str, at)
        label = {} if raw in SPEAKERS else {"raw_speaker": raw}
        if "rating" in turn:
            label["rating"] = turn["rating"]
        utterances.append((raw if raw in SPEAKERS else SPEAKERS[j % 2], get(turn, "text", str, at)))
        labels.append(label)
    return utterances, labels


def _summary_session(
    record: dict[str, Any], where: str
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    utterances, labels = [], []
    for j, turn in enumerate(_dialog(record, where)):
        at = f"{where} dialog[{j}]"
        raw = get(turn, "id", str, at)
        if raw not in BOT_SPEAKERS:
            raise DatasetFormatError(f"{at}: id should be 'bot_0' or 'bot_1', got {raw!r}")
        utterances.append((BOT_SPEAKERS[raw], get(turn, "text", str, at)))
        labels.append({"rating": turn["rating"]} if "rating" in turn else {})
    return utterances, labels
