"""Every prompt the code calls verbatim matches the paper's text (../shared/papers).

Matching: whitespace collapsed, markdown escapes and typographic quotes undone; our
``str.format`` placeholders (``{memory}``) stand for whatever the paper prints there
(``${memory}``, ``{refined_timelines}``, a short phrase), so the literal text between them must
appear in the paper in order, with at most ``MAX_SLOT`` characters for each placeholder. A
completeness check makes sure no module-level PromptTask that claims to be verbatim escapes the
list. Skipped when the papers folder is absent.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import recallbench
from recallbench.llm.task import PromptTask

ROOT = Path(__file__).resolve().parents[1]
PAPERS = next(
    (
        p
        for p in (ROOT.parent / "shared" / "papers", ROOT.parents[1] / "shared" / "papers")
        if p.is_dir()
    ),
    None,
)
MAX_SLOT = 60

# (paper file, module, constant): every prompt whose source says "verbatim".
VERBATIM = [
    ("theanine.md", "recallbench.memory.theanine._linking", "LINKING_PROMPT"),  # Fig. 22
    ("theanine.md", "recallbench.memory.theanine._refinement", "REFINEMENT_PROMPT"),  # Fig. 23
    ("theanine.md", "recallbench.memory.blocks.prompts", "THEANINE_RESPONSE_PROMPT"),  # Fig. 24
    ("theanine.md", "recallbench.memory.blocks.bae_update._update", "UPDATE_PROMPT"),  # Fig. 25
    ("theanine.md", "recallbench.judges.geval", "GEVAL_PROMPT"),  # Fig. 26
    ("theanine.md", "recallbench.protocols.teafarm", "QUESTION_PROMPT"),  # Fig. 27
    ("theanine.md", "recallbench.protocols.teafarm", "SESSION6_PROMPT"),  # Fig. 28
    ("theanine.md", "recallbench.protocols.teafarm", "JUDGE_PROMPT"),  # Fig. 29
    ("theanine.md", "recallbench.judges.entailment", "ENTAILMENT_INSTRUCTIONS"),  # Fig. 14
    ("lufy.md", "recallbench.memory.lufy._estimators", "IMPORTANCE_PROMPT"),  # Fig. 1
    ("lufy.md", "recallbench.memory.lufy._recall", "RESPONSE_PROMPT"),  # Fig. 4
    ("lufy.md", "recallbench.judges.llm", "RATING_PROMPT"),  # Fig. 6
    ("lufy.md", "recallbench.judges.llm", "QA_JUDGE_PROMPT"),  # App. C.1
    ("lufy.md", "recallbench.papers.lufy.episodes", "CATEGORY_PROMPT"),  # App. C.2
    ("caim.md", "recallbench.memory.caim._controller", "INFORMATION_NECESSARY_PROMPT"),  # A.1
    ("caim.md", "recallbench.memory.caim._controller", "RETRIEVAL_AND_CONVERSATION_PROMPT"),
    ("caim.md", "recallbench.memory.caim._controller", "RETRIEVAL_PROMPT"),
    ("caim.md", "recallbench.memory.caim._tasks", "ONTOLOGY_EXPANSION_PROMPT"),  # A.2
    ("caim.md", "recallbench.memory.caim._tasks", "SELECT_TAGS_PROMPT"),
    ("caim.md", "recallbench.memory.caim._tasks", "RELEVANCE_PROMPT"),
    ("caim.md", "recallbench.memory.caim._tasks", "KEY_EVENTS_PROMPT"),  # A.3
]
QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})


def normalize(text: str) -> str:
    """Collapse whitespace; undo markdown escapes, typographic quotes, table and HTML markup.

    Figures printed as tables or HTML lists lose their cell bars, tags and list numbers
    ("3. Contradictory" is ``<ol><li>Contradictory``), so list numbers are dropped on both sides.
    Code fences the extraction put around pieces of a prompt (LUFY App. C.2) are not its text.
    """
    text = re.sub(r"\\([_*\[\]{}()#+\-.!`$&|<>~^])", r"\1", text.translate(QUOTES))
    text = re.sub(r"^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*$", " ", text, flags=re.M)  # table rules
    text = re.sub(r"</?(b|i|ol|li|ul|br|p|em|strong)\s*/?>", " ", text)
    text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    text = re.sub(r"\*\*|(?<!\w)\|(?!\w)|^```\s*$", " ", text, flags=re.M)
    text = re.sub(r"(?:(?<=\s)|^)\d+\.\s+(?=[A-Z])", "", text)
    return re.sub(r"\s+", " ", text).strip()


def literal_chunks(template: str) -> list[str]:
    """The text between ``str.format`` placeholders, with ``{{``/``}}`` unescaped."""
    parts = re.split(r"(?<!\{)\{[A-Za-z_][A-Za-z_0-9]*\}(?!\})", template)
    chunks = [normalize(p.replace("{{", "{").replace("}}", "}")) for p in parts]
    return [c for c in chunks if c]


def find_in_order(chunks: list[str], paper: str) -> str | None:
    """Return None if the chunks occur in order with short gaps, else what is missing."""
    at = paper.find(chunks[0])
    if at < 0:
        return f"start not found: {chunks[0][:80]!r}"
    end = at + len(chunks[0])
    for chunk in chunks[1:]:
        nxt = paper.find(chunk, end)
        if nxt < 0 or nxt - end > MAX_SLOT:
            near = paper[end : end + 120]
            return (
                f"after {paper[max(at, end - 60) : end]!r}: expected {chunk[:80]!r}, paper {near!r}"
            )
        end = nxt + len(chunk)
    return None


@pytest.fixture(scope="module")
def papers() -> dict[str, str]:
    if PAPERS is None:
        pytest.skip("paper texts not found beside the repository (../shared/papers)")
    return {p.name: normalize(p.read_text(encoding="utf-8")) for p in PAPERS.glob("*.md")}


@pytest.mark.parametrize(("paper", "module", "name"), VERBATIM, ids=[v[2] for v in VERBATIM])
def test_prompt_matches_the_paper(papers, paper, module, name):
    template = getattr(importlib.import_module(module), name)
    missing = find_in_order(literal_chunks(template), papers[paper])
    assert missing is None, f"{module}.{name} differs from {paper}: {missing}"


def test_every_verbatim_prompt_task_is_checked():
    def plain(text: str) -> str:
        return text.replace("{{", "{").replace("}}", "}")

    listed = {plain(getattr(importlib.import_module(m), n)) for _, m, n in VERBATIM}
    unchecked = []
    for info in pkgutil.walk_packages(recallbench.__path__, "recallbench."):
        if info.name.startswith("recallbench.testing"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, PromptTask) and "verbatim" in value.source.lower():
                template = value.template
                if isinstance(template, str) and not any(t in plain(template) for t in listed):
                    unchecked.append(f"{info.name}.{name}")
    assert not unchecked, f"PromptTasks claiming 'verbatim' without a paper check: {unchecked}"
