"""A reply pattern as a llama.cpp GBNF grammar (the ``grammar`` field of its server).

llama.cpp's server (and ``llama-cpp-python``'s) constrains decoding with a GBNF grammar; it
turns JSON schemas into GBNF itself but takes no regular expression. ``regex_to_gbnf`` parses
the pattern with Python's own regex parser (``re._parser``, the stdlib's, so a pattern means
here exactly what it means to ``re.fullmatch``) and writes its syntax tree as GBNF rules:
literals become quoted strings, classes and ``\\d \\w \\s .`` become character ranges,
groups and alternation become parenthesized alternatives, and repeats become ``* + ? {m,n}``.
Anchors at the ends are dropped (a grammar always matches the whole reply); lookarounds,
backreferences and flags have no GBNF equivalent and raise ``ValueError``.

llama.cpp expands a bounded repeat ``x{m,n}`` into ``n`` rules and refuses a grammar ("exceeds
sane defaults") when a repeat's bound reaches 2000 or when the rules a repeated group creates
times the repeat's bound reach 2000 (``llama-grammar.cpp``, ``MAX_REPETITION_THRESHOLD``).
COMEDY's session reply, ``[^\\n]{5,200}`` lines repeated ``{0,11}``, was 196 rules x 11 in one
group: refused, and llama-cpp-python's server died with it (``make test-server``). So the
body of every bounded repeat that is a group is written as a rule of its own, defined before
``root`` (``rep1 ::= ...`` then ``rep1{0,11}``): the repeat then multiplies one rule, and every
bound of the pattern is kept exactly.

Deviation: an upper bound of 2000 or more (no reply task declares one) is written open above
(``{5,}``); ``max_tokens`` and the task's parser still bound the reply. A lower bound of 2000
or more raises ``ValueError``.

Special, control and non-ASCII characters are written as ``\\xNN``/``\\uNNNN`` escapes, the only
escapes llama.cpp's grammar parser takes for ``-`` and ``^`` inside classes (it rejects ``\\-``).
"""

from __future__ import annotations

import contextvars
import importlib
import re
from typing import Any

# The stdlib's regex parser (Python 3.11+; private, untyped in typeshed, stable since 3.11).
C: Any = importlib.import_module("re._constants")
sre: Any = importlib.import_module("re._parser")

MAX_REPETITIONS = 1999  # llama.cpp refuses 2000 (MAX_REPETITION_THRESHOLD; module docstring)
# body -> name of the rules hoisted out of repeats while one pattern is written
_RULES: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("rules")
_DIGIT = [(48, 57)]
_WORD = [(48, 57), (65, 90), (95, 95), (97, 122)]
_SPACE = [(9, 13), (32, 32)]
_CATEGORIES: dict[Any, tuple[list[tuple[int, int]], bool]] = {
    C.CATEGORY_DIGIT: (_DIGIT, False),
    C.CATEGORY_NOT_DIGIT: (_DIGIT, True),
    C.CATEGORY_WORD: (_WORD, False),
    C.CATEGORY_NOT_WORD: (_WORD, True),
    C.CATEGORY_SPACE: (_SPACE, False),
    C.CATEGORY_NOT_SPACE: (_SPACE, True),
}


def _char(code: int, special: str = '"\\') -> str:
    """One character inside a GBNF string (or class: more ``special`` characters), escaped
    when it is special, a control character or not ASCII."""
    ch = chr(code)
    if 0x20 <= code < 0x7F and ch not in special:
        return ch
    return f"\\x{code:02X}" if code < 0x80 else f"\\u{code:04X}"


def _literal(codes: list[int]) -> str:
    return '"' + "".join(_char(c) for c in codes) + '"'


_IN_CLASS = '"\\[]^-'


def _char_class(ranges: list[tuple[int, int]], negate: bool) -> str:
    body = "".join(
        _char(a, _IN_CLASS) if a == b else f"{_char(a, _IN_CLASS)}-{_char(b, _IN_CLASS)}"
        for a, b in ranges
    )
    return f"[{'^' if negate else ''}{body}]"


