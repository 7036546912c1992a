"""Load LoCoMo, very long-term conversational memory (Maharana et al., ACL 2024, arXiv 2402.17753).

Format (``shared/data/locomo/SOURCE.md``; upstream GitHub ``snap-research/locomo``,
``data/locomo10.zip``, CC BY-NC 4.0): ``locomo/data/multimodal_dialog/locomo10_v2/<n>.json``, one
conversation per file, with ``speaker_a``/``speaker_b``, ``session_<i>`` (a list of turns
``{"speaker", "dia_id": "D<i>:<j>", "text"}``, image turns add ``img_url``, ``blip_caption``,
``query``), ``session_<i>_date_time`` ("1:56 pm on 8 May, 2023"), ``session_<i>_summary``,
``session_<i>_observation``, ``events_session_<i>`` and ``qa`` (``question``, ``answer``,
``evidence`` dia ids, ``category`` 1-5; category 5 has ``adversarial_answer`` instead of an
answer). Later upstream commits ship the same ten conversations as one ``locomo/locomo10.json``
list (``sample_id``, ``conversation``, ``qa``, ...): read when the folder is absent.

Records: one Episode per conversation, id ``locomo/conv-<n>``, speakers ``(speaker_a,
speaker_b)``; session ``i`` is ``<episode>/s<i>`` starting at its ``date_time``, its turn ``D<i>:<j>``
is ``<episode>/D<i>:<j>`` (labels: ``dia_id``, and for image turns ``blip_caption`` and
``image_query``); ``Session.gold["summary"]`` = ``[session_<i>_summary]`` (the release's own
generated summary). An image turn is read as its text followed by ``[shares <blip_caption>]``, the
line LoCoMo's own evaluation (``task_eval/evaluate_gpts.py``, ``get_input_context``) writes for a
shared image. QA item ``k`` is ``<episode>/q<k>``: answers ``(str(answer),)``; category 5:
``(NOT_MENTIONED,)`` (the option LoCoMo's evaluation offers against the bait) with the bait in
``meta["adversarial_answer"]``; ``kind`` = the category's name (``CATEGORIES``), ``meta`` =
``category`` (the release's number, kept), ``category_name``; evidence = the turn ids; asked after
the last session (the protocol may ask earlier: ``protocols.locomo``).

Categories (``CATEGORIES``): the release numbers them without names and the community disagrees
on 1, 3 and 4 (snap-research/locomo #6, #29). Ours: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial. Why: the authors' evaluation code (``task_eval/evaluation.py``)
scores category 1 per comma-separated part (a list answer gathered from several turns) and
category 3 only up to the first ``;`` (an inference with its rationale); in the data 276 of the
282 category-1 items cite two or more turns, 795 of the 841 category-4 items cite one, 261 of the
321 category-2 questions ask "When"/"How long"/"What year", and category 3 asks what someone
"would likely" do (world knowledge / commonsense: the LoCoMo paper's "open-domain knowledge").
It is also the LoCoMo paper's (ACL 2024, Table 2): its per-category F1 weighted by this release's
counts (1: 282, 2: 321, 3: 96, 4: 841, 5: 446) gives its Overall only with these names. Mem0's
paper names them otherwise: its Single Hop / Multi-Hop / Open Domain / Temporal are categories
1 / 3 / 4 / 2 (the only assignment under which its per-category J gives its overall J;
``papers/locomo/reference.yaml``, ``tests/papers/test_locomo_reference.py``).

Quirks (SOURCE.md; each handled, none fatal, counted per episode in ``meta["quirks"]``):
- ``number_answer``: 6 answers are JSON numbers (``2022``): read as their string;
- ``evidence_joined``: ids joined in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``): split
  on ``;``, ``,`` and whitespace;
- ``evidence_repaired``: a malformed id whose repair names an existing turn (``"D:11:26"`` ->
  ``D11:26``, ``"D30:05"`` -> ``D30:5``); the raw ids stay in ``meta["raw_evidence"]``;
- ``evidence_missing``: an id naming no turn (``"D10:19"`` beyond the session, ``"D"``): dropped;
- ``no_evidence``: 4 questions cite no turn (kept; retrieval scores skip them);
- ``adversarial_with_answer``: 2 category-5 items also carry ``answer``: kept in
  ``meta["answer_field"]``, the item stays adversarial;
- ``date_without_session``: ``session_<i>_date_time`` keys with no session (conv-26 has 16):
  ignored;
- ``image_turn``: turns with a ``blip_caption`` (read as above); ``re_download``: turns flagged
  ``re-download`` (a crawl marker, ignored).

Errata (option ``errata``: null; ``default`` for ``recallbench/resources/locomo_errata.yaml``;
``locomo_audit`` for the audit's ``<data_dir>/locomo_audit/errors.json``; a path; several joined by
``+``, e.g. ``default+locomo_audit``): known label errors, each with its source; applied only when
asked, and recorded in every corrected item's ``meta["erratum"]`` and the episode's
``meta["errata"]`` (the run's config names the option, so a table says which labels it used). A
YAML entry names the conversation, the question by ``question_sha1`` (the file carries no LoCoMo
text), the field (``answer``, ``evidence``, ``category``, ``speaker`` or ``drop``), the value it
expects and the correction; an entry that matches nothing is an error (a changed release). Two
sources that correct one question differently: the first named wins, one line names both
(``_locomo_errata``). Errata are applied to the full release before ``conversations`` selects.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from recallbench.datasets._common import check_known_count, display, get, read_json, require_file
from recallbench.errors import ConfigError, DatasetFormatError, did_you_mean
from recallbench.records import Episode, QAItem, Session, Turn

__all__ = [
    "CATEGORIES",
    "KNOWN_CONVERSATIONS",
    "NOT_MENTIONED",
    "DEFAULT_ERRATA",
    "load",
    "question_sha1",
    "quirk_totals",
]

FOLDER = Path("locomo") / "data" / "multimodal_dialog" / "locomo10_v2"
SINGLE_FILE = Path("locomo") / "locomo10.json"
KNOWN_CONVERSATIONS = 10
CATEGORIES: Mapping[int, str] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
NOT_MENTIONED = "Not mentioned in the conversation"  # LoCoMo's option against the bait
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
DEFAULT_ERRATA = Path(__file__).resolve().parents[1] / "resources" / "locomo_errata.yaml"
_SESSION = re.compile(r"session_(\d+)")
_DATE = re.compile(r"session_(\d+)_date_time")
_DIA = re.compile(r"D(\d+):(\d+)")
_SPLIT = re.compile(r"[;,\s]+")


def question_sha1(question: str) -> str:
    """Return the sha1 of a question's whitespace-normalized text (how errata name questions)."""
    return hashlib.sha1(" ".join(question.split()).encode("utf-8")).hexdigest()


