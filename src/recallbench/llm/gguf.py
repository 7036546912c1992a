"""Read a GGUF file's header and build its byte-level BPE tokenizer without converting weights.

The ``gguf`` package's reader also indexes every tensor (~2-3 s for SmolLM2 here); the
tokenizer lives in the key-value header, which this reads in ~0.1 s.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

from recallbench.errors import ConfigError

_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                 10: "<Q", 11: "<q", 12: "<d"}  # fmt: skip
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def read_gguf_metadata(path: Path, keys: set[str]) -> dict[str, Any]:
    """Read the values of ``keys`` from a GGUF file's key-value header (no tensors touched).

    The ``gguf`` package's reader also indexes every tensor (~2-3 s here); this reads only the
    header, which holds the tokenizer (~0.1 s).
    """
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ConfigError(f"{path}: not a GGUF file (magic {bytes(buf[:4])!r})")
        _version, _n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        pos, out = 24, {}

        def string(pos: int) -> tuple[str, int]:
            (n,) = struct.unpack_from("<Q", buf, pos)
            return buf[pos + 8 : pos + 8 + n].decode("utf-8", "replace"), pos + 8 + n

        def value(kind: int, pos: int) -> tuple[Any, int]:
            if kind == _GGUF_STRING:
                return string(pos)
            if kind == _GGUF_ARRAY:
                item, n = struct.unpack_from("<IQ", buf, pos)
                pos += 12
                items = []
                for _ in range(n):
                    v, pos = value(item, pos)
                    items.append(v)
                return items, pos
            fmt = _GGUF_SCALARS[kind]
            return struct.unpack_from(fmt, buf, pos)[0], pos + struct.calcsize(fmt)

        for _ in range(n_kv):
            key, pos = string(pos)
            (kind,) = struct.unpack_from("<I", buf, pos)
            val, pos = value(kind, pos + 4)
            if key in keys:
                out[key] = val
    return out


def gguf_tokenizer(path: Path) -> Any:
    """Build a ``tokenizers.Tokenizer`` from a GPT-2-style (byte-level BPE) GGUF tokenizer.

    Matches transformers' own GGUF conversion for SmolLM2 (tested token for token).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    meta = read_gguf_metadata(
        path, {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
               "tokenizer.ggml.token_type"},
    )  # fmt: skip
    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise ConfigError(
            f"{path}: tokenizer model {meta.get('tokenizer.ggml.model')!r}, expected 'gpt2' "
            "(byte-level BPE)"
        )
    tokens = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, meta["tokenizer.ggml.token_type"], strict=True)
               if kind == 3]  # fmt: skip
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tok


def hf_tokenizer_from_gguf(path: Path) -> Any:
    """Return a transformers fast tokenizer (special tokens, chat template) for a byte-level BPE
    GGUF in ~0.5 s; transformers' own GGUF conversion gives the same ids but takes ~9 s here."""
    from transformers import PreTrainedTokenizerFast

    meta = read_gguf_metadata(
        path, {"tokenizer.chat_template", "tokenizer.ggml.bos_token_id",
               "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
               "tokenizer.ggml.padding_token_id"},
    )  # fmt: skip
    tok = gguf_tokenizer(path)
    special = {
        f"{role}_token": tok.id_to_token(meta[f"tokenizer.ggml.{key}_token_id"])
        for role, key in (("bos", "bos"), ("eos", "eos"), ("unk", "unknown"), ("pad", "padding"))
        if f"tokenizer.ggml.{key}_token_id" in meta
    }
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, chat_template=meta.get("tokenizer.chat_template"), **special
    )
