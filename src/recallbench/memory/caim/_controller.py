"""CAIM Memory Controller (App. A.1, verbatim prompts): the three A/B decisions, their parser and
the offline rules the ``extractive`` backend uses."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from recallbench.llm.shapes import Choice
from recallbench.llm.task import ParseError, PromptTask
from recallbench.memory.caim._dates import resolve_dates
from recallbench.memory.caim._tasks import SOURCE_A
from recallbench.text import words

# --- A.1 Memory Controller ---------------------------------------------------------------
INFORMATION_NECESSARY_PROMPT = (
    "Given a user command, determine whether answering the request requires recalling specific "
    "preferences or details shared earlier in the conversation that directly impact the "
    "response, in addition to understanding the current conversation context. Choose 'A' if "
    "previous information (e.g., preferences, likes, restrictions, recommendations) is crucial "
    "for providing a relevant or personalized response. Choose 'B' if the current request can be "
    "fully addressed without referring to prior context or preferences. Do not explain your "
    "choice, just choose 'A' or 'B'."
)
RETRIEVAL_AND_CONVERSATION_PROMPT = (
    "Given a user command, determine whether answering the request requires both recalling "
    "specific information or preferences shared in past sessions (historical memory) and "
    "understanding details or context from the current conversation (conversation context). "
    "Choose 'A' if both memory retrieval and the current conversation context are required to "
    "fully address the request. Choose 'B' if only one of these is sufficient. Do not explain "
    "your choice, just choose 'A' or 'B'."
)
RETRIEVAL_PROMPT = (
    "Given a user command, determine whether executing the command requires knowledge of "
    "historical or previous information about the user (such as data or context from earlier "
    "interactions) or whether it only requires understanding of the ongoing conversation "
    "content (such as recent questions and answers within the current session). Answer 'A' if "
    "it requires historical or previously stored information that is not part of the current "
    "conversation, or 'B' if it only requires information from the current conversation, "
    "including questions or context from the current session. Do not explain your choice, just "
    "choose 'A' or 'B'."
)

CHOICE = re.compile(r"^\W*\(?([AB])\b\)?")
PERSONAL = frozenset(
    "i i'm i've i'd i'll me my mine myself we we're we've our ours us you you're you've your "
    "yours yourself".split()
)
FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself".split())
# Words that point back to earlier interactions (decision 3) or to the ongoing talk (decision 2).
PAST_CUES = frozenset(
    """remember recall remind reminded told tell said say mentioned mention shared share
    recommended recommend suggested suggest advised advice discussed talked talk spoke asked
    before earlier previously previous ago last yesterday first once did was were had""".split()
)
ANAPHORA = frozenset("it that those these there he she they them his her their".split())


# --- controller --------------------------------------------------------------------------------


def parse_choice(reply: str) -> str:
    """Parse an A/B decision: the first standalone A or B (e.g. "A", "(B)", "B."), else error."""
    m = CHOICE.match(reply.strip())
    if not m:
        raise ParseError(f"expected 'A' or 'B', got {reply[:40]!r}")
    return m.group(1)


def offline_information_necessary(command: str, today: str, **_: object) -> str:
    """A iff the command refers to the speaker or addressee (I/my/we/you...) or to a date.

    A general-knowledge question ("What is the content of the movie Inception?") has neither and
    is answered from the model's own knowledge (CAIM sec. 3.3.1).
    """
    ws = set(words(command))
    return "A" if ws & PERSONAL or resolve_dates(command, date.fromisoformat(today)) else "B"


def offline_retrieval_and_conversation(command: str, has_history: bool = False, **_: object) -> str:
    """A iff the current session has turns, the command points back to the past (a past cue)
    and to something in the ongoing talk (an anaphor: it, that, she ...)."""
    ws = set(words(command))
    return "A" if has_history and ws & PAST_CUES and ws & ANAPHORA else "B"


def offline_retrieval(command: str, today: str, **_: object) -> str:
    """A iff the command points back to earlier interactions (a past cue, or a date before today)
    or asks about the user's own stable details (a first-person question); else B (STM only)."""
    ws = set(words(command))
    day = date.fromisoformat(today)
    past_dates = [d for d in resolve_dates(command, day) if d < day]
    asks_self = command.rstrip().endswith("?") and ws & FIRST_PERSON
    return "A" if ws & PAST_CUES or past_dates or asks_self else "B"


def controller_task(name: str, prompt: str, offline: Callable[..., str]) -> PromptTask[str]:
    """A/B decision task; an unparseable reply falls back to 'A' (retrieve: safer to look)."""
    return PromptTask(
        name=f"caim.controller.{name}",
        template=(("system", prompt), ("user", "{command}")),
        parse=parse_choice,
        offline=offline,
        fallback="A",
        stage="memory",
        max_tokens=4,
        source=SOURCE_A.format(".1"),
        reply=Choice(("A", "B")),
    )


INFORMATION_NECESSARY_TASK = controller_task(
    "information_necessary", INFORMATION_NECESSARY_PROMPT, offline_information_necessary
)
RETRIEVAL_AND_CONVERSATION_TASK = controller_task(
    "retrieval_and_conversation",
    RETRIEVAL_AND_CONVERSATION_PROMPT,
    offline_retrieval_and_conversation,
)
RETRIEVAL_TASK = controller_task("retrieval", RETRIEVAL_PROMPT, offline_retrieval)
