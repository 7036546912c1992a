"""Protocol ``qa_gvd`` and the CAIM judges: hand-checked scores, provenance, rescoring."""

from __future__ import annotations

import csv
import json
from datetime import datetime

import pytest

from recallbench.cli import render_table
from recallbench.cli.build import build_caim_judge, build_protocol
from recallbench.datasets import load
from recallbench.errors import ConfigError
from recallbench.judges import LexicalJudge
from recallbench.judges.caim import (
    CaimItem,
    CaimJudge,
    CaimVerdicts,
    LexicalCaimJudge,
    LLMCaimJudge,
    caim_verdicts,
    coverage,
    parse_level,
)
from recallbench.llm import build_llm
from recallbench.llm.task import ParseError
from recallbench.memory import MemoryMethod
from recallbench.protocols.qa_gvd import GVDQAProtocol
from recallbench.protocols.qa_gvd.scores import rescore_answers, storage_stats
from recallbench.records import MemoryItem, Prediction, Query, Recall, Session
from recallbench.run.read import RunRecord, read_run
from recallbench.run.runner import Runner

DAY = datetime(2023, 4, 28)


def mem(item_id: str, text: str, sources: tuple[str, ...] = (), kind: str = "thought"):
    return MemoryItem(item_id, text, kind, DAY, sources)


EVIDENCE = ("u/d2/p0/query", "u/d2/p0/response")
ON_EVIDENCE = mem("m1", "Priya baked rye bread with caraway seeds.", EVIDENCE)
ONLY_RYE = mem("m2", "Priya baked rye bread.", EVIDENCE)
OTHER_DAY = mem("m3", "Priya likes rye and caraway.", ("u/d1/p0/query",))  # not the evidence
NO_SOURCE = mem("m4", "Priya: rye, caraway.", (), kind="profile")


def item(response: str, recalled=(), store=(), answerable=True, keywords=("rye", "caraway")):
    return CaimItem(
        question="On April 28th, what bread did I bake?",
        response=response,
        answers=("Rye with caraway seeds",) if answerable else (),
        keywords=keywords if answerable else (),
        answerable=answerable,
        evidence=EVIDENCE if answerable else (),
        recalled=tuple(recalled),
        store=tuple(store),
    )


def test_lexical_scores_by_hand() -> None:
    judge = LexicalCaimJudge()  # threshold 1.0: full credit needs every keyword
    v = judge.judge(item("You baked rye with caraway.", [ONLY_RYE], [ON_EVIDENCE, ONLY_RYE]))
    assert v.scores == {
        "retrieval_accuracy": 0.0,  # recalled covers 1 of 2 keywords < 1.0
        "response_correctness": 1.0,
        "contextual_coherence": None,  # unavailable offline, never faked
        "memory_storage": 1.0,
    }
    v = judge.judge(item("Rye, I think.", [ON_EVIDENCE], [ONLY_RYE]))
    assert (v.scores["retrieval_accuracy"], v.scores["response_correctness"]) == (1.0, 0.5)
    assert v.scores["memory_storage"] == 0.5
    lenient = LexicalCaimJudge(threshold=0.5)
    v = lenient.judge(item("Rye, I think.", [ONLY_RYE], [ONLY_RYE]))
    assert v.scores["retrieval_accuracy"] == v.scores["response_correctness"] == 1.0


def test_hold_needs_provenance_or_none_known() -> None:
    judge = LexicalCaimJudge()
    # Same words said on another day do not hold the evidence; an item without provenance may.
    assert judge.judge(item("No idea.", [OTHER_DAY], [OTHER_DAY])).scores["memory_storage"] == 0.0
    v = judge.judge(item("No idea.", [NO_SOURCE], [NO_SOURCE]))
    assert v.scores["memory_storage"] == v.scores["retrieval_accuracy"] == 1.0
    # A don't-know answer earns no correctness even if it repeats a keyword.
    assert v.scores["response_correctness"] == 0.0
    assert judge.judge(item("I don't know, maybe rye.")).scores["response_correctness"] == 0.0


def test_unanswerable_and_unkeyed() -> None:
    judge = LexicalCaimJudge()
    v = judge.judge(item("I don't know.", answerable=False))
    assert v.scores["response_correctness"] == 1.0
    assert v.scores["retrieval_accuracy"] is None and v.scores["memory_storage"] is None
    assert judge.judge(item("It is 1800.", answerable=False)).scores["response_correctness"] == 0
    unkeyed = CaimItem("What?", "Rye.")
    assert set(judge.judge(unkeyed).scores.values()) == {None}


def test_coverage_phrases_and_numbers() -> None:
    key = CaimItem("Which book?", "", keywords=("One Hundred Years of Solitude",), answerable=True)
    assert coverage(key, "she loves one hundred years of solitude") == 1.0
    assert coverage(key, "years of solitude") == 0.0  # a phrase keyword needs all its tokens
    no_kw = CaimItem("How old was the clock?", "", answers=("From 1912",), answerable=True)
    assert coverage(no_kw, "It was made in 1912.") == 1.0
    assert coverage(no_kw, "It was made in 1913.") == 0.0


