"""Protocol ``qa_gvd``: the QA protocol on GVD with CAIM's four metrics (CAIM sec. 4.1.3-4.1.4).

Everything of protocol ``qa`` (answering, the C.1 judge, the unperturbed-memory check) plus, for
every answered question, a CAIM judge (``recallbench.judges.caim``: ``lexical`` offline with the
answer key, or ``llm`` rubric prompts) scoring retrieval accuracy, response correctness,
contextual coherence and memory storage from the question, the answer key, the recalled
memories, the store at question time and the response. Stored per answer prediction:
``meta["caim"]`` (one ``recallbench.verdict.Verdict`` per metric: ``judges.caim.CaimVerdicts``,
read with ``caim_verdicts``) and ``meta["recalled_items"]`` (id, kind, text, source_ids,
created of what was recalled) so other judges can rescore a finished run
(``recallbench.protocols.qa_gvd.scores.rescore_answers``). Memory states add ``n_words`` (Table 4).

Settings (``conf/protocol/qa_gvd.yaml``): those of ``qa`` plus ``caim_judge`` (a CAIM judge, built
by the cli from the nested config; default the lexical judge) and ``keyed_only`` (ask only the questions the answer key covers: an LLM run
then pays for no question the lexical judge cannot score; default true).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

from recallbench.datasets import needs
from recallbench.judges import Judge
from recallbench.judges.caim import CaimItem, CaimJudge, LexicalCaimJudge
from recallbench.llm.protocol import LLMClient
from recallbench.memory import MemoryMethod
from recallbench.protocols.base import EpisodeResult, JudgedSummary, refuse_unknown
from recallbench.protocols.qa import Probe, QAProtocol
from recallbench.protocols.qa.scores import QA_METRICS
from recallbench.protocols.qa_gvd.scores import GVD_METRICS, caim_item, score_caim
from recallbench.records import Episode, MemoryItem, Prediction, QAItem, Score
from recallbench.verdict import JSONValue


def is_keyed(qa: QAItem) -> bool:
    """Return True when an answer key covers ``qa`` (the gvd loader sets ``answerable``)."""
    return isinstance(qa.meta.get("answerable"), bool)


class GvdSummary(JudgedSummary, total=False):
    """A ``qa_gvd`` run's summary: protocol ``qa``'s and CAIM's rubric judge."""

    caim_judge: dict[str, JSONValue]  # the CAIM judge's description


class GVDQAProtocol(QAProtocol):
    """Protocol ``qa`` plus CAIM's four per-question metrics."""

    name = "qa_gvd"
    MODELS: ClassVar[dict[str, str]] = {"judge": "judge", "caim_judge": "caim_judge"}

    @classmethod
    def check_metrics(cls, names: Sequence[str]) -> None:
        """Refuse a name that is not one of this protocol's metrics (``EvalProtocol``)."""
        refuse_unknown("qa_gvd metric", names, (*QA_METRICS, *GVD_METRICS))

    def __init__(
        self, caim_judge: CaimJudge | None = None, keyed_only: bool = True, **params: Any
    ) -> None:
        super().__init__(**params)
        self._caim: CaimJudge = caim_judge if caim_judge is not None else LexicalCaimJudge()
        self.keyed_only = bool(keyed_only)
        self._episode: Episode | None = None

    def needs(self) -> frozenset[str]:
        """Protocol ``qa``'s needs; with ``keyed_only`` an answer key (GVD ships none)."""
        return super().needs() | ({needs.QA_KEY} if self.keyed_only else set())

    def run_episode(self, episode: Episode, method: MemoryMethod, llm: LLMClient) -> EpisodeResult:
        """Replay ``episode`` as protocol ``qa`` does, scoring every answer with CAIM's metrics."""
        if self.keyed_only:
            episode = dataclasses.replace(episode, qa=tuple(q for q in episode.qa if is_keyed(q)))
        self._episode = episode
        return super().run_episode(episode, method, llm)

    def _answer(self, probe: Probe, method: MemoryMethod, llm: LLMClient) -> list[dict[str, Any]]:
        rows = super()._answer(probe, method, llm)
        store = tuple(method.snapshot())  # the store the questions met (before any probe)
        for row in rows:
            row["store"] = store
        return rows

    def _judge_all(
        self, rows: list[dict[str, Any]], asked: list[QAItem], judge: Judge
    ) -> list[Prediction]:
        preds = super()._judge_all(rows, asked, judge)
        items: list[CaimItem] = [
            caim_item(self._episode, row["qa"], p.output, row["recall"].items, row["store"])
            for row, p in zip(rows, preds, strict=True)
        ]
        verdicts = self._caim.judge_many(items)
        out = []
        for row, p, v in zip(rows, preds, verdicts, strict=True):
            recalled = [
                {
                    "item_id": m.item_id,
                    "kind": m.kind,
                    "text": m.text,
                    "source_ids": list(m.source_ids),
                    "created": m.created.isoformat() if m.created else None,
                }
                for m in row["recall"].items
            ]
            out.append(
                dataclasses.replace(
                    p, meta={**p.meta, "caim": v.to_dict(), "recalled_items": recalled}
                )
            )
        return out

    def _memory_state(
        self, episode: Episode, index: int, method: MemoryMethod, items: list[MemoryItem]
    ) -> Prediction:
        state = super()._memory_state(episode, index, method, items)
        n_words = sum(len(m.text.split()) for m in items)
        return dataclasses.replace(state, meta={**state.meta, "n_words": n_words})

    def score(
        self, predictions: Sequence[Prediction], metric_names: Sequence[str] = ()
    ) -> tuple[list[Score], GvdSummary]:
        """Return per-answer scores and the summary: protocol ``qa``'s plus CAIM's metrics."""
        self.check_metrics(metric_names)
        scores, summary = super().score(predictions, [m for m in metric_names if m in QA_METRICS])
        caim_scores, metrics = score_caim(predictions)
        summary["metrics"].update(metrics)
        out: GvdSummary = {**summary, "caim_judge": {**self._caim.describe()}}
        return scores + caim_scores, out