def load(
    data_dir: Path,
    conversations: str | Iterable[str] | None = None,
    errata: str | Path | None = None,
) -> list[Episode]:
    """Load the LoCoMo conversations under ``data_dir/locomo``.

    Args:
        data_dir: data root holding ``locomo/``.
        conversations: a sample id (``conv-26``) or list of them to keep; None keeps all.
        errata: None (the release as it is), or sources joined by ``+``: "default" (the shipped
            errata), "locomo_audit" (the audit's errors.json under ``data_dir``) or a path.
    """
    root = Path(data_dir)
    raws = _read_raw(root)
    if conversations is None:
        check_known_count(len(raws), KNOWN_CONVERSATIONS, FOLDER.as_posix(), "conversations")
    episodes = [_episode(sample, raw, where) for sample, raw, where in raws]
    if errata is not None:
        from recallbench.datasets._locomo_errata import apply_errata, sources_of

        episodes = apply_errata(episodes, sources_of(errata, root, DEFAULT_ERRATA), CATEGORIES)
    if conversations is None:
        return episodes
    wanted = [conversations] if isinstance(conversations, str) else list(conversations)
    by_sample = {e.meta["sample_id"]: e for e in episodes}
    for name in wanted:
        if name not in by_sample:
            raise ConfigError(did_you_mean("LoCoMo conversation", str(name), by_sample).args[0])
    return [by_sample[str(n)] for n in wanted]


def quirk_totals(episodes: Iterable[Episode]) -> dict[str, int]:
    """Return the quirk counts summed over episodes (``meta["quirks"]``)."""
    total: Counter[str] = Counter()
    for ep in episodes:
        total.update(ep.meta.get("quirks") or {})
    return dict(sorted(total.items()))


def _read_raw(root: Path) -> list[tuple[str, dict[str, Any], str]]:
    folder = root / FOLDER
    if not folder.is_dir() and (root / SINGLE_FILE).is_file():
        data = read_json(root / SINGLE_FILE, root)
        where = display(root / SINGLE_FILE, root)
        if not isinstance(data, list):
            raise DatasetFormatError(f"{where}: expected a list of conversations")
        out = []
        for k, rec in enumerate(data):
            at = f"{where} record {k}"
            sample = str(get(rec, "sample_id", str, at))
            conv = dict(get(rec, "conversation", dict, at))
            out.append((sample, {**conv, "qa": get(rec, "qa", list, at)}, f"{where} {sample}"))
        return out
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        require_file(folder / "26.json", root, "LoCoMo")
    out = []
    for path in files:
        raw = read_json(path, root)
        where = display(path, root)
        if not isinstance(raw, dict):
            raise DatasetFormatError(f"{where}: expected one conversation object")
        out.append((f"conv-{path.stem}", raw, where))
    return sorted(out, key=lambda r: _sample_key(r[0]))