def test_parse_level_exact_tokens() -> None:
    assert parse_level(" 0.5 ", (0.0, 0.5, 1.0)) == 0.5
    assert parse_level("**1**.", (0.0, 1.0)) == 1.0
    assert parse_level("1.0", (0.0, 1.0)) == 1.0
    for bad in ("Output: 1", "10", "0.5", "1 - yes", ""):
        with pytest.raises(ParseError):
            parse_level(bad, (0.0, 1.0))


def test_llm_judge_offline_matches_lexical_without_coherence() -> None:
    llm = build_llm({"backend": "extractive"})
    judge = LLMCaimJudge(llm)
    items = [
        item("Rye, I think.", [ON_EVIDENCE], [ONLY_RYE]),
        item("I don't know.", answerable=False),
    ]
    got = judge.judge_many(items)
    want = LexicalCaimJudge().judge_many(items)
    for g, w in zip(got, want, strict=True):
        assert g.scores == w.scores and not g.failures
    assert llm.usage.to_dict()["tasks"]["judge.caim.retrieval_accuracy"]["calls"] == 2
    assert "judge.caim.contextual_coherence" not in llm.usage.to_dict()["tasks"]
    with pytest.raises(ConfigError):
        build_caim_judge({"name": "llm"})
    with pytest.raises(KeyError, match="lexical"):
        build_caim_judge({"name": "lexcal"})


class PairMemory(MemoryMethod):
    """Store each (query, response) pair with both turn ids, plus a day summary naming every turn
    of the day with text that holds nothing; recall the pairs sharing a word with the question."""

    def reset(self, episode) -> None:
        super().reset(episode)
        self.items: list[MemoryItem] = []

    def observe(self, session: Session) -> None:
        turns = session.turns
        for q, r in zip(turns[::2], turns[1::2], strict=False):
            self.items.append(
                MemoryItem(
                    q.turn_id,
                    f"{q.text} {r.text}",
                    "utterance_pair",
                    session.start,
                    (q.turn_id, r.turn_id),
                )
            )
        ids = tuple(t.turn_id for t in turns)
        self.items.append(
            MemoryItem(
                f"{session.session_id}/sum", "A chat happened.", "summary", session.start, ids
            )
        )

    def recall(self, query: Query) -> Recall:
        asked = {w.strip("?.,").lower() for w in (query.question or "").split() if len(w) > 3}
        hits = tuple(
            i for i in self.items if asked & {w.strip("?.,!").lower() for w in i.text.split()}
        )
        return Recall(hits, "\n".join(i.text for i in hits))

    def prompt(self, query, recall):
        return [{"role": "user", "content": recall.text}]

    def snapshot(self) -> list[MemoryItem]:
        return list(self.items)


def test_protocol_run_folder_and_rescore(tmp_path, fixtures_dir) -> None:
    key = fixtures_dir / "gvd" / "answer_key_en.jsonl"
    episodes = load("gvd", fixtures_dir, answer_key=str(key))
    llm = build_llm({"backend": "extractive"})
    protocol = GVDQAProtocol(judge=LexicalJudge(), user_index=0, replay_turns=False)
    config = {
        "dataset": {
            "name": "gvd",
            "data_dir": str(fixtures_dir),
            "options": {"answer_key": str(key)},
        }
    }
    run_dir = tmp_path / "run"
    runner = Runner(
        run_dir, protocol=protocol, make_method=PairMemory, llm=llm, config=config, progress=False
    )
    summary = runner.run(episodes)
    preds = [
        Prediction.from_dict(json.loads(x))
        for x in (run_dir / "predictions.jsonl").read_text().splitlines()
    ]
    answers = {p.meta["qa_id"]: p for p in preds if p.kind == "answer"}
    # keyed_only: Mara q2 (podcast) and Theo q0 have no key line and are not asked
    assert sorted(answers) == [
        "gvd-en/Mara/q0",
        "gvd-en/Mara/q1",
        "gvd-en/Priya/q0",
        "gvd-en/Priya/q1",
        "gvd-en/Theo Lin/q1",
    ]
    tortoise = _scores(answers["gvd-en/Mara/q0"])
    assert tortoise["memory_storage"] == tortoise["retrieval_accuracy"] == 1.0
    assert tortoise["response_correctness"] == 1.0  # the recalled pair names Biscuit
    chess = _scores(answers["gvd-en/Priya/q1"])  # unanswerable, declined
    assert chess["response_correctness"] == 1.0 and chess["memory_storage"] is None
    m = summary["metrics"]
    assert m["contextual_coherence"]["n"] == 0 and m["contextual_coherence"]["value"] == 0.0
    assert m["memory_storage"]["n"] == 4 and m["response_correctness"]["n"] == 5
    # Table 4: pairs + one summary per day: Mara 6 + 3, Theo Lin 4 + 3 (one empty day), Priya
    # 3 + 3 = 22 entries after the last session.
    assert m["ltm_entries"]["value"] == 22 and m["ltm_entries"]["n"] == 3
    # the session's memory prediction carries the words stored (qa_gvd's hook on qa's state)
    states = [p for p in preds if p.kind == "memory"]
    assert states and all(p.meta["n_words"] > 0 for p in states if p.meta["n_items"])
    assert m["ltm_words"]["value"] > m["ltm_entries"]["value"]
    # Rescoring with the same judge reproduces the stored verdicts; a lenient rater may differ.
    answers_list, verdicts = _rescore(read_run(run_dir), build_caim_judge({"name": "lexical"}))
    for p in answers_list:
        assert verdicts[p.pred_id] == caim_verdicts(p)
    with pytest.raises(ValueError, match="recalled_items"):
        bad = tmp_path / "bad"
        bad.mkdir()
        (bad / "predictions.jsonl").write_text(
            json.dumps({**preds[-1].to_dict(), "kind": "answer", "meta": {}}) + "\n"
        )
        _rescore(read_run(bad, need_record=False), build_caim_judge({"name": "lexical"}))


