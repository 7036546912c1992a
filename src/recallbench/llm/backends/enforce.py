"""Constrained decoding for the in-process ``hf`` backend (``generator.structured: local``).

The maintained library that installs here is lm-format-enforcer (PyPI ``lm-format-enforcer``,
pure Python + ``interegular``): a character-level parser of a regular expression or a JSON
schema that tells, at each step, which tokens keep the reply inside the shape. transformers
applies it through ``generate(prefix_allowed_tokens_fn=...)``. A choice becomes the alternation
of its labels, a pattern its regex, a JSON shape its schema (the reply forms of ``vllm``).

Deviation from the library's own recipe: its ``integrations.transformers`` module imports
``transformers.tokenization_utils``, which transformers 5 removed, so the per-tokenizer table
(every regular token's text, and whether it starts a word) is built here the way that module
builds it, and the library's core (``TokenEnforcer``) does the rest. The table takes a few seconds
for a 49k vocabulary and is kept per tokenizer. outlines (Rust core, many dependencies) and
transformers-cfg (EBNF grammars only) were the other candidates; lm-format-enforcer is the one
that takes regexes and JSON schemas with nothing compiled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from recallbench.errors import ConfigError
from recallbench.llm.shapes import Choice, JsonReply, Pattern, Shape

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

_TABLES: dict[int, Any] = {}
_LOCK = threading.Lock()
INSTALL = 'pip install "lm-format-enforcer>=0.11,<0.12"'


def _library() -> Any:
    try:
        import lmformatenforcer
    except ImportError:
        raise ConfigError(
            "generator.structured=local needs lm-format-enforcer, which is not installed: "
            f"{INSTALL} (or set generator.structured=off)"
        ) from None
    return lmformatenforcer


def _token_table(tokenizer: Any) -> Any:
    """lm-format-enforcer's ``TokenEnforcerTokenizerData`` for ``tokenizer`` (built once)."""
    lib = _library()
    with _LOCK:
        table = _TABLES.get(id(tokenizer))
        if table is not None:
            return table
        vocab = len(tokenizer)
        special = set(tokenizer.all_special_ids)
        zero = tokenizer.encode("0", add_special_tokens=False)[-1]
        tokens = [t for t in range(vocab) if t not in special]
        # Decoding after "0" keeps a word-initial token's leading space (the library's way);
        # batch_decode runs in the fast tokenizer's Rust code (20x faster than one by one).
        after_zero = [text[1:] for text in tokenizer.batch_decode([[zero, t] for t in tokens])]
        alone = tokenizer.batch_decode([[t] for t in tokens])
        regular = [
            (t, a, len(a) > len(b)) for t, a, b in zip(tokens, after_zero, alone, strict=True)
        ]

        def decode(tokens: list[int]) -> str:
            return str(tokenizer.decode(tokens)).rstrip("\ufffd")

        table = lib.TokenEnforcerTokenizerData(
            regular, decode, tokenizer.eos_token_id, False, vocab
        )
        _TABLES[id(tokenizer)] = table
        return table


def _parser(shape: Shape) -> Any:
    lib = _library()
    if isinstance(shape, (Choice, Pattern)):
        return lib.RegexParser(shape.regex())
    if isinstance(shape, JsonReply):
        return lib.JsonSchemaParser(shape.json_schema())
    raise ValueError(f"no lm-format-enforcer parser for {shape!r}")


def allowed_tokens_fn(
    tokenizer: PreTrainedTokenizerBase, shape: Shape, prompt_length: int
) -> Callable[[int, torch.Tensor], list[int]]:
    """``prefix_allowed_tokens_fn`` for ``generate``: the tokens that keep the reply in ``shape``.

    Only the generated part (after ``prompt_length`` tokens) is shown to the enforcer.
    """
    lib = _library()
    enforcer = lib.TokenEnforcer(_token_table(tokenizer), _parser(shape))

    def allowed(_batch: int, ids: torch.Tensor) -> list[int]:
        return list(enforcer.get_allowed_tokens(ids[prompt_length:].tolist()).allowed_tokens)

    return allowed
