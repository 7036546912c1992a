"""Loaders compare what they read with what the public release holds (issue 15).

The fixtures are small subsets, so every loader with a known count warns, naming the file and
both counts; the real data under ../shared/data (when present) loads without a warning.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from recallbench.datasets import load
from recallbench.errors import DatasetSubsetWarning

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "fixtures"
REAL = Path(os.environ.get("RECALLBENCH_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
KNOWN = [
    ("msc", {}, "msc_dialogue/session_2/test.txt: 3 records, the public release has 501"),
    ("gvd", {}, "memory_bank_en.json: 3 users, the public release has 15"),
    ("lufy", {}, "lufy/Dataset/LUFY: 2 users, the public release has 17"),
    ("carecall", {}, "carecall-memory-sample.json: 3 episodes, the public release has 10"),
]


@pytest.mark.parametrize("name,options,message", KNOWN, ids=[k[0] for k in KNOWN])
def test_fixture_subset_warns_with_both_counts(name, options, message):
    with pytest.warns(DatasetSubsetWarning) as record:
        load(name, FIXTURES, **options)
    assert any(message in str(w.message) for w in record), [str(w.message) for w in record]


def test_user_filter_is_a_legitimate_subset():
    with pytest.warns(DatasetSubsetWarning):
        user = load("gvd", FIXTURES)[0].meta["user"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DatasetSubsetWarning)
        assert load("lufy", FIXTURES, users="Zoe")
        assert load("gvd", FIXTURES, users=user)


@pytest.mark.skipif(not (REAL / "msc").is_dir(), reason="real data not beside the project")
@pytest.mark.parametrize("name", ["msc", "gvd", "lufy", "carecall"])
def test_real_data_loads_without_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DatasetSubsetWarning)
        assert load(name, REAL)
