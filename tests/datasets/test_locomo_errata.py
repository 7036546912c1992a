"""LoCoMo errata as data: the audit's errors.json format, combined sources, the grown fields."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest
import yaml

from recallbench.datasets.locomo import CATEGORIES, load, question_sha1
from recallbench.errors import DatasetFormatError, ErrataConflictWarning


def _load(root, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fixture is a 2-conversation subset
        return load(root, **options)


@pytest.fixture(scope="module")
def episodes(fixtures_dir):
    return _load(fixtures_dir)


def _audit_entry(qid, question, golden, error_type, cited, correct_ev, correct_answer, use=None):
    """An entry in the audit's errors.json format (SOURCE.md), written here for the fixture;
    ``use``: how its correct_answer is used (the audit's own are in resources/)."""
    extra = {} if use is None else {"use": use}
    return {
        **extra,
        "question_id": qid,
        "question": question,
        "golden_answer": golden,
        "category": 2,
        "error_type": error_type,
        "cited_evidence": cited,
        "correct_evidence": correct_ev,
        "reasoning": "written for the test",
        "correct_answer": correct_answer,
    }


def _write(path, data):
    if path.suffix == ".json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump({"errata": data}), encoding="utf-8")
    return path


@pytest.fixture
def audit(tmp_path, episodes):
    q = {x.qa_id.rsplit("/", 1)[1]: x for x in episodes[0].qa}
    entries = [
        # conversation 0 = conv-1 (release order), question index 1 of its full qa list
        _audit_entry(
            "locomo_0_qa1",
            q["q1"].question,
            q["q1"].answers[0],
            "TEMPORAL_ERROR",
            ["D2:1"],
            ["D2:1"],
            "The Friday before 20 March 2023",
            "answer",
        ),
        _audit_entry(
            "locomo_0_qa3",
            q["q3"].question,
            q["q3"].answers[0],
            "WRONG_CITATION",
            ["D1:1"],
            ["D1:2"],
            q["q3"].answers[0],
        ),
        # a flag with no correction (the audit's AMBIGUOUS entries may keep the answer)
        _audit_entry(
            "locomo_1_qa0", "Where did  Dev move?", "Oslo", "AMBIGUOUS", ["D1:2"], ["D1:2"], "Oslo"
        ),
    ]
    folder = tmp_path / "data" / "locomo_audit"
    folder.mkdir(parents=True)
    return _write(folder / "errors.json", entries), entries


def test_audit_entries_become_corrections_and_flags(fixtures_dir, audit):
    path, _ = audit
    fixed = _load(fixtures_dir, errata=str(path))
    q1, q3 = fixed[0].qa[1], fixed[0].qa[3]
    assert q1.answers == ("The Friday before 20 March 2023",)
    assert q1.meta["erratum"]["score_changing"] is True
    assert q1.meta["erratum"]["error_type"] == "TEMPORAL_ERROR"
    assert q3.answers == ("Pixel",) and q3.evidence == ("locomo/conv-1/D1:2",)
    assert q3.meta["erratum"]["score_changing"] is False  # WRONG_CITATION: recall only
    dev = fixed[1].qa[0]
    assert dev.answers == ("Oslo",) and dev.meta["erratum"]["fields"] == {}
    assert dev.meta["erratum"]["score_changing"] is True
    assert fixed[0].meta["errata"]["sources"] == ["errors.json"]


def test_the_audit_is_read_from_the_data_folder_by_name(fixtures_dir, audit, tmp_path):
    path, _ = audit
    root = tmp_path / "root"  # a data folder holding both
    root.mkdir()
    (root / "locomo").symlink_to(fixtures_dir / "locomo", target_is_directory=True)
    (root / "locomo_audit").symlink_to(path.parent, target_is_directory=True)
    fixed = _load(root, errata="locomo_audit")
    assert fixed[0].qa[1].meta["erratum"]["sources"] == ["locomo_audit"]
    with pytest.raises(DatasetFormatError, match="locomo_audit/errors.json: LoCoMo audit"):
        _load(fixtures_dir, errata="locomo_audit")


def test_two_sources_that_disagree_give_one_line_naming_both(
    fixtures_dir, audit, tmp_path, episodes
):
    path, _ = audit
    q1 = episodes[0].qa[1]
    ours = _write(
        tmp_path / "ours.yaml",
        [
            {
                "sample_id": "conv-1",
                "question_sha1": question_sha1(q1.question),
                "field": "answer",
                "old_sha1": question_sha1(q1.answers[0]),
                "new": "The Sunday before 20 March 2023",
                "source": "issue 1",
            }
        ],
    )
    with pytest.warns(ErrataConflictWarning) as caught:
        fixed = load(fixtures_dir, errata=f"{ours}+{path}")
    item = fixed[0].qa[1]
    assert item.answers == ("The Sunday before 20 March 2023",)  # the first source named wins
    assert item.meta["erratum"]["sources"] == ["ours.yaml", "errors.json"]
    (line,) = fixed[0].meta["errata"]["conflicts"]
    assert line == (
        "locomo/conv-1/q1 answer: ours.yaml gives 'The Sunday before 20 March 2023', "
        "errors.json gives 'The Friday before 20 March 2023'; used ours.yaml"
    )
    assert item.meta["erratum"]["conflicts"] == [line]
    assert [str(w.message) for w in caught if w.category is ErrataConflictWarning] == [line]
    reverse = _load(fixtures_dir, errata=f"{path}+{ours}")
    assert reverse[0].qa[1].answers == ("The Friday before 20 March 2023",)


def test_drop_category_and_speaker_fields(fixtures_dir, tmp_path, episodes):
    q = {x.qa_id.rsplit("/", 1)[1]: x for x in episodes[0].qa}
    base = {"sample_id": "conv-1", "source": "test"}
    path = _write(
        tmp_path / "e.yaml",
        [
            {**base, "question_sha1": question_sha1(q["q4"].question), "field": "drop"},
            {
                **base,
                "question_sha1": question_sha1(q["q2"].question),
                "field": "category",
                "old": 3,
                "new": 4,
            },
            # "What did Ada bake?" asks about the wrong speaker
            {
                **base,
                "question_sha1": question_sha1(q["q7"].question),
                "field": "speaker",
                "new": "swap",
            },
        ],
    )
    fixed = _load(fixtures_dir, errata=str(path))
    ids = [x.qa_id for x in fixed[0].qa]
    assert "locomo/conv-1/q4" not in ids and "locomo/conv-1/q5" in ids  # ids stay the release's
    assert fixed[0].meta["errata"]["dropped"] == 1
    by_id = {x.qa_id: x for x in fixed[0].qa}
    moved = by_id["locomo/conv-1/q2"]
    assert (moved.kind, moved.meta["category"], moved.meta["category_name"]) == (
        "single_hop",
        4,
        "single_hop",
    )
    assert moved.meta["erratum"]["fields"]["category"]["old"] == 3
    assert by_id["locomo/conv-1/q7"].question == "What did Ben bake?"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"question": "When did Ben visit Porto?"}, "its question is not the text of"),
        ({"golden_answer": "another"}, "its golden_answer is not the answer of"),
        ({"question_id": "locomo_5_qa1"}, "conversation 5 is not loaded"),
        ({"question_id": "locomo_0_qa99"}, "conv-1 has no question 99"),
        ({"question_id": "conv-1/q1"}, "question_id should be like"),
        ({"correct_evidence": ["D9:9"]}, r"correct_evidence names no turn: \['D9:9'\]"),
    ],
)
def test_bad_audit_entries_name_file_and_entry(fixtures_dir, audit, change, message):
    path, entries = audit
    _write(path, [entries[0], {**entries[1], **change}])
    with pytest.raises(DatasetFormatError, match=rf"errors.json entry 1 \(.*\): {message}"):
        _load(fixtures_dir, errata=str(path))


