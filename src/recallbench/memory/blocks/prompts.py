"""The response prompts of the memory baselines, by ``prompt_style``.

- ``theanine``: THEANINE Fig. 24 (verbatim), the memory in its Memory slot;
- ``carecall``: a memory-grounded continuation prompt for CareCall (ours; the paper prints none);
- ``timerag``: TimeRAG-Memory's sec. 3.5 template (verbatim), the memory as its Memory block.
"""

from __future__ import annotations

from typing import Literal

from recallbench.errors import ConfigError
from recallbench.memory._base import Message, render_history
from recallbench.records import Query

NO_MEMORY = "(none)"  # the THEANINE Memory slot of a method without memory
PromptStyle = Literal["theanine", "carecall", "timerag"]
PROMPT_STYLES = ("theanine", "carecall", "timerag")
# TimeRAG-Memory sec. 3.5, verbatim: "System: You are a helpful assistant.\nMemory (use if
# relevant):\n- [slot] value (time=t)\n...\nDialogue: ...\nAssistant:" (a system and a user
# message). ``prompt_style: timerag`` gives a baseline this template, as the paper does
# ("all variants share the same generator, prompt template, and decoding parameters", sec. 4).
TIMERAG_SYSTEM = "You are a helpful assistant."
TIMERAG_USER = "Memory (use if relevant):\n{memory}\nDialogue: {dialogue}\nAssistant:"

# THEANINE Fig. 24 ("Prompt for Timeline-augmented Response Generation"), verbatim; only the
# placeholders {refined_timelines}, {current dialogue context} and {speaker tag} are renamed to
# {memory}, {dialogue} and {speaker} for str.format. The baselines fill Memory with their memory.
THEANINE_RESPONSE_PROMPT = (
    "Generate the most plausible next response based on the current conversation. You can refer "
    "to the memory, but you should ignore the memory if it mislead the next response. Do not put "
    "too much information in the next response.\n\n"
    "Your response should follow the style of the conversation.\n\n"
    "Memory: {memory}\n\n"
    "Current conversation: {dialogue}\n\n"
    "Next Response: {speaker}:"
)
THEANINE_RESPONSE_SOURCE = "THEANINE (Ong et al., NAACL 2025) App. H Fig. 24, verbatim"

# Ours. Bae et al. (2022) fine-tune HyperCLOVA on "M concatenated before D_t" (sec. 4.1) and
# print no prompt; this continuation prompt puts the memory (or the previous sessions, for
# "History accumulate") before the current session, and nothing for "Without memory".
CARECALL_RESPONSE_PROMPT = (
    "Continue the conversation as {speaker}. Reply with {speaker}'s next utterance only.\n\n"
    "{context}Current session:\n{dialogue}\n{speaker}:"
)
CARECALL_RESPONSE_SOURCE = "ours: Bae et al. 2022 sec. 4.1 input layout (memory before D_t)"


def check_prompt_style(style: str) -> str:
    """Return ``style`` if it is a known prompt style, else raise ConfigError."""
    if style not in PROMPT_STYLES:
        raise ConfigError(f"prompt_style {style!r} unknown (options: {', '.join(PROMPT_STYLES)})")
    return style


def response_messages(
    style: str, memory: str, query: Query, memory_label: str = "Memory"
) -> list[Message]:
    """Render the response prompt of ``style`` with ``memory`` for ``query`` as one user message."""
    dialogue = render_history(query.history)
    if (
        style == "timerag"
    ):  # the method's memory text as the Memory block (Full-History: past turns)
        user = TIMERAG_USER.format(memory=memory, dialogue=dialogue)
        return [{"role": "system", "content": TIMERAG_SYSTEM}, {"role": "user", "content": user}]
    if style == "theanine":
        text = THEANINE_RESPONSE_PROMPT.format(
            memory=memory or NO_MEMORY, dialogue=dialogue, speaker=query.speaker
        )
    else:
        context = f"{memory_label}:\n{memory}\n\n" if memory else ""
        text = CARECALL_RESPONSE_PROMPT.format(
            context=context, dialogue=dialogue, speaker=query.speaker
        )
    return [{"role": "user", "content": text}]