def _class_ranges(items: list[tuple[Any, Any]]) -> tuple[list[tuple[int, int]], bool]:
    """The ranges of a ``[...]`` item list and whether it is negated."""
    ranges: list[tuple[int, int]] = []
    negate = False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            ranges.append((arg, arg))
        elif op is C.RANGE:
            ranges.append(arg)
        elif op is C.CATEGORY and arg in _CATEGORIES and not _CATEGORIES[arg][1]:
            ranges.extend(_CATEGORIES[arg][0])
        else:
            raise ValueError(f"character class item {op} {arg} has no GBNF equivalent")
    return ranges, negate


def _repeat(lo: int, hi: int, item: str) -> str:
    if lo > MAX_REPETITIONS:
        raise ValueError(f"a lower bound of {lo} repeats has no llama.cpp GBNF equivalent")
    unbounded = hi == C.MAXREPEAT or hi > MAX_REPETITIONS
    if (lo, unbounded) == (0, True):
        return f"{item}*"
    if (lo, unbounded) == (1, True):
        return f"{item}+"
    if (lo, hi) == (0, 1):
        return f"{item}?"
    if item.startswith("("):  # a group repeated {m,n}: its own rule (module docstring)
        item = _hoist(item[1:-1])
    if lo == hi:
        return f"{item}{{{lo}}}"
    return f"{item}{{{lo},}}" if unbounded else f"{item}{{{lo},{hi}}}"


def _hoist(body: str) -> str:
    """The name of a rule whose body is ``body`` (one rule per distinct body)."""
    rules = _RULES.get()
    return rules.setdefault(body, f"rep{len(rules) + 1}")


_REPEATS = tuple(
    op
    for op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None))
    if op is not None
)


def _atom(op: Any, arg: Any) -> str:
    if op is C.NOT_LITERAL:
        return _char_class([(arg, arg)], True)
    if op is C.ANY:
        return _char_class([(10, 10)], True)  # "." without DOTALL: anything but a newline
    if op is C.IN:
        return _char_class(*_class_ranges(arg))
    if op is C.CATEGORY:
        ranges, negate = _CATEGORIES[arg]
        return _char_class(ranges, negate)
    if op is C.BRANCH:
        return "(" + " | ".join(_sequence(alt) for alt in arg[1]) + ")"
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, sub = arg
        if add_flags or del_flags:
            raise ValueError("inline flags have no GBNF equivalent")
        return _element(sub)
    if op in _REPEATS:
        lo, hi, sub = arg
        return _repeat(lo, hi, _element(sub))
    raise ValueError(f"regex construct {op} has no GBNF equivalent")


def _element(items: Any) -> str:
    """``items`` as ONE grammar element: parenthesized unless it already is one (a single
    class, group, alternation or string)."""
    ops = [op for op, _ in items if op is not C.AT]
    single = len(ops) == 1 or (ops and all(op is C.LITERAL for op in ops))
    text = _sequence(items)
    return text if single and not any(op in _REPEATS for op in ops) else f"({text})"


def _sequence(items: Any) -> str:
    parts: list[str] = []
    run: list[int] = []
    for op, arg in items:
        if op is C.LITERAL:
            run.append(arg)
            continue
        if run:
            parts.append(_literal(run))
            run = []
        if op is C.AT:
            if arg in (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_END, C.AT_END_STRING):
                continue  # a grammar matches the whole reply anyway
            raise ValueError(f"anchor {arg} has no GBNF equivalent")
        parts.append(_atom(op, arg))
    if run:
        parts.append(_literal(run))
    return " ".join(parts) if parts else '""'


def regex_to_gbnf(pattern: str) -> str:
    """Return a GBNF grammar whose ``root`` matches exactly what ``re.fullmatch(pattern)`` does
    (but for upper bounds of 2000 repeats or more: module docstring)."""
    tree = sre.parse(pattern)
    if tree.state.flags & ~(re.UNICODE | getattr(re, "U", 0)):
        raise ValueError(f"regex flags in {pattern!r} have no GBNF equivalent")
    token = _RULES.set({})
    try:
        root = _sequence(tree)
        rules = "".join(f"{name} ::= {body}\n" for body, name in _RULES.get().items())
    finally:
        _RULES.reset(token)
    return f"{rules}root ::= {root}\n"


def choice_to_gbnf(labels: tuple[str, ...] | list[str]) -> str:
    """Return a GBNF grammar whose ``root`` is exactly one of ``labels``."""
    return "root ::= " + " | ".join(_literal([ord(c) for c in label]) for label in labels) + "\n"
