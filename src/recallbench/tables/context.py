"""What a table builder receives (``TableContext``) and returns (``BuiltTable``).

A builder is ``builder(spec: TableSpec, ctx: TableContext) -> BuiltTable`` (``tables.engine``).
What needs a model (an LLM, a judge, an embedder) comes from the typed factories in ``ctx``,
which only the table command (``recallbench.cli.table.table_services``) fills.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from recallbench.errors import ConfigError, DataNotFoundError
from recallbench.run.read import RunRecord
from recallbench.tables.render import Cell

if TYPE_CHECKING:
    from recallbench.embed import TextEmbedder
    from recallbench.judges import Judge
    from recallbench.judges.caim import CaimJudge
    from recallbench.llm.protocol import LLMClient

__all__ = ["BuiltTable", "Factory", "FactoryName", "TableContext"]

# The model factories a table command gives its builders (``cli.table.table_services``): an
# LLM and a QA judge as the config names them, a CAIM judge and an embedder from a config node.
LLMFactory = Callable[[], "LLMClient"]
JudgeFactory = Callable[[], "Judge"]
CaimJudgeFactory = Callable[[Mapping[str, object]], "CaimJudge"]
EmbedderFactory = Callable[[Mapping[str, object]], "TextEmbedder"]
Factory = LLMFactory | JudgeFactory | CaimJudgeFactory | EmbedderFactory
FactoryName = Literal["make_llm", "make_judge", "make_caim_judge", "make_embedder"]


@dataclass(frozen=True)
class TableContext:
    """What a builder receives besides its spec: folders, runs, config and model factories.

    ``config`` is the composed experiment config as plain values; ``make_llm()`` builds the
    configured generator, ``make_judge()`` the configured judge, ``make_caim_judge(cfg)`` a
    CAIM judge and ``make_embedder(cfg)`` an embedder from their config mappings.
    """

    results_dir: Path
    data_dir: Path | None = None
    runs: tuple[RunRecord, ...] = ()
    config: Mapping[str, object] = field(default_factory=dict)
    make_llm: LLMFactory | None = None
    make_judge: JudgeFactory | None = None
    make_caim_judge: CaimJudgeFactory | None = None
    make_embedder: EmbedderFactory | None = None

    @overload
    def need(self, name: Literal["make_llm"]) -> LLMFactory: ...
    @overload
    def need(self, name: Literal["make_judge"]) -> JudgeFactory: ...
    @overload
    def need(self, name: Literal["make_caim_judge"]) -> CaimJudgeFactory: ...
    @overload
    def need(self, name: Literal["make_embedder"]) -> EmbedderFactory: ...

    def need(self, name: FactoryName) -> Factory:
        """Return the factory ``name``; an error when the command did not provide it."""
        factories: dict[str, Factory | None] = {
            "make_llm": self.make_llm,
            "make_judge": self.make_judge,
            "make_caim_judge": self.make_caim_judge,
            "make_embedder": self.make_embedder,
        }
        factory = factories[name]
        if factory is None:
            raise ConfigError(
                f"this table needs {name}, which only the table command provides "
                "(recallbench-table / recallbench.cli.table_main)"
            )
        return factory

    def need_data_dir(self) -> Path:
        """The data root; an error naming the setting when the command gave none."""
        if self.data_dir is None:
            raise DataNotFoundError(
                "this table reads the data root, which is not set: set paths.data_dir "
                "(make: DATA_DIR=..., or RECALLBENCH_DATA_DIR)"
            )
        return self.data_dir


@dataclass
class BuiltTable:
    """A builder's result: cells plus what the header, notes and layout need."""

    cells: list[Cell]
    runs: Sequence[RunRecord] = ()  # the runs the cells came from (header); () = all of ctx.runs
    header: dict[str, str] = field(default_factory=dict)  # added to (or replacing) the run header
    notes: list[str] = field(default_factory=list)
    corner: str = ""
    show_n: bool = True
    files: dict[str, Path] = field(default_factory=dict)  # other files written (png, json)
    reasons: list[str] = field(default_factory=list)  # why cells are not comparable (header)
    row_runs: dict[str, list[RunRecord]] = field(default_factory=dict)  # row -> its runs
    # True: the builder tested every row against a reference row (tables.significance); a text:
    # the pairs it tested, when others are not (the engine notes the rest as untested)
    tested: bool | str = False