def test_bad_category_and_speaker_entries(fixtures_dir, tmp_path, episodes):
    q = episodes[0].qa[2]
    base = {"sample_id": "conv-1", "source": "t", "question_sha1": question_sha1(q.question)}
    path = _write(tmp_path / "e.yaml", [{**base, "field": "category", "old": 3, "new": 5}])
    with pytest.raises(DatasetFormatError, match=r"e.yaml errata\[0\]: category old/new"):
        _load(fixtures_dir, errata=str(path))
    _write(path, [{**base, "field": "category", "old": 2, "new": 4}])
    with pytest.raises(DatasetFormatError, match="conv-1/q2 is category 3, not 2"):
        _load(fixtures_dir, errata=str(path))
    _write(path, [{**base, "field": "speaker", "new": "speaker_b"}])
    with pytest.raises(DatasetFormatError, match="a speaker correction is 'new: swap'"):
        _load(fixtures_dir, errata=str(path))


def test_a_speaker_swap_exchanges_both_names_and_needs_one(episodes):
    from recallbench.datasets._locomo_errata import _change, _checked_new

    ep = episodes[0]
    both = dataclasses.replace(ep.qa[4], question="What did Ada show Ben at the beach?")
    swapped, old = _change(both, ep, "speaker", "swap", CATEGORIES)
    assert swapped.question == "What did Ben show Ada at the beach?" and old == both.question
    neither = dataclasses.replace(ep.qa[4], question="What flew at the beach?")
    entry = {"field": "speaker", "new": "swap"}
    with pytest.raises(DatasetFormatError, match="names neither Ada or Ben"):
        _checked_new(neither, ep, entry, "e.yaml errata[0]")


