"""Match published answers to the release's questions and check every one.

An answer is matched by id (``qa_index``: the question's index in its conversation's full
``qa`` list, category 5 included) or by order (``position``: its index among the
conversation's category 1-4 questions), as its source numbers them (``_formats``). Then the
question text must equal the release's (whitespace-normalised; a source that omits it is
matched on its id or position alone: ``text_checked`` counts the ones checked), the category
must be the release's number (under errata: the release's text and number, before a swapped
speaker or a changed category), no question may be answered twice and every loaded conversation
must have its container in the file. Any failure is one line naming the file, the item and what
was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recallbench.errors import DatasetFormatError
from recallbench.protocols.locomo_import._formats import RELEASE_ORDER, AnswerFile, ImportedAnswer
from recallbench.records import JSON, Episode, QAItem


@dataclass(frozen=True)
class Matched:
    """A published answer with the release's question it answers."""

    episode: Episode
    qa: QAItem
    answer: ImportedAnswer


def _norm(text: str) -> str:
    return " ".join(text.split())


def _locate(episodes: Sequence[Episode], file: AnswerFile) -> dict[int, Episode]:
    """The loaded episodes by release index; each needs its container in the file."""
    by_index: dict[int, Episode] = {}
    for episode in episodes:
        sample = str(episode.meta.get("sample_id"))
        if sample not in RELEASE_ORDER:
            raise DatasetFormatError(
                f"{file.path.name}: the dataset's {episode.episode_id} is not a LoCoMo release "
                f"conversation ({', '.join(RELEASE_ORDER)}): import-answers needs dataset=locomo"
            )
        index = RELEASE_ORDER.index(sample)
        if index not in file.containers:
            raise DatasetFormatError(
                f"{file.path.name}: conversation {index} ({sample}) missing: no answers for it "
                f"(the file has conversations {list(file.containers)})"
            )
        by_index[index] = episode
    return by_index


def _question_of(episode: Episode, a: ImportedAnswer) -> QAItem:
    """The release question an answer names by id or by order."""
    if a.qa_index is not None:  # by the release's index, kept in the item's id (q<k>)
        qa_id = f"{episode.episode_id}/q{a.qa_index}"
        found = next((q for q in episode.qa if q.qa_id == qa_id), None)
        if found is None:
            raise DatasetFormatError(
                f"{a.where} ({a.item_id}): question index {a.qa_index} of "
                f"{episode.meta.get('sample_id')} is not among the loaded questions ({qa_id})"
            )
        return found
    pool = [q for q in episode.qa if q.meta.get("category") != 5]
    k, scheme = int(a.position or 0), "category 1-4 question"
    if k >= len(pool):
        raise DatasetFormatError(
            f"{a.where}: {scheme} {k} of {episode.meta.get('sample_id')} does not exist (it has "
            f"{len(pool)})"
        )
    return pool[k]


def _released(qa: QAItem, field: str, current: JSON) -> JSON:
    """The release's value of a field an erratum changed (the files carry the release's)."""
    fixed = ((qa.meta.get("erratum") or {}).get("fields") or {}).get(field)
    return current if fixed is None else fixed["old"]


def _check(a: ImportedAnswer, qa: QAItem) -> bool:
    """Check the answer's question text and category against the release's; True: text seen."""
    question = str(_released(qa, "speaker", qa.question))
    if a.question is not None and _norm(a.question) != _norm(question):
        raise DatasetFormatError(
            f"{a.where} ({a.item_id}): question {a.question[:80]!r} does not match the "
            f"release's {qa.qa_id}: {question[:80]!r}"
        )
    category = int(_released(qa, "category", qa.meta.get("category", 0)))
    if category == 5:
        raise DatasetFormatError(
            f"{a.where} ({a.item_id}): {qa.qa_id} is an adversarial (category 5) question; "
            "the importer scores categories 1-4, as the published files do"
        )
    if a.category is not None and a.category != category:
        raise DatasetFormatError(
            f"{a.where} ({a.item_id}): category {a.category}, but the release's {qa.qa_id} "
            f"is category {category}"
        )
    return a.question is not None


def match_answers(
    episodes: Sequence[Episode], file: AnswerFile
) -> tuple[list[Matched], dict[str, JSON]]:
    """Match every answer of ``file`` to a loaded question; return them and how they matched.

    Answers to conversations not loaded (``dataset.options.conversations``) are left out and
    counted; any other mismatch raises ``DatasetFormatError``.
    """
    by_index = _locate(episodes, file)
    seen: dict[str, ImportedAnswer] = {}
    matched: list[Matched] = []
    checked = skipped = 0
    for a in file.answers:
        episode = by_index.get(a.conversation)
        if episode is None:
            skipped += 1
            continue
        qa = _question_of(episode, a)
        if qa.qa_id in seen:
            raise DatasetFormatError(
                f"{a.where} ({a.item_id}): question {qa.qa_id} answered twice (first at "
                f"{seen[qa.qa_id].where})"
            )
        seen[qa.qa_id] = a
        checked += _check(a, qa)
        matched.append(Matched(episode, qa, a))
    asked = sum(1 for e in by_index.values() for q in e.qa if q.meta.get("category") != 5)
    how = {
        "scheme": file.scheme,
        "rule": (
            "question_id: conversation i in the release's order, j = index in its full qa list"
            if file.scheme == "id"
            else "container i = conversation i in the release's order; n-th item = its n-th "
            "category 1-4 question"
        ),
        "answers": len(file.answers),
        "matched": len(matched),
        "text_checked": checked,
        "other_conversations": skipped,
        "unanswered": asked - len(matched),
    }
    return matched, how


def merge_latency(main: AnswerFile, extra: AnswerFile) -> AnswerFile:
    """Take ``duration_ms`` from a second file of the same answers (Zep's responses file)."""
    if len(main.answers) != len(extra.answers):
        raise DatasetFormatError(
            f"{extra.path.name}: {len(extra.answers)} answers, but {main.path.name} has "
            f"{len(main.answers)}: not the same run"
        )
    merged = []
    for a, b in zip(main.answers, extra.answers, strict=True):
        same = (a.conversation, a.qa_index, a.position, a.answer)
        if same != (b.conversation, b.qa_index, b.position, b.answer):
            raise DatasetFormatError(
                f"{b.where}: answer {b.answer[:60]!r} differs from {a.where}'s {a.answer[:60]!r}"
            )
        if b.duration_ms is None:
            raise DatasetFormatError(f"{b.where}: 'duration_ms' missing (a latency file needs it)")
        merged.append(
            ImportedAnswer(**{**a.__dict__, "duration_ms": b.duration_ms})  # frozen: rebuild
        )
    return AnswerFile(main.path, main.format, main.scheme, tuple(merged), main.containers)
