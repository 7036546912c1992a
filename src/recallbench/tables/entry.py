"""A ``table:`` block's rows, columns and metrics as typed records (``tables.spec`` parses them).

A row or column (:class:`Entry`) has a ``label``; where a cell reads a run summary (``session``,
``qsession``, ``value``, ``subset``, ``read``; ``stage`` and ``quantile`` for ``tables.latency``);
a builder's per-row switches (``random``, ``annotators``, ``metric``); and ``select``, every other
key: the config groups, dotted config paths and aliases (``logs``) that select its runs
(``analysis.select``). A metric's entry (:class:`MetricSpec`) has ``label``, ``scale`` and
``digits``, None where the block leaves the builder's default.

``logs`` is a selector (the alias of ``dataset.options.system``: the runs that replayed a LUFY
system's conversation logs) that LUFY's builders of the logs themselves also read as the system
whose logs to load (:attr:`Entry.logs`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from recallbench.errors import did_you_mean

__all__ = [
    "FLAG_KEYS",
    "METRIC_KEYS",
    "PLACE_KEYS",
    "Entry",
    "MetricSpec",
    "parse_entries",
    "parse_entry",
    "parse_metrics",
]

# where a cell reads a summary (stage, quantile: tables.latency); label is every entry's name
PLACE_KEYS = frozenset(
    {"label", "session", "qsession", "value", "subset", "read", "stage", "quantile"}
)
FLAG_KEYS = frozenset({"random", "annotators", "metric"})  # a builder's per-row switches
METRIC_KEYS = frozenset({"label", "scale", "digits"})
_TEXT = ("qsession", "value", "subset", "stage", "quantile", "metric")  # string-valued keys

Fail = Callable[[str, str], Exception]  # (key, message) -> the error naming the file


@dataclass(frozen=True)
class Entry:
    """A row or column of a table: its label, where its cells read, its switches, its runs."""

    label: str
    select: Mapping[str, object] = field(default_factory=dict)  # the keys that select runs
    session: int | None = None  # per_session[session] of a metric's summary entry
    qsession: str | None = None  # per_question_session["s/q"] (LUFY Tables 16-18)
    value: str | None = None  # the summary field read (None: the table's)
    subset: str | None = None  # subsets[subset] of the entry (CareCall's memory turns)
    read: Mapping[str, str] = field(default_factory=dict)  # a metric read under another name
    stage: str | None = None  # tables.latency: the timed stage ...
    quantile: str | None = None  # ... and its quantile (p50, p95)
    random: bool = False  # LUFY agreement: the random baseline's row
    annotators: bool = False  # LUFY agreement: the annotators' own agreement
    metric: str | None = None  # CAIM agreement: the metric the row's raters scored

    @property
    def logs(self) -> str | None:
        """The LUFY system whose conversation logs the row reads (its ``logs:`` selector)."""
        system = self.select.get("logs")
        return None if system is None else str(system)


@dataclass(frozen=True)
class MetricSpec:
    """A metric's ``metrics:`` entry: its shown label, scale and decimals (None: the default)."""

    label: str | None = None
    scale: int | float | None = None  # ours times scale is in the paper's unit
    digits: int | None = None

    def label_or(self, default: str) -> str:
        """The label, ``default`` (usually the metric's name) when the block gives none."""
        return default if self.label is None else self.label

    def scale_or(self, default: int | float = 1) -> int | float:
        """The scale, ``default`` when the block gives none."""
        return default if self.scale is None else self.scale

    def digits_or(self, default: int) -> int:
        """The decimals shown, the builder's ``default`` when the block gives none."""
        return default if self.digits is None else self.digits


def parse_entries(
    value: object, key: str, groups: Collection[str], fail: Fail
) -> tuple[Entry, ...]:
    """Validate ``rows`` or ``columns`` (``key``): a list of entries with unique labels."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise fail(key, f"expected a list of mappings with a label, got {type(value).__name__}")
    entries: list[Entry] = []
    for i, raw in enumerate(value):
        where = f"{key}[{i}]"
        entry = parse_entry(raw, where, fail, groups)
        if entry.label in {e.label for e in entries}:
            raise fail(where, f"label {entry.label!r} appears twice")
        entries.append(entry)
    return tuple(entries)


def parse_entry(
    raw: object, where: str, fail: Fail, groups: Collection[str] | None = None
) -> Entry:
    """Build one entry; ``groups``: the selecting keys allowed besides dotted paths (None: any)."""
    if not isinstance(raw, Mapping) or "label" not in raw:
        raise fail(where, f"expected a mapping with a 'label', got {raw!r}")
    select: dict[str, object] = {}
    for name, value in raw.items():
        name = str(name)
        if name in PLACE_KEYS | FLAG_KEYS:
            continue
        if groups is not None and "." not in name and name not in groups:
            known = [*groups, *sorted(PLACE_KEYS | FLAG_KEYS)]
            raise fail(f"{where}.{name}", str(did_you_mean("row/column key", name, known).args[0]))
        select[name] = value
    text = {k: _text(raw, k, where, fail) for k in _TEXT}
    return Entry(
        label=str(raw["label"]),
        select=select,
        session=_session(raw.get("session"), where, fail),
        read=_read(raw.get("read"), where, fail),
        random=_flag(raw, "random", where, fail),
        annotators=_flag(raw, "annotators", where, fail),
        qsession=text["qsession"],
        value=text["value"],
        subset=text["subset"],
        stage=text["stage"],
        quantile=text["quantile"],
        metric=text["metric"],
    )


def _text(raw: Mapping[object, object], key: str, where: str, fail: Fail) -> str | None:
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value
    raise fail(f"{where}.{key}", f"expected a string, got {value!r}")


def _session(value: object, where: str, fail: Fail) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise fail(f"{where}.session", f"expected a session number, got {value!r}")


def _flag(raw: Mapping[object, object], key: str, where: str, fail: Fail) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise fail(f"{where}.{key}", f"expected true or false, got {value!r}")
    return value


def _read(value: object, where: str, fail: Fail) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise fail(f"{where}.read", f"expected a mapping metric -> summary name, got {value!r}")
    return {str(k): v for k, v in value.items()}


def parse_metrics(value: object, fail: Fail) -> dict[str, MetricSpec]:
    """Validate ``metrics``: metric -> {label, scale, digits} (each optional)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(
            "metrics", f"expected a mapping metric -> {{label, scale, digits}}, got {value!r}"
        )
    out = {}
    for name, mspec in value.items():
        mspec = {} if mspec is None else mspec
        if not isinstance(mspec, Mapping) or not set(mspec) <= METRIC_KEYS:
            raise fail(
                f"metrics.{name}", f"expected keys among {sorted(METRIC_KEYS)}, got {mspec!r}"
            )
        scale = mspec.get("scale")
        if "scale" in mspec and (not isinstance(scale, int | float) or isinstance(scale, bool)):
            raise fail(f"metrics.{name}.scale", f"expected a number, got {mspec['scale']!r}")
        digits = mspec.get("digits", 0)
        if not isinstance(digits, int) or isinstance(digits, bool) or digits < 0:
            raise fail(f"metrics.{name}.digits", f"expected an integer >= 0, got {digits!r}")
        label = mspec.get("label")
        if label is not None and not isinstance(label, str):
            raise fail(f"metrics.{name}.label", f"expected a string, got {label!r}")
        out[str(name)] = MetricSpec(label, scale, mspec.get("digits"))
    return out