def test_a_later_source_does_not_rewrite_an_answer_an_earlier_one_fixed_by_its_speaker(
    fixtures_dir, tmp_path, episodes
):
    q = episodes[0].qa[7]  # "What did Ada bake?"
    ours = _write(
        tmp_path / "ours.yaml",
        [
            {
                "sample_id": "conv-1",
                "question_sha1": question_sha1(q.question),
                "field": "speaker",
                "new": "swap",
                "source": "issue 2",
            }
        ],
    )
    audit = _write(
        tmp_path / "errors.json",
        [
            _audit_entry(
                "locomo_0_qa7",
                q.question,
                q.answers[0],
                "ATTRIBUTION_ERROR",
                ["D2:2"],
                ["D2:2"],
                "nothing: Ben baked nothing",
                "answer",
            )
        ],
    )
    (item,) = [x for x in _load(fixtures_dir, errata=f"{ours}+{audit}")[0].qa if x.qa_id == q.qa_id]
    assert item.question == "What did Ben bake?" and item.answers == q.answers
    assert item.meta["erratum"]["conflicts"] == [
        "locomo/conv-1/q7 answer: ours.yaml changes its speaker, errors.json gives "
        "'nothing: Ben baked nothing'; used ours.yaml"
    ]
    assert item.meta["erratum"]["error_type"] == "ATTRIBUTION_ERROR"


def test_truncated_or_incomplete_audit_file(fixtures_dir, audit):
    path, entries = audit
    path.write_text(json.dumps(entries)[:-20], encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="errors.json: not valid JSON"):
        _load(fixtures_dir, errata=str(path))
    _write(path, [{k: v for k, v in entries[0].items() if k != "correct_answer"}])
    with pytest.raises(DatasetFormatError, match=r"entry 0: missing \['correct_answer'\]"):
        _load(fixtures_dir, errata=str(path))


def _kinds(episodes):
    """One fixture entry per use of a correction (resources/locomo_audit_keys.yaml's kinds)."""
    q = {x.qa_id.rsplit("/", 1)[1]: x for x in episodes[0].qa}

    def entry(j, kind, correct, use=None, evidence=("D1:1",)):
        x = q[f"q{j}"]
        ev = list(evidence)
        return _audit_entry(f"locomo_0_qa{j}", x.question, x.answers[0], kind, ev, ev, correct, use)

    return [
        entry(0, "INCOMPLETE", "violin, chess, cello", "answer"),
        entry(1, "TEMPORAL_ERROR", "The Friday before 20 March 2023 (17 March, D2:1)", "strip"),
        entry(2, "AMBIGUOUS", "Likely yes (D1:1). The beagle is the only pet named", "first"),
        entry(3, "WRONG_CITATION", "Pixel (answer is correct, citation is wrong)", None),
        entry(4, "ATTRIBUTION_ERROR", "a red kite (but it was Ben who flew it)", "release"),
        entry(7, "HALLUCINATION", "Cannot be determined; Ada never names a bake", "no_key"),
    ]


