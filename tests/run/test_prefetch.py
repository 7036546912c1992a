"""The runner encodes what every episode fixes before replaying (run.prefetch): the same texts,
the same predictions, and no text an episode fixes reaches the model during the replay."""

from __future__ import annotations

from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_judge, build_memory_factory
from recallbench.datasets.longmemeval import load
from recallbench.llm import build_llm
from recallbench.protocols.longmemeval import LongMemEvalQAProtocol
from recallbench.records import Prediction, read_jsonl
from recallbench.run import prefetch
from recallbench.run.runner import Runner
from recallbench.testing.configs import load_group_config
from recallbench.testing.embedders import RecordingEmbedder


def _run(tmp_path, fixtures_dir, name: str, *, group: int) -> tuple[RecordingEmbedder, list]:
    llm = build_llm({"backend": "extractive"}, cache_path=None)
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "protocol" / "longmemeval_qa.yaml"))
    params = {k: v for k, v in node.items() if k not in ("_target_", "name", "metrics", "judge")}
    judge = {"_target_": "recallbench.judges.longmemeval.LongMemEvalJudge", "name": "longmemeval"}
    protocol = LongMemEvalQAProtocol(
        judge=build_judge({**judge, "generator": None}, llm=llm), **params
    )
    embedder = RecordingEmbedder()
    memory = load_group_config(CONF_DIR / "memory" / "flat_retrieval.yaml")
    make = build_memory_factory(memory, llm, embedder)
    folder = tmp_path / f"{name}"
    runner = Runner(
        folder, protocol=protocol, make_method=make, llm=llm, metrics=["accuracy"], progress=False
    )
    original = prefetch.GROUP
    prefetch.GROUP = group
    try:
        runner.run(load(fixtures_dir, "s"))
    finally:
        prefetch.GROUP = original
    return embedder, read_jsonl(folder / "predictions.jsonl", Prediction)


def test_the_runner_encodes_every_episodes_keys_first_with_the_same_results(tmp_path, fixtures_dir):
    episodes = load(fixtures_dir, "s")
    questions = {qa.question for e in episodes for qa in e.qa}
    batched, got = _run(tmp_path, fixtures_dir, "batched", group=prefetch.GROUP)
    first, *after = batched.calls
    assert len({t for call in after for t in call} - questions) == 0  # only the questions after
    assert len(first) > max(len(e.sessions) for e in episodes)  # every episode's keys at once
    one_by_one, expected = _run(tmp_path, fixtures_dir, "per_episode", group=1)
    assert sorted(batched.sent) == sorted(one_by_one.sent)
    strip = lambda p: {k: v for k, v in vars(p).items() if k not in ("usage", "meta")}  # noqa: E731
    assert [strip(p) for p in got] == [strip(p) for p in expected]
    assert [p.meta.get("retrieval") for p in got] == [p.meta.get("retrieval") for p in expected]


def test_the_runner_encodes_timerag_queries_with_the_values_first(tmp_path, fixtures_dir):
    """TimeRAG on MSC (the response protocol): the records' values and the retrieval queries of
    every episode (the last 3 turns of the dataset's dialogue) go to the model before the replay;
    after it only what the data does not fix could, and on this fixture nothing does."""
    from recallbench.cli.build import build_protocol
    from recallbench.datasets import msc

    llm = build_llm({"backend": "extractive"}, cache_path=None)
    node = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "protocol" / "response_timerag.yaml"))
    assert isinstance(node, dict)
    protocol = build_protocol(node, 0, llm, None)
    episodes = msc.load(fixtures_dir)
    memory = load_group_config(CONF_DIR / "memory" / "timerag.yaml")
    runs = {}
    for group in (prefetch.GROUP, 1):
        embedder = RecordingEmbedder()
        make = build_memory_factory(memory, llm, embedder)
        folder = tmp_path / f"group{group}"
        runner = Runner(
            folder, protocol=protocol, make_method=make, llm=llm, metrics=[], progress=False
        )
        original, prefetch.GROUP = prefetch.GROUP, group
        try:
            runner.run(episodes)
        finally:
            prefetch.GROUP = original
        runs[group] = embedder, read_jsonl(folder / "predictions.jsonl", Prediction)
    (batched, got), (one_by_one, expected) = runs[prefetch.GROUP], runs[1]
    method = make()
    queries = {t for e in episodes for t in method.query_texts(protocol.fixed_queries(e))}
    assert queries and len(batched.calls) == 1 and queries <= set(batched.calls[0])
    assert sorted(batched.calls[0]) == sorted(one_by_one.sent)
    strip = lambda p: {k: v for k, v in vars(p).items() if k not in ("usage", "meta")}  # noqa: E731
    assert [strip(p) for p in got] == [strip(p) for p in expected]
