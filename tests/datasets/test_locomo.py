"""LoCoMo loader: the release's quirks on a self-written fixture, errata, and the real counts."""

from __future__ import annotations

import json
import warnings

import pytest

from recallbench.datasets.locomo import (
    CATEGORIES,
    DEFAULT_ERRATA,
    NOT_MENTIONED,
    load,
    question_sha1,
    quirk_totals,
)
from recallbench.errors import ConfigError, DatasetFormatError, ErrataConflictWarning
from recallbench.records import Episode


def _load(root, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixture is a 2-conversation subset
        return load(root, **options)


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return _load(fixtures_dir)


def test_records_and_roundtrip(episodes):
    ada = episodes[0]
    assert [e.episode_id for e in episodes] == ["locomo/conv-1", "locomo/conv-2"]
    assert ada.speakers == ("Ada", "Ben")
    assert [s.index for s in ada.sessions] == [1, 2]
    assert ada.sessions[0].start.isoformat() == "2023-03-03T10:00:00"
    assert ada.sessions[1].start.isoformat() == "2023-03-20T16:30:00"
    assert ada.sessions[0].gold["summary"][0].startswith("Ada adopted a beagle")
    assert "summary" not in episodes[1].sessions[0].gold
    assert all(q.after_session == 2 for q in ada.qa)
    assert Episode.from_dict(ada.to_dict()) == ada


def test_image_turn_reads_its_caption(episodes):
    turn = episodes[0].sessions[0].turns[2]
    assert turn.turn_id == "locomo/conv-1/D1:3"
    assert turn.text == "Look what I flew at the beach. [shares a photo of a red kite in the sky]"
    assert turn.labels == {
        "dia_id": "D1:3",
        "blip_caption": "a photo of a red kite in the sky",
        "image_query": "red kite",
    }


def test_every_quirk_is_handled_and_counted(episodes):
    qa = {q.qa_id.rsplit("/", 1)[1]: q for q in episodes[0].qa}
    ev = lambda *ids: tuple(f"locomo/conv-1/{i}" for i in ids)  # noqa: E731
    assert qa["q5"].answers == ("2023",)  # a JSON number
    assert qa["q5"].evidence == ev("D1:1", "D2:2")  # "D1:1; D2:2"
    assert qa["q6"].evidence == ev("D2:4")  # "D:2:4"
    assert qa["q7"].evidence == ev("D2:2")  # "D2:02"
    assert qa["q7"].meta["raw_evidence"] == ["D2:02"]
    assert qa["q8"].evidence == ()  # D2:9 names no turn
    assert qa["q9"].evidence == ()
    assert quirk_totals(episodes) == {
        "adversarial_with_answer": 1,
        "date_without_session": 1,
        "evidence_joined": 1,
        "evidence_missing": 1,
        "evidence_repaired": 2,
        "image_turn": 2,
        "no_evidence": 1,
        "number_answer": 1,
        "re_download": 1,
    }


def test_categories_and_adversarial_items(episodes):
    qa = episodes[0].qa
    assert [q.kind for q in qa[:5]] == [CATEGORIES[c] for c in (1, 2, 3, 4, 4)]
    assert qa[0].meta["category"] == 1 and qa[0].kind == "multi_hop"
    bait = qa[10]
    assert bait.kind == "adversarial" and bait.answers == (NOT_MENTIONED,)
    assert bait.meta["adversarial_answer"] == "Pixel"
    assert qa[11].meta["answer_field"] == "No"


def test_conversation_filter_and_unknown_name(fixtures_dir):
    (only,) = load(fixtures_dir, conversations="conv-2")
    assert only.speakers == ("Cleo", "Dev")
    with pytest.raises(ConfigError, match="conv-2"):
        load(fixtures_dir, conversations="conv-3")


def _write_errata(path, entries):
    import yaml

    path.write_text(yaml.safe_dump({"errata": entries}), encoding="utf-8")
    return path


def test_errata_apply_only_when_asked(fixtures_dir, tmp_path, episodes):
    q = episodes[0].qa[1]
    errata = _write_errata(
        tmp_path / "e.yaml",
        [
            {
                "sample_id": "conv-1",
                "question_sha1": question_sha1(q.question),
                "field": "answer",
                "old_sha1": question_sha1(q.answers[0]),
                "new": "The Sunday before 20 March 2023",
                "source": "test",
            },
            {
                "sample_id": "conv-1",
                "question_sha1": question_sha1(episodes[0].qa[3].question),
                "field": "evidence",
                "old": ["D1:1"],
                "new": ["D1:2"],
                "source": "test",
            },
        ],
    )
    fixed = _load(fixtures_dir, errata=str(errata))
    assert fixed[0].qa[1].answers == ("The Sunday before 20 March 2023",)
    answer = fixed[0].qa[1].meta["erratum"]["fields"]["answer"]
    assert answer == {
        "old": "The saturday before 20 March 2023",
        "new": "The Sunday before 20 March 2023",
        "source": "e.yaml: test",
    }
    assert fixed[0].qa[1].meta["erratum"]["score_changing"] is True
    assert fixed[0].qa[3].evidence == ("locomo/conv-1/D1:2",)
    assert fixed[0].qa[3].meta["erratum"]["score_changing"] is False  # evidence: recall only
    assert fixed[0].meta["errata"] == {
        "sources": ["e.yaml"],
        "applied": 2,
        "dropped": 0,
        "conflicts": [],
    }
    assert episodes[0].qa[1].answers == ("The saturday before 20 March 2023",)  # not asked


def test_an_erratum_that_matches_nothing_fails(fixtures_dir, tmp_path, episodes):
    q = episodes[0].qa[1]
    entry = {
        "sample_id": "conv-1",
        "question_sha1": question_sha1(q.question),
        "field": "answer",
        "old_sha1": question_sha1("another answer"),
        "new": "x",
        "source": "test",
    }
    errata = _write_errata(tmp_path / "e.yaml", [entry])
    with pytest.raises(DatasetFormatError, match="not the one corrected"):
        _load(fixtures_dir, errata=str(errata))
    _write_errata(errata, [{**entry, "field": "speakers"}])
    with pytest.raises(DatasetFormatError, match="field should be one of"):
        _load(fixtures_dir, errata=str(errata))


def test_bad_date_names_the_file_and_key(tmp_path):
    folder = tmp_path / "locomo" / "data" / "multimodal_dialog" / "locomo10_v2"
    folder.mkdir(parents=True)
    record = {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "8 May 2023"}
    record |= {"session_1": [], "qa": []}
    (folder / "7.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"7\.json: session_1_date_time '8 May 2023'"):
        _load(tmp_path)


def test_single_file_layout(tmp_path, fixtures_dir):
    folder = fixtures_dir / "locomo" / "data" / "multimodal_dialog" / "locomo10_v2"
    raw = json.loads((folder / "2.json").read_text(encoding="utf-8"))
    qa = raw.pop("qa")
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json").write_text(
        json.dumps([{"sample_id": "conv-2", "conversation": raw, "qa": qa}]), encoding="utf-8"
    )
    (one,) = _load(tmp_path)
    (same,) = _load(fixtures_dir, conversations="conv-2")
    assert (one.episode_id, one.sessions, one.qa) == (same.episode_id, same.sessions, same.qa)


def test_real_release_counts(real_data_dir):
    if not (real_data_dir / "locomo").is_dir():
        pytest.skip("no locomo/ under the real data dir")
    eps = load(real_data_dir)
    assert len(eps) == 10
    assert sum(len(e.sessions) for e in eps) == 272
    assert sum(1 for e in eps for _ in e.turns()) == 5882
    assert sum(len(e.qa) for e in eps) == 1986
    cats = [q.meta["category"] for e in eps for q in e.qa]
    assert [cats.count(c) for c in (1, 2, 3, 4, 5)] == [282, 321, 96, 841, 446]
    totals = quirk_totals(eps)
    assert totals["number_answer"] == 6 and totals["no_evidence"] == 4
    bad_ids = totals["evidence_joined"] + totals["evidence_repaired"] + totals["evidence_missing"]
    assert bad_ids == 9  # SOURCE.md: 9 evidence ids name a turn that does not exist
    # ... on 9 questions: their recall departs from the authors' code (protocols.locomo)
    assert sum(1 for e in eps for q in e.qa if "raw_evidence" in q.meta) == 9
    assert totals["date_without_session"] == 16 and totals["adversarial_with_answer"] == 2
    fixed = load(real_data_dir, errata="default")
    assert sum(e.meta["errata"]["applied"] for e in fixed) == 5
    swapped = [
        q for e in fixed for q in e.qa if "speaker" in q.meta.get("erratum", {}).get("fields", {})
    ]
    assert len(swapped) == 2 and {q.qa_id for q in swapped} == {
        "locomo/conv-26/q94",
        "locomo/conv-26/q138",
    }
    if (real_data_dir / "locomo_audit" / "errors.json").is_file():
        with pytest.warns(ErrataConflictWarning) as caught:  # one line per disagreement
            both = load(real_data_dir, errata="default+locomo_audit")
        flagged = [q.meta["erratum"] for e in both for q in e.qa if "erratum" in q.meta]
        audit = [f for f in flagged if "locomo_audit" in f["sources"]]
        assert len(audit) == 156  # every audit entry matched its question and answer
        assert sum(f["score_changing"] for f in audit) == 99  # SOURCE.md: not WRONG_CITATION
        # the shipped swap of q138 and the audit's answer disagree; q5's date agrees once the
        # audit's gloss is stripped, and q94's correction restates the release's answer
        lines = [c for e in both for c in e.meta["errata"]["conflicts"]]
        assert [c.split()[0] for c in lines] == ["locomo/conv-26/q138"]
        assert "default changes its speaker" in lines[0]
        assert all("locomo_audit gives" in c and c.endswith("used default") for c in lines)
        assert [str(w.message) for w in caught if w.category is ErrataConflictWarning] == lines
    assert DEFAULT_ERRATA.is_file()