def test_each_use_of_a_correction_gives_an_answer_or_none(fixtures_dir, tmp_path, episodes):
    entries = _kinds(episodes)
    path = _write(tmp_path / "errors.json", entries)
    keys = tmp_path / "keys.yaml"  # the WRONG_CITATION entry's use from a keys file, by text
    from recallbench.datasets._locomo_audit import _sha1, read_audit

    sha = _sha1(entries[3]["correct_answer"])
    keys.write_text(
        yaml.safe_dump(
            {
                "audit_keys": [
                    {
                        "question_id": "locomo_0_qa3",
                        "correct_answer_sha1": sha,
                        "use": "evidence_only",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    fixes = read_audit(path, episodes, "a", uses=keys)
    got = {(f.qa_id.rsplit("/", 1)[1], f.field): f.new for f in fixes if f.field != "flag"}
    assert got == {
        ("q0", "answer"): "violin, chess, cello",
        ("q1", "answer"): "The Friday before 20 March 2023",  # parenthesised span removed
        ("q2", "answer"): "Likely yes",  # the text before the remark
        ("q7", "no_key"): True,  # a remark: no usable key
    }  # q3 (WRONG_CITATION) and q4 (a restated answer) keep the release's answer
    assert {f.use for f in fixes if f.field == "flag"} == {
        "answer",
        "strip",
        "first",
        "evidence_only",
        "release",
        "no_key",
    }
    # through the loader (every entry naming its use): the references and the no_key record
    entries[3]["use"] = "evidence_only"
    _write(path, entries)
    fixed = {x.qa_id.rsplit("/", 1)[1]: x for x in _load(fixtures_dir, errata=str(path))[0].qa}
    assert fixed["q3"].answers == ("Pixel",) and fixed["q4"].answers == ("a red kite",)
    assert fixed["q7"].answers == ("sourdough bread",)  # the reference stays; scoring skips it
    assert fixed["q7"].meta["erratum"]["fields"]["no_key"]["new"] is True
    assert fixed["q7"].meta["erratum"]["use"] == "no_key"


@pytest.mark.parametrize(
    ("k", "use", "message"),
    [
        (0, None, "its correct_answer differs from golden_answer but has no use"),
        (3, "answer", "use 'answer' with error_type WRONG_CITATION"),
        (5, "evidence_only", "use 'evidence_only' with error_type HALLUCINATION"),
        (1, "answer", r"use .answer. leaves .*17 March, D2:1.*not an answer"),
        (0, "rewrite", "use should be one of"),
    ],
)
def test_a_correction_without_a_usable_use_is_refused(
    fixtures_dir, tmp_path, episodes, k, use, message
):
    entries = _kinds(episodes)
    entries[3]["use"] = "evidence_only"
    if k == 5:
        entries[5]["use"] = use
    else:
        entries[k]["use"] = use
    if use is None:
        del entries[k]["use"]
    path = _write(tmp_path / "errors.json", entries)
    with pytest.raises(DatasetFormatError, match=rf"errors.json entry {k} \(.*\): {message}"):
        _load(fixtures_dir, errata=str(path))


def test_real_audit_gives_no_remark_as_a_reference(real_data_dir):
    """Under the audit's errata: no reference holds a parenthesis or a dia id, no WRONG_CITATION
    question gets a new answer; 56 references change, 29 questions have no usable key."""
    import re

    if not (real_data_dir / "locomo_audit" / "errors.json").is_file():
        pytest.skip("needs locomo_audit/errors.json")
    release = {q.qa_id: q for e in _load(real_data_dir) for q in e.qa}
    fixed = [q for e in _load(real_data_dir, errata="locomo_audit") for q in e.qa]
    changed = [q for q in fixed if q.answers != release[q.qa_id].answers]
    assert len(changed) == 56
    assert not [q for q in changed if re.search(r"[()]|D\d+:\d+", q.answers[0])]
    assert not [q for q in changed if q.meta["erratum"]["error_type"] == "WRONG_CITATION"]
    no_key = [q for q in fixed if "no_key" in q.meta.get("erratum", {}).get("fields", {})]
    assert len(no_key) == 29 and all(q.meta["erratum"]["score_changing"] for q in no_key)