def _scores(p: Prediction) -> dict[str, float | None]:
    verdicts = caim_verdicts(p)
    assert verdicts is not None, p.pred_id
    return verdicts.scores


def _rescore(run: RunRecord, judge: CaimJudge) -> tuple[list[Prediction], dict[str, CaimVerdicts]]:
    """A run folder's answers rescored (what ``papers.caim.agreement`` does)."""
    episodes = run.dataset_episodes() if run.config.dataset.present else {}
    return rescore_answers(run.predictions, episodes, run.stores, judge, str(run.path))


def test_storage_stats_by_hand() -> None:
    def state(ep: str, s: int, n: int, w: int) -> Prediction:
        return Prediction(f"{ep}/s{s}", ep, s, "memory", "", "", meta={"n_items": n, "n_words": w})

    stats = storage_stats([state("a", 1, 2, 10), state("a", 2, 3, 30), state("b", 1, 4, 8)])
    assert stats["ltm_entries"]["value"] == 7 and stats["ltm_words"]["value"] == 38
    assert stats["words_per_entry"]["value"] == pytest.approx(38 / 7)


def test_agreement_table_from_run_folder(tmp_path, fixtures_dir) -> None:
    key = fixtures_dir / "gvd" / "answer_key_en.jsonl"
    run_dir = tmp_path / "runs" / "caim_table3" / "s1" / "gvd-caim-extractive"
    config = {
        "dataset": {
            "name": "gvd",
            "data_dir": str(fixtures_dir),
            "options": {"answer_key": str(key)},
        },
        "choices": {"memory": "caim", "generator": "extractive"},
    }
    protocol = GVDQAProtocol(judge=LexicalJudge(), user_index=0, replay_turns=False)
    Runner(
        run_dir,
        protocol=protocol,
        make_method=PairMemory,
        llm=build_llm({"backend": "extractive"}),
        config=config,
        progress=False,
    ).run(load("gvd", fixtures_dir, answer_key=str(key)))
    paths = render_table("caim_table2", [f"paths.results_dir={tmp_path}"])
    rows = list(csv.DictReader(paths["csv"].open()))
    cell = {(r["row"], r["column"], r["metric"]): r for r in rows}
    # Two lexical raters on the 4 answerable + 1 unanswerable questions: retrieval has 4 items.
    got = cell[("Memory Retrieval", "extractive / CAIM", "Percent Agr.")]
    assert got["n"] == "4" and 0 <= float(got["ours"]) <= 100
    assert cell[("Response Correctness", "extractive / CAIM", "Percent Agr.")]["n"] == "5"
    assert (
        cell[("Contextual Coherence", "extractive / CAIM", "ICC(A,1)")]["ours"] == "n/a"
    )  # unavailable offline
    assert float(cell[("Memory Retrieval", "GPT-4o", "Percent Agr.")]["paper"]) == 93
    md = paths["md"].read_text()
    assert "lexical@0.5" in md
    # CAIM sec. 4.1.4: absolute agreement, so the table says ICC(A,1) and keeps ICC(C,1) aside.
    assert "ICC(A,1)" in md and "absolute agreement" in md and "ICC(C,1)" in md


def test_protocol_config_builds() -> None:
    from recallbench.cli import compose_job

    cfg, _ = compose_job(["protocol=qa_gvd", "+judge=lexical", "embedder=hashing"])
    llm = build_llm({"backend": "extractive"})
    protocol = build_protocol(cfg.protocol, 0, llm, None)
    assert isinstance(protocol, GVDQAProtocol) and protocol.keyed_only
    assert isinstance(protocol.judge, LexicalJudge)
    assert isinstance(protocol._caim, LexicalCaimJudge) and protocol._caim.threshold == 1.0
    _, summary = protocol.score([], list(cfg.protocol.metrics))
    assert summary["metrics"]["retrieval_accuracy"]["n"] == 0
    with pytest.raises(KeyError, match="retrieval_accuracy"):
        protocol.score([], ["retrieval_acuracy"])
