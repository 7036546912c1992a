"""MSC gold annotations (``datasets.msc``): the session's dialog records, the next session's
persona summary as gold persona, the per-session persona extractions and the speakers' personas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recallbench.datasets._common import (
    get,
    strings,
)
from recallbench.errors import DatasetFormatError

SPEAKERS = ("Speaker 1", "Speaker 2")
BOT_SPEAKERS = {"bot_0": "Speaker 1", "bot_1": "Speaker 2"}

# {session number: (file, {initial_data_id: (where, record)})}
Files = dict[int, tuple[Path, dict[str, tuple[str, dict[str, Any]]]]]


def _dialog(record: dict[str, Any], where: str) -> list[dict[str, Any]]:
    dialog = get(record, "dialog", list, where)
    for j, turn in enumerate(dialog):
        if not isinstance(turn, dict):
            raise DatasetFormatError(f"{where} dialog[{j}]: expected an object, got {turn!r}")
    return dialog


def _gold(
    episode_id: str,
    k: int,
    utterances: list[tuple[str, str]],
    labels: list[dict[str, Any]],
    previous: tuple[str, list[dict[str, Any]]],
    dialogues: Files,
    summaries: Files,
) -> dict[str, Any]:
    """Fill session k's gold (and per-turn persona labels in place) from the files that have it."""
    gold: dict[str, Any] = {}
    if k + 1 in dialogues and episode_id in dialogues[k + 1][1]:
        where, nxt = dialogues[k + 1][1][episode_id]
        gold["persona"] = _by_speaker(get(nxt, "personas", list, where), f"{where} personas")
    if k in summaries and episode_id in summaries[k][1]:
        where, rec = summaries[k][1][episode_id]
        extracted = _annotate(utterances, labels, _dialog(rec, where), where)
        if extracted is not None:
            gold["persona_session"] = extracted
            return gold
    where, prev = previous
    if k <= len(prev):
        at = f"{where} previous_dialogs[{k - 1}]"
        gold["persona_session"] = _by_speaker(get(prev[k - 1], "personas", list, at), at)
    return gold


def _annotate(
    utterances: list[tuple[str, str]],
    labels: list[dict[str, Any]],
    dialog: list[dict[str, Any]],
    where: str,
) -> dict[str, list[str]] | None:
    """Copy persona_text onto aligned turns and return each speaker's last agg_persona_list.

    Returns None when the personasummary dialog is not the same session (texts differ beyond
    case: the two files disagree on the capital "I" in a few utterances).
    """
    if len(dialog) != len(utterances) or any(
        str(t.get("text", "")).lower() != text.lower()
        for t, (_, text) in zip(dialog, utterances, strict=True)
    ):
        return None
    extracted: dict[str, list[str]] = {s: [] for s in SPEAKERS}
    for j, (turn, (speaker, _)) in enumerate(zip(dialog, utterances, strict=True)):
        at = f"{where} dialog[{j}]"
        raw = get(turn, "id", str, at)
        if BOT_SPEAKERS.get(raw) != speaker:
            raise DatasetFormatError(
                f"{at}: id {raw!r} stands where the dialogue file has {speaker!r} "
                "(expected bot_0 = Speaker 1, bot_1 = Speaker 2)"
            )
        if "persona_text" in turn:
            labels[j]["persona"] = get(turn, "persona_text", str, at)
        extracted[speaker] = strings(turn.get("agg_persona_list", []), "agg_persona_list", at)
    return extracted


def _by_speaker(personas: list[Any], where: str) -> dict[str, list[str]]:
    if len(personas) != 2:
        raise DatasetFormatError(f"{where}: expected 2 persona lists, got {len(personas)}")
    return {s: strings(p, f"{s} personas", where) for s, p in zip(SPEAKERS, personas, strict=True)}
