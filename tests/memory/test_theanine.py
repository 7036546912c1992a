"""THEANINE paper-fidelity tests: relation-aware linking, Algorithm 1, timelines, ablations."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import hydra.utils
import pytest
import yaml
from omegaconf import OmegaConf

from recallbench.errors import ConfigError
from recallbench.llm.task import ParseError
from recallbench.memory.theanine import (
    DEFAULT_THRESHOLDS,
    LINKING_PROMPT,
    REFINEMENT_PROMPT,
    SIMILAR,
    MemoryGraph,
    Theanine,
    extractive_refinement,
    parse_refinement,
    parse_relation,
    relation_rule,
    render_timeline,
    timeline_rng,
)
from recallbench.records import Episode, Query, Session, Turn
from recallbench.testing.configs import load_group_config

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "memory"
START = datetime(2024, 3, 1, 18, 0)

# Invented toy episode: Dana's fear of cruise ships (s1) changes into a booked cruise (s2);
# s3 is about the cruise again (the Changed timeline must come back in order), while Eli's
# unrelated cooking memories form their own component.
TOY = {
    1: [
        ("Dana", "I am afraid of cruise ships because I get seasick on the ocean."),
        ("Eli", "I cook spicy noodles for my family every Sunday evening."),
    ],
    2: [
        ("Dana", "I now booked a cruise ship trip across the ocean for the summer."),
        ("Eli", "I bought a new wok for my spicy noodles recipe."),
    ],
    3: [
        ("Eli", "Are you nervous about your cruise ship trip on the ocean this summer?"),
        ("Dana", "A little, but I packed pills for seasickness."),
    ],
}


def toy_episode(episode_id: str = "toy", dialogue: dict | None = None) -> Episode:
    dialogue = dialogue or TOY
    sessions = tuple(
        Session(
            f"{episode_id}/s{i}",
            i,
            START + timedelta(days=30 * (i - 1)),
            tuple(Turn(f"{episode_id}/s{i}t{j}", s, t) for j, (s, t) in enumerate(turns)),
        )
        for i, turns in sorted(dialogue.items())
    )
    return Episode(episode_id, "toy", ("Dana", "Eli"), sessions)


def cruise_query(episode: Episode) -> Query:
    s3 = episode.sessions[2]
    return Query(episode.episode_id, 3, s3.turns[:1], "Dana", s3.start)


def replay(method: Theanine, episode: Episode, upto: int = 2) -> Theanine:
    method.reset(episode)
    for session in episode.sessions[:upto]:
        method.observe(session)
    return method


def by_text(method: Theanine, fragment: str) -> str:
    return next(m.item_id for m in method.snapshot() if fragment in m.text)


# --- prompts and parsers ---------------------------------------------------------------------


def test_paper_prompts_have_their_placeholders_only():
    fields = {"dialogue1", "dialogue2", "sentence1", "sentence2"}
    assert LINKING_PROMPT.format(**{f: f"<{f}>" for f in fields}).count("<sentence1>") == 1
    assert "8. None: when [Sentence A] and [Sentence B] are irrelevant" in LINKING_PROMPT
    refined = REFINEMENT_PROMPT.format(current_dialogue_context="<D>", input_path="<T>")
    assert "Current Dialogue: <D>\n\nTimelines: <T>" in refined
    assert refined.endswith("Your Outputs (only the transformed timelines):")


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("- Explanation: she changed her mind.\n- Relation: Changed", "Changed"),
        ("- Explanation: x\n- Relation: (Same Topic)", "SameTopic"),
        ("Relation: hindered by", "HinderedBy"),
        ("- Relation: Causes", "Cause"),
        ("- Relation: None", "None"),
        ("Want", "Want"),
        # an echoed format line has no label: the label on the real Relation line wins
        ("- Relation: (predicted_relation)\n- Relation: React", "React"),
    ],
)
def test_parse_relation(reply, label):
    assert parse_relation(reply) == label


@pytest.mark.parametrize("reply", ["", "I am not sure.", "Changed or Cause, hard to say"])
def test_parse_relation_refuses_replies_without_one_label(reply):
    with pytest.raises(ParseError):
        parse_relation(reply)


def test_parse_refinement_strips_header_and_refuses_empty():
    assert parse_refinement("Your Outputs: Dana was afraid, now she sails.") == (
        "Dana was afraid, now she sails."
    )
    with pytest.raises(ParseError):
        parse_refinement("Your Outputs (only the transformed timelines):  ")


@pytest.mark.parametrize(
    ("a", "b", "cos", "label"),
    [
        ("Dana: I am afraid of cruise ships.", "Dana: I now booked a cruise ship.", 0.5, "Changed"),
        ("Dana: I do not own a car.", "Dana: I drive my car to work.", 0.4, "Changed"),
        ("Dana: I like cruise ships.", "Dana: I want to book a cruise ship.", 0.5, "Want"),
        ("Dana: I adopted a dog.", "Eli: I am happy about the dog.", 0.4, "React"),
        ("Dana: I like cruise ships.", "Eli: My uncle sails cruise ships.", 0.4, "SameTopic"),
        ("Dana: I like cruise ships.", "Eli: I cook noodles.", 0.1, "None"),
        ("Dana: I like cruise ships.", "Dana: I now like ships.", 0.01, "None"),  # < none_cos
    ],
)
def test_offline_relation_rule(a, b, cos, label):
    assert relation_rule(a, b, cos, DEFAULT_THRESHOLDS)[0] == label


# --- graph: Algorithm 1 and Eq. 10 -----------------------------------------------------------


def test_new_memory_links_to_most_recent_assigned_memory_per_component():
    g = MemoryGraph()
    for node in ("a", "b", "c", "d"):
        g.add(node)
    g.link("a", "SameTopic", "b")  # component {a, b}; c and d alone
    comp = g.components()
    assert comp == {"a": "a", "b": "a", "c": "c", "d": "d"}
    g.add("new")
    targets = g.link_targets({"a": "Changed", "b": "Cause", "c": "Want"}, comp)
    assert targets == [("b", "Cause"), ("c", "Want")]  # not a: b is more recent in {a, b}


def test_raw_timelines_branch_from_the_oldest_memory_to_out_degree_zero_ends():
    # Fig. 4: m1 -> m2 -> {m3 -> m5, m4}; retrieved m2 has two timelines, m3 one.
    g = MemoryGraph()
    for node in ("m1", "m2", "m3", "m4", "m5"):
        g.add(node)
    for src, dst in (("m1", "m2"), ("m2", "m3"), ("m2", "m4"), ("m3", "m5")):
        g.link(src, "SameTopic", dst)
    assert g.timelines("m2") == [("m1", "m2", "m3", "m5"), ("m1", "m2", "m4")]
    assert g.timelines("m4") == [("m1", "m2", "m4")]
    assert g.timelines("m2", limit=1) == [("m1", "m2", "m3", "m5")]


def test_timeline_starts_at_oldest_ancestor_when_the_component_root_cannot_reach():
    g = MemoryGraph()
    for node in ("a", "b", "c"):
        g.add(node)
    g.link("a", "SameTopic", "c")
    g.link("b", "Changed", "c")  # b is in a's component but a has no path to b
    assert g.timelines("b") == [("b", "c")]
    assert g.timelines("c") == [("a", "c")]


def test_graph_refuses_edges_backwards_in_time():
    g = MemoryGraph()
    g.add("old")
    g.add("new")
    with pytest.raises(ValueError, match="older"):
        g.link("new", "Cause", "old")


# --- the method on a toy episode -------------------------------------------------------------


def test_changed_relation_links_early_memory_and_timeline_returns_both_in_order(llm, embedder):
    method = replay(Theanine(llm, embedder, timelines="raw"), toy_episode())
    afraid, booked = by_text(method, "afraid of cruise"), by_text(method, "booked a cruise")
    item = next(m for m in method.snapshot() if m.item_id == booked)
    assert item.attrs["edges_in"] == [{"from": afraid, "relation": "Changed"}]
    assert item.attrs["component"] == afraid
    recall = method.recall(cruise_query(toy_episode()))
    ids = [m.item_id for m in recall.items]
    assert ids.index(afraid) < ids.index(booked)
    assert [afraid, booked] in recall.info["timelines"]
    assert f"[{item.text}]" in recall.text
    assert " - (Changed) - " in recall.text


def test_refined_timeline_keeps_both_cruise_events_in_order(llm, embedder):
    method = replay(Theanine(llm, embedder), toy_episode())
    recall = method.recall(cruise_query(toy_episode()))
    line = next(x for x in recall.text.splitlines() if "booked" in x)
    assert (
        line.index("afraid of cruise") < line.index("Later, this changed:") < line.index("booked")
    )
    assert llm.usage.to_dict()["tasks"]["theanine.refine_timeline"]["calls"] >= 1


def test_linking_goes_to_most_recent_memory_of_the_component(llm, embedder):
    dialogue = {
        **TOY,
        3: [("Dana", "I now sold my cruise ship ticket for the ocean trip."), ("Eli", "Oh no.")],
        4: TOY[3],
    }
    episode = toy_episode("toy4", dialogue)
    method = replay(Theanine(llm, embedder), episode, upto=3)
    afraid, booked = by_text(method, "afraid of cruise"), by_text(method, "booked a cruise")
    sold = by_text(method, "sold my cruise")
    assessed = {(e["from"], e["to"]) for e in method.link_log if e["relation"] != "None"}
    assert (afraid, sold) in assessed and (booked, sold) in assessed  # both assigned ...
    item = next(m for m in method.snapshot() if m.item_id == sold)
    assert [e["from"] for e in item.attrs["edges_in"]] == [booked]  # ... one link, most recent
    assert method.graph.timelines(afraid) == [(afraid, booked, sold)]


def test_a_sessions_memories_and_their_pairs_are_embedded_in_one_call_each(llm):
    """Linking session 2: one call for the memories (session 1's and its new ones, the top-k
    queries), one for the pairs' sentences the offline relation rule compares; the graph is the
    one of a call per pair."""
    from recallbench.testing.embedders import RecordingEmbedder as Calls

    batched, episode = Calls(), toy_episode()
    method = replay(Theanine(llm, batched), episode, upto=1)
    calls = len(batched.calls)
    method.observe(episode.sessions[1])
    assert len(batched.calls) - calls == 2 and method.link_log
    plain = Calls()
    single = Theanine(llm, plain)
    original = Theanine._relations

    def one_by_one(self, pairs):  # the relations pair by pair, each pair's cosine on its own
        return [original(self, [pair])[0] for pair in pairs]

    Theanine._relations = one_by_one  # type: ignore[method-assign]
    try:
        replay(single, episode)
    finally:
        Theanine._relations = original  # type: ignore[method-assign]
    assert single.link_log == method.link_log
    assert [m.attrs for m in single.snapshot()] == [m.attrs for m in method.snapshot()]


def test_no_linking_uses_unlabelled_similarity_edges(llm, embedder):
    calls = llm.usage.to_dict()["tasks"].get("theanine.link_relation", {}).get("calls", 0)
    method = replay(Theanine(llm, embedder, linking="temporal"), toy_episode())
    relations = {e.relation for e in method.graph.edges}
    assert relations == {SIMILAR}
    after = llm.usage.to_dict()["tasks"].get("theanine.link_relation", {}).get("calls", 0)
    assert after == calls  # no Fig. 22 call


def test_shuffled_timelines_keep_the_same_memory_set(llm, embedder):
    query = cruise_query(toy_episode())
    raw = replay(Theanine(llm, embedder, timelines="raw", k=3), toy_episode()).recall(query)
    shuffled = replay(Theanine(llm, embedder, timelines="shuffled", k=3), toy_episode())
    first, again = shuffled.recall(query), shuffled.recall(query)
    assert {m.item_id for m in first.items} == {m.item_id for m in raw.items}
    assert first.items == again.items  # seeded per test instance
    assert "(Changed)" not in first.text and len(first.text.splitlines()) == len(first.items)


def test_sampling_is_seeded_by_instance_and_differs_across_seeds(llm, embedder):
    g = Theanine(llm, embedder, n=1)
    g.reset(toy_episode())
    for node in ("a", "b", "c", "d"):
        g.graph.add(node)
    g.graph.link("a", "Cause", "b")
    g.graph.link("a", "Cause", "c")
    g.graph.link("a", "Cause", "d")
    query, options = cruise_query(toy_episode()), g.graph.timelines("a")
    assert len(options) == 3
    picks = []
    for seed in range(12):
        picks.append(timeline_rng(seed, query, "a").sample(options, 1)[0])
        again = timeline_rng(seed, query, "a").sample(options, 1)[0]
        assert again == picks[-1]  # same instance, same pick
    assert len(set(picks)) > 1
    other = replace(query, session_index=4)
    assert timeline_rng(0, query, "a").random() != timeline_rng(0, other, "a").random()


def test_no_leakage_and_probe_queries_do_not_change_state(llm, embedder):
    episode = toy_episode()
    method = replay(Theanine(llm, embedder), episode)
    past = {t.turn_id for s in episode.sessions[:2] for t in s.turns}
    before = method.snapshot()
    for query in (cruise_query(episode), replace(cruise_query(episode), question="Trip?")):
        recall = method.recall(query)
        assert recall.items and set(recall.source_ids()) <= past
        assert "seasickness" not in recall.text  # session 3 is not observed yet
    assert method.snapshot() == before


def test_offline_refinement_trims_to_the_most_relevant_events(embedder):
    events = [
        ("Dana likes tea.", None),
        ("Dana fears cruise ships.", "SameTopic"),
        ("Dana booked a cruise ship.", "Changed"),
        ("Dana drinks green tea.", "SameTopic"),
    ]
    out = extractive_refinement(
        events=events, anchor=2, query="cruise ship trip", embedder=embedder, max_events=2
    )
    assert out == "Dana fears cruise ships. Later, this changed: Dana booked a cruise ship."
    assert render_timeline(events[1:3]) == (
        "[Dana fears cruise ships.] - (Changed) - [Dana booked a cruise ship.]"
    )


def test_bad_options_raise_config_errors(llm, embedder):
    for bad in ({"timelines": "sorted"}, {"linking": "all"}, {"k": 0}, {"thresholds": {"x": 1}}):
        with pytest.raises(ConfigError):
            Theanine(llm, embedder, **bad)


@pytest.mark.parametrize(
    "stem", ["theanine", "theanine_no_linking", "theanine_no_refinement", "theanine_shuffled"]
)
def test_configs_select_the_ablation(stem, llm, embedder):
    method = hydra.utils.instantiate(
        load_group_config(CONF / f"{stem}.yaml"), llm=llm, embedder=embedder
    )
    expected = {
        "theanine": ("relation", "refined"),
        "theanine_no_linking": ("temporal", "refined"),
        "theanine_no_refinement": ("relation", "raw"),
        "theanine_shuffled": ("relation", "shuffled"),
    }[stem]
    assert (method.linking, method.retriever.mode) == expected
    assert (method.j, method.retriever.k, method.retriever.n) == (3, 3, 1)


def test_dynamic_k_matches_theanine_collected_count(llm, embedder):
    cfg = OmegaConf.load(CONF / "memory_retrieval_dynamic_k.yaml")
    dyn = hydra.utils.instantiate(cfg, llm=llm, embedder=embedder)
    episode = toy_episode()
    ours = replay(Theanine(llm, embedder, **cfg.theanine), episode)
    replay(dyn, episode)
    query = cruise_query(episode)
    collected = ours.recall(query).info["n_collected"]
    recall = dyn.recall(query)
    assert recall.info["k"] == collected == len(recall.items)
    assert collected > 1
    assert [m.text for m in dyn.snapshot()] == [m.text for m in ours.snapshot()]


# --- real LLM smoke run ------------------------------------------------------------------------


@pytest.mark.slow
def test_smollm2_completes_every_phase_on_one_msc_episode(real_data_dir):
    from recallbench.datasets import msc
    from recallbench.embed import MiniLMEmbedder
    from recallbench.llm import build_llm
    from recallbench.protocols.response import ResponseProtocol

    episode = msc.load(real_data_dir, split="test", max_sessions=3)[0]
    s3 = episode.sessions[2]
    episode = replace(episode, sessions=(*episode.sessions[:2], replace(s3, turns=s3.turns[:4])))
    cfg = yaml.safe_load((ROOT / "conf/generator/hf_smollm2.yaml").read_text())
    cfg["max_tokens"] = (
        64  # smoke run: the path end to end, not quality (256-token replies: >15 min)
    )
    llm = build_llm(cfg, None)
    method = Theanine(llm, MiniLMEmbedder(), max_sentences=4)
    started = time.perf_counter()
    result = ResponseProtocol(target_sessions=(3,), max_tokens=64).run_episode(episode, method, llm)
    elapsed = time.perf_counter() - started
    tasks = llm.usage.to_dict()["tasks"]
    print(f"\nsmollm2 THEANINE smoke: {elapsed:.0f} s; usage: {tasks}")
    print(f"link log: {method.link_log}")
    responses = [p for p in result.predictions if p.kind == "response"]
    for p in responses:
        print(f"pred: {p.output!r} | recalled {len(p.recalled)}")
    assert tasks["memory.summarize_session"]["calls"] == 3
    assert tasks["theanine.link_relation"]["calls"] >= 1
    assert tasks["theanine.refine_timeline"]["calls"] >= 1
    assert tasks["response"]["calls"] == len(responses) == 3
    assert all(p.output and p.failure is None for p in responses)
    snap = result.snapshots[-1][1]
    assert snap and all("component" in m.attrs and "edges_in" in m.attrs for m in snap)


def test_the_offline_reply_copies_from_the_timelines_the_prompt_shows(llm, embedder):
    # Table 2 "w/o Timeline Refinement" equalled THEANINE offline in every cell because the
    # extractive reply read the retrieved items, which refinement never changes. It now reads
    # the rendered timelines: an event the refinement trimmed cannot be copied.
    from recallbench.memory.theanine import timeline_units
    from recallbench.records import MemoryItem, Recall

    events = ["Dana likes green tea.", "Dana fears cruise ships.", "Dana booked a cruise ship."]
    items = tuple(MemoryItem(f"m{i}", t, "event", START, ()) for i, t in enumerate(events))
    raw = Recall(items, render_timeline([(e, "SameTopic") for e in events]))
    refined = Recall(
        items, "Dana fears cruise ships. Later, this changed: Dana booked a cruise ship."
    )
    query = Query("toy", 3, (Turn("q", "Eli", "Do you still drink green tea?"),), "Dana", START)
    assert timeline_units(refined.text) == events[1:]
    for mode, recall, reply in (
        ("raw", raw, "Dana likes green tea."),
        ("refined", refined, "I see. Tell me more about still."),  # the tea event was trimmed
        ("shuffled", raw, "Dana likes green tea."),  # shuffled events are the items themselves
    ):
        method = Theanine(llm, embedder, timelines=mode)
        assert method.offline_response(query, recall) == reply, mode
