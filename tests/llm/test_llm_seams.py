"""The LLM layer's typed seams: ``PromptTask[T]`` defaults, the ``Backend`` protocol's members on
every backend (each ability a member, never probed), and the public ``LLM.repairs`` (what
``cli.plan`` reads)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from recallbench.errors import ConfigError
from recallbench.llm import LLM, ExtractiveBackend, HFBackend, OpenAIBackend, PromptTask
from recallbench.llm.backends.gguf import smollm2_gguf
from recallbench.llm.task import text_reply
from recallbench.llm.types import Backend, BackendBase
from recallbench.testing.backend import ReplyBackend


def _members(protocol: type) -> set[str]:
    names = set(protocol.__annotations__)
    names |= {n for n, v in vars(protocol).items() if callable(v) or isinstance(v, property)}
    return {n for n in names if not n.startswith("_")}


def test_the_backend_protocol_declares_what_the_flow_calls():
    assert {"complete", "acomplete", "aowner", "aclose", "concurrency", "base_url"} <= _members(
        Backend
    )


@pytest.mark.parametrize("cls", [ExtractiveBackend, HFBackend, OpenAIBackend, ReplyBackend])
def test_every_backend_has_every_member_of_the_protocol(cls):
    source = inspect.getsource(cls)
    for name in sorted(_members(Backend)):
        assert hasattr(cls, name) or f"self.{name} =" in source, f"{cls.__name__}.{name}"
    for name in ("acomplete", "aowner", "aclose"):
        assert inspect.iscoroutinefunction(getattr(cls, name)), f"{cls.__name__}.{name}"


def _gguf() -> str:
    try:
        return str(smollm2_gguf())
    except ConfigError as exc:
        pytest.skip(f"no embedded GGUF: {exc}")


# Each backend as a run builds it; HF's context is given so that reading it loads no weights.
BUILT = {
    "extractive": lambda stub: ExtractiveBackend(),
    "openai": lambda stub: OpenAIBackend(
        "stub", api_key="k", base_url=stub.base_url, concurrency=3
    ),
    "hf": lambda stub: HFBackend("smollm2-135m-instruct", context_length=2048),
    "gguf": lambda stub: HFBackend(_gguf(), context_length=2048),
    "reply": lambda stub: ReplyBackend(),
}
# (offline, is_async, local, concurrency) each backend says it has
ABILITIES = {
    "extractive": (True, False, True, 1),
    "openai": (False, True, False, 3),
    "hf": (False, False, True, 1),
    "gguf": (False, False, True, 1),
    "reply": (False, False, True, 1),
}


@pytest.mark.parametrize("kind", sorted(BUILT))
def test_every_backend_answers_the_protocol_with_its_abilities(kind, stub):
    backend = BUILT[kind](stub)
    try:
        assert isinstance(backend, Backend) and isinstance(backend, BackendBase)
        got = (backend.offline, backend.is_async, backend.local, backend.concurrency)
        assert got == ABILITIES[kind]
        assert isinstance(backend.context_length, int) and isinstance(backend.name, str)
    finally:
        backend.close()


def test_an_object_without_an_ability_is_not_a_backend():
    class Bare:  # answers calls but says nothing of offline, is_async, concurrency...
        name, model, context_length = "bare", "m", 10

        def complete(self, messages, dec):
            raise NotImplementedError

    assert not isinstance(Bare(), Backend)
    assert isinstance(type("Based", (BackendBase, Bare), {"count_tokens": len})(), Backend)


def test_a_task_without_parser_is_free_text_and_replace_keeps_its_fields():
    task = PromptTask("t.free", "Say {x}", offline=lambda x: f"  {x}  ")
    assert task.parse is text_reply and task.fallback is None and task.stage == "generate"
    seeded = dataclasses.replace(task, seed=3)
    assert (seeded.seed, seeded.template, seeded.parse) == (3, "Say {x}", text_reply)
    llm = LLM(ExtractiveBackend())
    assert llm.run(task, x="hi").value == "hi"  # stripped by text_reply


def test_positional_and_keyword_construction_agree():
    def parse(reply: str) -> int:
        return int(reply)

    def offline(**_: object) -> str:
        return "7"

    a = PromptTask("t.n", "n?", parse, offline, -1, "memory", 8)
    b = PromptTask(
        name="t.n",
        template="n?",
        parse=parse,
        offline=offline,
        fallback=-1,
        stage="memory",
        max_tokens=8,
    )
    assert a == b and LLM(ExtractiveBackend()).run(a).value == 7


def test_repairs_is_public_and_described():
    llm = LLM(ExtractiveBackend(), repairs=2)
    assert llm.repairs == 2 and llm.describe()["repairs"] == 2
    assert llm.describe()["base_url"] is None
