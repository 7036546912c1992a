"""The panel with the lexical judge on the hand-built run (conftest.py): acceptance by hand."""

from __future__ import annotations

import csv

import pytest

from recallbench.errors import ConfigError, DatasetFormatError
from recallbench.judgepanel import AnswerJudge, PanelOptions, run_panel, write_report
from recallbench.judges import LexicalJudge
from recallbench.protocols.qa.scores import prf


def _panel(run, **options):
    return run_panel(run, [AnswerJudge(LexicalJudge())], PanelOptions(**options))


def test_lexical_acceptance_and_headline_by_hand(tiny_run):
    result = _panel(tiny_run)
    rates = {k: v["value"] for k, v in result.acceptance["lexical"].items()}
    # answers: labels 1, 2, 1, 1, 0, 2 (conftest table) -> credit 3 / 6
    # gold and gold-among-distractors match the key word; wrong probes share no gold word
    assert rates == pytest.approx(
        {
            "answers": 3 / 6,
            "gold": 1.0,
            "specific_wrong": 0.0,
            "vague": 0.0,
            "verbose": 1.0,
            "verbose_wrong": 0.0,
            "empty": 0.0,
        }
    )
    head = {m: e["value"] for m, e in result.headline["lexical"].items()}
    assert head == pytest.approx({"precision": 0.75, "recall": 0.5, "f1": 0.6})
    assert head["f1"] == pytest.approx(prf(3, 1, 6)[2])  # the run's own scoring, same labels
    assert result.counts["questions"] == 5 and result.counts["answers"] == 6
    # two episodes: every acceptance has an episode-clustered interval
    answers = result.acceptance["lexical"]["answers"]
    assert answers["n_clusters"] == 2 and answers["ci95"] is not None
    low, high = answers["ci95"]
    assert low <= 0.5 <= high


def test_lexical_verdicts_on_answers_equal_the_runs_labels(tiny_run, tiny_labels):
    result = _panel(tiny_run)
    got = [
        (1 if r.verdict.credit else 2 if r.verdict.dont_know else 0)
        for r in result.judged["lexical"]
        if r.set == "answers"
    ]
    assert got == tiny_labels


def test_two_judges_agreement_and_spread(tiny_run):
    # threshold 1.0 rejects the one partial answer (conftest): F1 0.4 instead of 0.6
    judges = [AnswerJudge(LexicalJudge()), AnswerJudge(LexicalJudge(threshold=1.0), "strict")]
    result = run_panel(tiny_run, judges)
    assert result.headline["strict"]["f1"]["value"] == pytest.approx(0.4)
    assert result.spread["f1"]["range"] == pytest.approx(0.2)
    assert result.spread["f1"]["min_judge"] == "strict"
    assert result.agreement["answers"]["percent_agreement"] == pytest.approx(5 / 6)
    # all 36 items (6 answers + 5 questions x 6 probes): A accepts 13, B 12, they differ on 1:
    # po = 35/36, pe = (13*12 + 23*24) / 36^2, kappa = (po - pe) / (1 - pe) = 46/49
    overall = result.agreement["all"]
    assert overall["n_items"] == 36
    assert overall["percent_agreement"] == pytest.approx(35 / 36)
    assert overall["cohen_kappa"] == pytest.approx(46 / 49)
    assert overall["pairs"][0]["cohen_kappa"] == pytest.approx(46 / 49)


def test_a_panel_of_two_judges_says_no_pair_is_tested(tiny_run, tmp_path):
    one = write_report(_panel(tiny_run), tmp_path / "one")["table.md"].read_text()
    assert "no test between rows" not in one  # one judge compares nothing
    judges = [AnswerJudge(LexicalJudge()), AnswerJudge(LexicalJudge(threshold=1.0), "strict")]
    two = write_report(run_panel(tiny_run, judges), tmp_path / "two")["table.md"].read_text()
    assert "- no test between rows: no pair of judges is tested" in two


def test_report_files_carry_the_header(tiny_run, tmp_path):
    result = _panel(tiny_run)
    paths = write_report(result, tmp_path / "out")
    for name in ("table.md", "table.csv", "table.tex", "figure.png", "figure.pdf", "json"):
        assert paths[name].is_file(), name
    md = paths["table.md"].read_text()
    assert "**generator**: extractive:extractive" in md and "**judge**: panel: lexical" in md
    assert "**run judge**: lexical" in md and "**data**: tiny" in md
    rows = {(r["row"], r["column"]): r for r in csv.DictReader(paths["table.csv"].open())}
    assert float(rows["lexical", "gold"]["ours"]) == 100.0
    assert float(rows["lexical", "F1"]["ours"]) == pytest.approx(60.0)
    assert float(rows["lexical", "vague"]["ci_low"]) == 0.0


def test_a_run_without_answers_or_of_another_protocol_is_one_error(tmp_path, make_run):
    other = make_run(tmp_path / "a", protocol="response")
    with pytest.raises(ConfigError, match="QA-style protocol"):
        _panel(other)
    empty = make_run(tmp_path / "b")
    (empty / "predictions.jsonl").write_text("")
    with pytest.raises(DatasetFormatError, match="no judged 'answer' prediction"):
        _panel(empty)
