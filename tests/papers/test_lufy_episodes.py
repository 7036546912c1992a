"""LUFY Fig. 8: the App. C.2 classification of user utterances, the per-conversation shares and
their distribution, with a classifier double that answers like an LLM; n/a without one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from recallbench.llm.task import ParseError, TaskResult
from recallbench.papers.lufy.episodes import (
    CATEGORY_TASK,
    bin_label,
    episode_table,
    parse_category,
    shares,
)
from recallbench.tables import TableContext, load_spec


@pytest.mark.parametrize(
    "reply, label",
    [
        ("Episode-related", "Episode-related"),
        ('"profile-related"', "Profile-related"),
        ("Other.", "Other"),
    ],
)
def test_parse_category(reply, label):
    assert parse_category(reply) == label


@pytest.mark.parametrize("reply", ["", "Episode-related or Other", "episodic"])
def test_parse_category_refuses_none_or_two(reply):
    with pytest.raises(ParseError):
        parse_category(reply)


def test_shares_and_bins():
    labels = [["Episode-related", "Other", None, "Other"], ["Other"], [None], []]
    assert shares(labels) == [pytest.approx(100 / 3), 0.0]  # unparsed and empty ones left out
    assert [bin_label(0, 0), bin_label(30, 40), bin_label(40, 100)] == ["0%", "(30, 40]%", "> 40%"]


class Classifier:
    """Answers the C.2 task like an LLM: 'went' -> Episode-related, 'my' -> Profile-related."""

    backend = SimpleNamespace(offline=False, name="double")
    model = "rule"

    def run_many(self, task, fields):
        assert task is CATEGORY_TASK
        out = []
        for f in fields:
            text = f["user_utterance"].lower()
            reply = (
                "Episode-related"
                if "went" in text
                else "Profile-related"
                if "my " in text
                else "Other"
            )
            out.append(TaskResult(task.parse(reply), reply))
        return out


def test_figure8_from_the_fixture_logs(fixtures_dir):
    spec = load_spec("lufy_figure8")
    built = episode_table(
        spec, TableContext(results_dir=fixtures_dir, data_dir=fixtures_dir, make_llm=Classifier)
    )
    cells = {(c.row, c.column): c for c in built.cells}
    bins = [c for c in built.cells if c.row == "Conversations"]
    assert sum(c.ours for c in bins) == pytest.approx(100.0)  # every conversation in one bin
    assert cells["Conversations", "0%"].paper == 21.1
    assert cells["Summary", "episode-related utterances (%)"].paper == 10.6
    offline = SimpleNamespace(backend=SimpleNamespace(offline=True))
    none = episode_table(
        spec,
        TableContext(results_dir=fixtures_dir, data_dir=fixtures_dir, make_llm=lambda: offline),
    )
    assert all(c.ours is None for c in none.cells)
    assert none.header["generator"].startswith("unavailable offline")
