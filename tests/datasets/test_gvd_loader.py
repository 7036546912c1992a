"""Tests of the GVD loader and its answer keys on self-written fixtures and the real files."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from recallbench.datasets import load
from recallbench.datasets.gvd import AI, DEFAULT_KEYS
from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.records import Episode


@pytest.fixture(scope="module")
def key_path(fixtures_dir: Path) -> Path:
    return fixtures_dir / "gvd" / "answer_key_en.jsonl"


@pytest.fixture(scope="module")
def episodes(fixtures_dir: Path, key_path: Path) -> dict[str, Episode]:
    return {e.episode_id: e for e in load("gvd", fixtures_dir, answer_key=key_path)}


def test_fixture_episodes_sessions_and_turns(episodes: dict[str, Episode]) -> None:
    # ' Theo Lin ' and ' Priya' carry stray spaces in the memory bank keys.
    assert list(episodes) == ["gvd-en/Mara", "gvd-en/Theo Lin", "gvd-en/Priya"]
    mara = episodes["gvd-en/Mara"]
    assert mara.dataset == "gvd" and mara.speakers == ("Mara", AI)
    # dates come out sorted although the file lists 04-28 first
    assert [s.session_id for s in mara.sessions] == [
        "gvd-en/Mara/2023-04-27",
        "gvd-en/Mara/2023-04-28",
        "gvd-en/Mara/2023-04-29",
    ]
    assert [s.index for s in mara.sessions] == [1, 2, 3]
    assert mara.sessions[0].start == datetime(2023, 4, 27, 9, 0)
    turns = mara.sessions[0].turns
    assert [(t.turn_id, t.speaker) for t in turns[:2]] == [
        ("gvd-en/Mara/2023-04-27/p0/query", "Mara"),
        ("gvd-en/Mara/2023-04-27/p0/response", AI),
    ]
    assert turns[0].text == "Hello, I am Mara. I repair old clocks for a living."
    assert sum(len(s.turns) // 2 for e in episodes.values() for s in e.sessions) == 13


def test_meta_and_stripped_keys(episodes: dict[str, Episode]) -> None:
    assert episodes["gvd-en/Mara"].meta == {
        "name": "Mara",
        "personality": "patient, curious",
        "hobbies": "clock repair, gardening",
        "speaking_style": "calm and precise.",
        "language": "en",
        "user": "Mara",
    }
    assert episodes["gvd-en/Theo Lin"].meta["source_key"] == " Theo Lin "
    assert episodes["gvd-en/Priya"].meta["source_key"] == " Priya"


def test_empty_day_is_a_session(episodes: dict[str, Episode]) -> None:
    theo = episodes["gvd-en/Theo Lin"]
    assert [len(s.turns) for s in theo.sessions] == [4, 0, 4]
    assert theo.sessions[2].turns[3].text == "A wise choice, maybe go swimming instead."


def test_questions_after_last_session(fixtures_dir: Path) -> None:
    mara = load("gvd", fixtures_dir, users="Mara")[0]  # no key: no answers
    assert [q.qa_id for q in mara.qa] == ["gvd-en/Mara/q0", "gvd-en/Mara/q1", "gvd-en/Mara/q2"]
    assert all(q.after_session == 3 and q.answers == () and q.evidence == () for q in mara.qa)
    assert mara.qa[1].question == "How old was the cuckoo clock I fixed?"
    assert mara.qa[1].meta == {"raw_question": '"How old was the cuckoo clock I fixed?"'}
    assert mara.qa[0].meta == {}


def test_answer_key_merge(episodes: dict[str, Episode]) -> None:
    mara = episodes["gvd-en/Mara"]
    q0, q1, q2 = mara.qa
    assert q0.answers == ("Biscuit",)
    assert q0.evidence == (
        "gvd-en/Mara/2023-04-28/p0/query",
        "gvd-en/Mara/2023-04-28/p0/response",
    )
    assert q0.meta == {
        "answerable": True,
        "keywords": ["Biscuit"],
        "type": "user-fact",
        "answer_key": "answer_key_en.jsonl",
    }
    assert q1.answers == ("From 1912", "over a hundred years")  # list answers, spaced question
    assert q2.answers == () and q2.meta == {}  # not in the key
    unanswerable = episodes["gvd-en/Priya"].qa[1]
    assert unanswerable.answers == () and unanswerable.meta["answerable"] is False
    turn_ids = {t.turn_id for e in episodes.values() for t in e.turns()}
    assert all(ev in turn_ids for e in episodes.values() for q in e.qa for ev in q.evidence)


def test_chinese(fixtures_dir: Path) -> None:
    cn = load("gvd", fixtures_dir, language="cn")
    assert [e.episode_id for e in cn] == ["gvd-cn/林小雨", "gvd-cn/赵大海"]
    assert cn[0].speakers == ("林小雨", AI) and cn[0].meta["language"] == "cn"
    assert [q.qa_id for q in cn[0].qa] == ["gvd-cn/林小雨/q0", "gvd-cn/林小雨/q1"]
    assert cn[1].qa[0].after_session == 2


def test_options(fixtures_dir: Path) -> None:
    assert [e.episode_id for e in load("gvd", fixtures_dir, users=["Priya", "Mara"])] == [
        "gvd-en/Mara",
        "gvd-en/Priya",
    ]
    with pytest.raises(ConfigError, match="Did you mean 'en'"):
        load("gvd", fixtures_dir, language="eng")
    with pytest.raises(ConfigError, match="Did you mean 'Theo Lin'"):
        load("gvd", fixtures_dir, users="Theo")
    with pytest.raises(ConfigError, match="no shipped GVD answer key for language 'cn'"):
        load("gvd", fixtures_dir, language="cn", answer_key="default")


def test_round_trip(episodes: dict[str, Episode]) -> None:
    for episode in episodes.values():
        assert Episode.from_dict(episode.to_dict()) == episode


# ----- bad answer keys -------------------------------------------------------------------

GOOD = {
    "user": "Mara",
    "qid": 0,
    "question": "What is the name of my tortoise?",
    "answer": "Biscuit",
    "answerable": True,
    "evidence": [{"date": "2023-04-28", "turn": 0}],
    "keywords": ["Biscuit"],
    "type": "user-fact",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"user": "Marta"}, r"line 2: unknown user 'Marta'"),
        ({"qid": 3}, r"line 2: qid 3 out of range \(user 'Mara' has 3 questions\)"),
        ({"question": "What is my tortoise called?"}, r"line 2: question .* does not match"),
        ({"evidence": [{"date": "2023-05-01", "turn": 0}]}, r"line 2: unknown date '2023-05-01'"),
        ({"evidence": [{"date": "2023-04-28", "turn": 2}]}, r"line 2: turn 2 out of range"),
        ({"evidence": [{"date": "2023-04-28"}]}, r"line 2: evidence item .* must be"),
        ({"answerable": "yes"}, r"line 2: 'answerable' must be a bool"),
        ({"qid": 1, "answer": " "}, r"line 2: 'answer' is empty but 'answerable' is true"),
        ({"answer": None}, r"line 2: 'answer' must be a string or a list of strings"),
        ({"qid": 1, "question": None}, r"line 2: 'question' must be a string"),
    ],
)
def test_bad_key_lines(fixtures_dir: Path, tmp_path: Path, change: dict, message: str) -> None:
    key = tmp_path / "key.jsonl"
    second = GOOD | change
    first = GOOD | {"qid": 2, "question": "Which podcast did you recommend to me?"}
    key.write_text(f"{json.dumps(first)}\n{json.dumps(second)}\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=rf"{tmp_path}/key.jsonl {message}"):
        load("gvd", fixtures_dir, answer_key=key)


def test_key_structure_errors(fixtures_dir: Path, tmp_path: Path) -> None:
    key = tmp_path / "key.jsonl"
    for text, message in [
        ('{"user": "Mara",\n', "line 1: invalid JSON"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "evidence"}), r"missing field\(s\)"),
        (json.dumps(GOOD) + "\n" + json.dumps(GOOD), "line 2: user 'Mara' qid 0 answered twice"),
    ]:
        key.write_text(text, encoding="utf-8")
        with pytest.raises(DatasetFormatError, match=message):
            load("gvd", fixtures_dir, answer_key=key)
    with pytest.raises(DatasetFormatError, match="answer key file not found"):
        load("gvd", fixtures_dir, answer_key=tmp_path / "absent.jsonl")


# ----- bad data files --------------------------------------------------------------------


@pytest.fixture
def gvd_copy(tmp_path: Path, fixtures_dir: Path) -> Path:
    shutil.copytree(fixtures_dir / "gvd", tmp_path / "gvd")
    return tmp_path


def test_malformed_question_line(gvd_copy: Path) -> None:
    path = gvd_copy / "gvd" / "eval_data" / "en" / "probing_questions_en.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:-1]  # drop the closing brace
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        DatasetFormatError, match=r"probing_questions_en.jsonl line 2: invalid JSON"
    ):
        load("gvd", gvd_copy)
    lines[1] = json.dumps({"Theo Lin": "not a list"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"line 2: expected one"):
        load("gvd", gvd_copy)
    lines[1] = json.dumps({"Nobody": ["Who am I?"]})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"user 'Nobody' is not in memory_bank_en.json"):
        load("gvd", gvd_copy)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda bank: bank["Mara"]["history"].update({"April 30": []}), r"'April 30' is not YYYY"),
        (
            lambda bank: bank["Mara"]["history"]["2023-04-29"].append({"query": "hi"}),
            r"user 'Mara' date 2023-04-29 pair 1: expected string 'query' and 'response'",
        ),
        (lambda bank: bank.update({"Mara ": bank["Mara"]}), r"clash after strip"),
        (lambda bank: bank["Mara"].pop("history"), r"user 'Mara': expected an object with"),
    ],
)
def test_bad_memory_bank(gvd_copy: Path, edit, message: str) -> None:
    path = gvd_copy / "gvd" / "eval_data" / "en" / "memory_bank_en.json"
    bank = json.loads(path.read_text(encoding="utf-8"))
    edit(bank)
    path.write_text(json.dumps(bank), encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=message):
        load("gvd", gvd_copy)


def test_truncated_memory_bank(gvd_copy: Path) -> None:
    path = gvd_copy / "gvd" / "eval_data" / "en" / "memory_bank_en.json"
    path.write_text(path.read_text(encoding="utf-8")[:-5], encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=r"memory_bank_en.json line \d+: invalid JSON"):
        load("gvd", gvd_copy)


# ----- real data -------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "cn"])
def test_real_counts(real_data_dir: Path, language: str) -> None:
    episodes = load("gvd", real_data_dir, language=language)
    assert len(episodes) == 15
    assert sum(len(e.qa) for e in episodes) == 100
    assert sum(len(s.turns) // 2 for e in episodes for s in e.sessions) == 566
    assert all(len(e.sessions) == 10 for e in episodes)
    assert all(q.after_session == 10 for e in episodes for q in e.qa)
    assert all(e.meta["name"] == e.speakers[0] for e in episodes)


def test_real_quirks_en(real_data_dir: Path) -> None:
    by_user = {e.speakers[0]: e for e in load("gvd", real_data_dir)}
    assert {u for u, e in by_user.items() if "source_key" in e.meta} == {
        "Jason",
        "Linda",
        "Ivy",
        "Roland",
    }
    assert [len(s.turns) for s in by_user["John Zhang"].sessions].count(0) == 1
    quoted = [q for e in by_user.values() for q in e.qa if "raw_question" in q.meta]
    assert len(quoted) == 23 and not any(q.question.startswith('"') for q in quoted)


def test_real_default_key(real_data_dir: Path) -> None:
    episodes = load("gvd", real_data_dir, answer_key="default")
    keyed = [q for e in episodes for q in e.qa if q.answers]
    lines = DEFAULT_KEYS["en"].read_text(encoding="utf-8").splitlines()
    assert len(keyed) == len(lines) == 15
    turn_ids = {t.turn_id for e in episodes for t in e.turns()}
    assert all(q.evidence and set(q.evidence) <= turn_ids for q in keyed)
    assert all(q.meta["answer_key"] == "gvd_answer_key_en.jsonl" for q in keyed)


def test_config_defaults_load(fixtures_dir: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    cfg = OmegaConf.load(root / "conf" / "dataset" / "gvd.yaml")
    assert cfg.name == "gvd" and OmegaConf.to_container(cfg)["data_dir"] == "${paths.data_dir}"
    options = OmegaConf.to_container(cfg.options)
    assert options == {"language": "en", "answer_key": None, "users": None}
    assert len(load(cfg.name, fixtures_dir, **options)) == 3


def test_key_may_reference_questions_by_sha1(fixtures_dir: Path, tmp_path: Path) -> None:
    import json

    from recallbench.datasets.gvd import question_sha1

    lines = (fixtures_dir / "gvd" / "answer_key_en.jsonl").read_text().splitlines()
    entry = json.loads(lines[0])
    entry["question_sha1"] = question_sha1(entry.pop("question"))
    key = tmp_path / "key.jsonl"
    key.write_text(json.dumps(entry) + "\n")
    episodes = load("gvd", fixtures_dir, language="en", answer_key=str(key))
    answered = [q for e in episodes for q in e.qa if q.answers]
    assert [q.answers for q in answered] == [("Biscuit",)]
    entry["question_sha1"] = "0" * 40
    key.write_text(json.dumps(entry) + "\n")
    with pytest.raises(DatasetFormatError, match="does not match"):
        load("gvd", fixtures_dir, language="en", answer_key=str(key))
