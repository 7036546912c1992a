"""Judge robustness panel: re-score a QA run with several judges and with probes of known truth.

    recallbench judge-panel results/runs/lufy_table11/<stamp>/<job> [--judge SPEC ...]

The users of memory benchmarks ask whether a judge can be trusted: the same published LoCoMo
answers score 91% or 35% under two judge prompts (mem0ai/memory-benchmarks#29,
mem0ai/mem0#7235), long answers inflate acceptance (EverMind-AI/EverOS#8), and a judge accepts
62.8% of vague-but-topical wrong answers but 10.6% of specific-but-wrong ones
(snap-research/locomo#23). For one finished run of protocol ``qa`` (LUFY), ``qa_gvd`` (GVD /
CAIM) or ``teafarm`` (THEANINE) the panel

1. reads its judged answers and questions (``items``),
2. builds probes from the run itself: the gold answer, another question's gold answer
   (specific-but-wrong), a vague-but-topical answer, the gold answer among distractors
   (verbose), the distractors alone and the empty answer (``probes``),
3. asks every judge about the run's answers and every probe (``judges``: the lexical judge and
   LLMs under the papers' judge prompts and two alternatives, ``variants``),
4. reports acceptance per probe with episode-clustered intervals, the headline metric and its
   spread across judges, and agreement between judges (``stats``), as tables, a figure and
   JSON (``report``).

The cli builds the judges from configs (``cli/judge_panel.py``); nothing here builds an LLM.
"""

from __future__ import annotations

from recallbench.judgepanel.items import PROTOCOLS, RunItems, memory_lines, read_items
from recallbench.judgepanel.judges import (
    AnswerJudge,
    PanelJudge,
    PromptJudge,
    prompt_judges,
)
from recallbench.judgepanel.panel import ANSWERS, Judged, PanelOptions, PanelResult, run_panel
from recallbench.judgepanel.probes import (
    PROBES,
    WRONG_PROBES,
    Probe,
    Question,
    build_probes,
    derangement,
    gold_stems,
    shares_content,
    vague_answer,
)
from recallbench.judgepanel.report import read_verdicts, write_report
from recallbench.judgepanel.variants import (
    OWN_VARIANT,
    VARIANTS,
    JudgeInput,
    Variant,
    parse_correct_wrong,
    pick_variants,
)

__all__ = [
    "ANSWERS",
    "OWN_VARIANT",
    "PROBES",
    "PROTOCOLS",
    "VARIANTS",
    "WRONG_PROBES",
    "AnswerJudge",
    "JudgeInput",
    "Judged",
    "PanelJudge",
    "PanelOptions",
    "PanelResult",
    "Probe",
    "PromptJudge",
    "Question",
    "RunItems",
    "Variant",
    "build_probes",
    "derangement",
    "gold_stems",
    "memory_lines",
    "parse_correct_wrong",
    "pick_variants",
    "prompt_judges",
    "read_items",
    "read_verdicts",
    "run_panel",
    "shares_content",
    "vague_answer",
    "write_report",
]
