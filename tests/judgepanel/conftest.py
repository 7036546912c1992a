"""A tiny hand-built run folder of protocol ``qa`` (two users, five questions, six answers).

The lexical judge's labels of the six answers, checked by hand against ``judges/lexical``:

| episode | question                          | gold           | answer                                     | label |
|---------|-----------------------------------|----------------|--------------------------------------------|-------|
| e1      | What is Zoe's dog called?         | Biscuit.       | Zoe's dog is called Biscuit.               | 1     |
| e1      | What is Zoe's dog called?         | Biscuit.       | I don't know.                              | 2     |
| e1      | Where did Zoe travel last summer? | Sapporo, in Hokkaido. | Zoe went to Hokkaido.               | 1     |
| e2      | What does Ken do for work?        | He is a nurse. | Ken works as a nurse at the city hospital. | 1     |
| e2      | What sport does Ken play?         | Tennis.        | Ken plays golf on weekends.                | 0     |
| e2      | Which city does Ken live in?      | Kyoto.         | (empty)                                    | 2     |

So 3 correct, 1 incorrect, 2 don't-know: precision 3/4, recall 3/6, F1 0.6. The third answer has
one of the gold's two key words ("sapporo", "hokkaido"): coverage 0.5 meets the default threshold
0.5; with ``threshold=1.0`` it is incorrect (0), and then precision 2/4, recall 2/6, F1 0.4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ANSWERS = [
    ("e1", "e1/q1", 1, "What is Zoe's dog called?", "Biscuit.", "Zoe's dog is called Biscuit.", 1),
    ("e1", "e1/q1", 2, "What is Zoe's dog called?", "Biscuit.", "I don't know.", 2),
    (
        "e1",
        "e1/q2",
        2,
        "Where did Zoe travel last summer?",
        "Sapporo, in Hokkaido.",
        "Zoe went to Hokkaido.",
        1,
    ),
    (
        "e2",
        "e2/q3",
        1,
        "What does Ken do for work?",
        "He is a nurse.",
        "Ken works as a nurse at the city hospital.",
        1,
    ),
    ("e2", "e2/q4", 1, "What sport does Ken play?", "Tennis.", "Ken plays golf on weekends.", 0),
    ("e2", "e2/q5", 2, "Which city does Ken live in?", "Kyoto.", "", 2),
]
MEMORY = {
    "e1": ["Zoe enjoys hiking in the mountains.", "Zoe bakes bread every Sunday morning."],
    "e2": ["Ken collects vintage stamps.", "Ken is learning to play the violin."],
}


def write_run(root: Path, protocol: str = "qa") -> Path:
    """Write the run folder under ``root`` and return its path."""
    run = root / "runs" / "tiny" / "20260101-000000" / "tiny-job"
    (run / "memory").mkdir(parents=True)
    config = {
        "protocol": {"name": protocol},
        "generator": {"backend": "extractive", "model": "extractive"},
        "embedder": {"kind": "hashing"},
        "dataset": {"name": "tiny", "data_dir": str(root / "data"), "options": {}},
        "paths": {"cache_dir": str(root / "cache")},
        "choices": {"judge": "lexical"},
    }
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    info = {"status": "finished", "n_episodes": 2, "git_sha": "0" * 40, "dataset_sha256": "ab" * 32}
    (run / "run.json").write_text(json.dumps(info))
    lines = []
    for episode, qid, session, question, gold, answer, label in ANSWERS:
        lines.append(
            {
                "pred_id": f"{qid}/after_s{session}",
                "episode_id": episode,
                "session_index": session,
                "kind": "answer",
                "prompt_hash": "",
                "output": answer,
                "reference": gold,
                "meta": {"qa_id": qid, "question": question, "judge": {"label": label}},
            }
        )
    lines.append(  # a memory state: not an answer, the panel skips it
        {"pred_id": "e1/s1/memory", "episode_id": "e1", "session_index": 1, "kind": "memory"}
        | {"prompt_hash": "", "output": ""}
    )
    (run / "predictions.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    for episode, texts in MEMORY.items():
        rows = [
            {
                "after_session": s,
                "items": [{"item_id": str(i), "text": t} for i, t in enumerate(texts[:s])],
            }
            for s in (1, 2)
        ]
        (run / "memory" / f"{episode}.jsonl").write_text(
            "\n".join(json.dumps(r) for r in rows) + "\n"
        )
    return run


@pytest.fixture()
def tiny_run(tmp_path: Path) -> Path:
    """The hand-built run folder (module docstring)."""
    return write_run(tmp_path)


@pytest.fixture()
def make_run():
    """``write_run`` itself (another root, another protocol)."""
    return write_run


@pytest.fixture()
def tiny_labels() -> list[int]:
    """The lexical judge's labels of the tiny run's answers, in order (module docstring)."""
    return [label for *_, label in ANSWERS]
