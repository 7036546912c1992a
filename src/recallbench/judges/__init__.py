"""Answer judges (``conf/judge/*.yaml``): ``lexical`` (offline) and ``llm`` (LUFY App. C.1).

```python
from recallbench.judges import LexicalJudge
judge = LexicalJudge()   # a run builds it from conf/judge/lexical.yaml's _target_ (cli.build)
judge.judge("What is Zoe's dog called?", "Biscuit", "Her dog is Biscuit.").label   # 1
```
Labels: 1 correct, 0 incorrect, 2 don't-know (``recallbench.judges.base``).
"""

from __future__ import annotations

from recallbench.judges.base import (
    CORRECT,
    DONT_KNOW,
    INCORRECT,
    LABELS,
    Judge,
    JudgeItem,
    Verdict,
)
from recallbench.judges.lexical import LexicalJudge
from recallbench.judges.llm import LLMJudge

__all__ = [
    "CORRECT",
    "DONT_KNOW",
    "INCORRECT",
    "LABELS",
    "Judge",
    "JudgeItem",
    "LLMJudge",
    "LexicalJudge",
    "Verdict",
]