def _sample_key(sample: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", sample)
    return (int(digits) if digits else 0, sample)


def _episode(sample: str, raw: dict[str, Any], where: str) -> Episode:
    eid = f"locomo/{sample}"
    quirks: Counter[str] = Counter()
    speakers = (str(get(raw, "speaker_a", str, where)), str(get(raw, "speaker_b", str, where)))
    indices = sorted(int(m.group(1)) for k in raw if (m := _SESSION.fullmatch(k)))
    if not indices:
        raise DatasetFormatError(f"{where}: no 'session_<i>' lists (keys: {sorted(raw)[:8]} ...)")
    dated = {int(m.group(1)) for k in raw if (m := _DATE.fullmatch(k))}
    quirks["date_without_session"] += len(dated - set(indices))
    sessions = [_session(eid, i, raw, where, quirks) for i in indices]
    turn_ids = {t.turn_id for s in sessions for t in s.turns}
    qa_list = get(raw, "qa", list, where)
    qa = [
        _qa(eid, k, rec, f"{where} qa[{k}]", turn_ids, len(sessions), quirks)
        for k, rec in enumerate(qa_list)
    ]
    meta = {
        "sample_id": sample,
        "source": where,
        "quirks": {k: int(v) for k, v in sorted(quirks.items()) if v},
    }
    return Episode(eid, "locomo", speakers, tuple(sessions), tuple(qa), meta)


def _session(
    eid: str, index: int, raw: dict[str, Any], where: str, quirks: Counter[str]
) -> Session:
    at = f"{where} session_{index}"
    key = f"session_{index}_date_time"
    stamp = get(raw, key, str, where)
    try:
        start = datetime.strptime(stamp.strip(), DATE_FORMAT)
    except ValueError:
        raise DatasetFormatError(
            f"{where}: {key} {stamp!r} is not like '1:56 pm on 8 May, 2023'"
        ) from None
    turns = []
    for j, rec in enumerate(get(raw, f"session_{index}", list, where)):
        here = f"{at}[{j}]"
        dia = str(get(rec, "dia_id", str, here))
        text = str(get(rec, "text", str, here)).strip()
        labels: dict[str, Any] = {"dia_id": dia}
        caption = rec.get("blip_caption")
        if isinstance(caption, str) and caption.strip():
            quirks["image_turn"] += 1
            labels["blip_caption"] = caption.strip()
            if isinstance(rec.get("query"), str):
                labels["image_query"] = rec["query"]
            text = f"{text} [shares {caption.strip()}]".strip()
        if "re-download" in rec:
            quirks["re_download"] += 1
        speaker = str(get(rec, "speaker", str, here))
        turns.append(Turn(f"{eid}/{dia}", speaker, text, labels))
    summary = raw.get(f"session_{index}_summary")
    gold = {"summary": [summary.strip()]} if isinstance(summary, str) and summary.strip() else {}
    return Session(f"{eid}/s{index}", index, start, tuple(turns), gold)


def _evidence(
    eid: str, raw: list[Any], turn_ids: set[str], quirks: Counter[str]
) -> tuple[list[str], bool]:
    """Return the evidence turn ids of one QA item and whether the raw list needed repair."""
    out: list[str] = []
    changed = False
    for entry in raw:
        parts = [p for p in _SPLIT.split(str(entry)) if p]
        if len(parts) > 1:
            quirks["evidence_joined"] += 1
            changed = True
        for part in parts:
            tid = f"{eid}/{part}"
            if tid not in turn_ids:
                digits = re.findall(r"\d+", part)
                fixed = f"{eid}/D{int(digits[0])}:{int(digits[1])}" if len(digits) == 2 else None
                changed = True
                if fixed is not None and fixed in turn_ids:
                    quirks["evidence_repaired"] += 1
                    tid = fixed
                else:
                    quirks["evidence_missing"] += 1
                    continue
            if tid not in out:
                out.append(tid)
    return out, changed


def _qa(
    eid: str,
    k: int,
    rec: Any,
    where: str,
    turn_ids: set[str],
    n_sessions: int,
    quirks: Counter[str],
) -> QAItem:
    question = str(get(rec, "question", str, where)).strip()
    category = get(rec, "category", int, where)
    if category not in CATEGORIES:
        raise DatasetFormatError(f"{where}: 'category' should be 1-5, got {category!r}")
    raw_evidence = get(rec, "evidence", list, where)
    evidence, changed = _evidence(eid, raw_evidence, turn_ids, quirks)
    if not raw_evidence:
        quirks["no_evidence"] += 1
    meta: dict[str, Any] = {"category": category, "category_name": CATEGORIES[category]}
    if changed:
        meta["raw_evidence"] = [str(e) for e in raw_evidence]
    if category == 5:
        meta["adversarial_answer"] = _answer_text(
            get(rec, "adversarial_answer", (str, int, float), where), quirks
        )
        if "answer" in rec:
            quirks["adversarial_with_answer"] += 1
            meta["answer_field"] = _answer_text(rec["answer"], quirks)
        answers: tuple[str, ...] = (NOT_MENTIONED,)
    else:
        answers = (_answer_text(get(rec, "answer", (str, int, float), where), quirks),)
    return QAItem(
        f"{eid}/q{k}",
        question,
        answers,
        n_sessions,
        tuple(evidence),
        CATEGORIES[category],
        meta,
    )


def _answer_text(value: Any, quirks: Counter[str]) -> str:
    if isinstance(value, str):
        return value.strip()
    quirks["number_answer"] += 1
    return str(value)
