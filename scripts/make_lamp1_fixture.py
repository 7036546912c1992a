"""Write the synthetic LaMP-1 fixture ``data/fixtures/lamp1_topics`` (TimeRAG Table VII offline).

Self-written data in LaMP-1's format (no LaMP text): 50 labelled dev questions, one per user.
Each user writes about one research topic A (their profile: 6 paper titles on A). The question's
paper title mixes A with a second topic C, and its two candidate references are one paper on A
(related to the user) and one on C, so the title alone cannot tell them apart but the profile can:
a memory that keeps the profile should beat one that does not. Deterministic (seed 0):

    python scripts/make_lamp1_fixture.py [--out data/fixtures/lamp1_topics]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

TOPICS = {
    "retrieval": [
        "dense retrieval",
        "query expansion",
        "passage ranking",
        "inverted index",
        "BM25 scoring",
        "relevance feedback",
    ],
    "vision": [
        "image segmentation",
        "object detection",
        "convolutional features",
        "optical flow",
        "pose estimation",
        "image captioning",
    ],
    "speech": [
        "speech recognition",
        "acoustic models",
        "speaker diarization",
        "phoneme alignment",
        "voice conversion",
        "prosody modeling",
    ],
    "databases": [
        "query optimization",
        "transaction processing",
        "index structures",
        "join algorithms",
        "storage engines",
        "concurrency control",
    ],
    "security": [
        "malware detection",
        "intrusion detection",
        "access control",
        "side channels",
        "fuzz testing",
        "cryptographic protocols",
    ],
    "robotics": [
        "motion planning",
        "grasp synthesis",
        "legged locomotion",
        "robot localization",
        "manipulation policies",
        "visual servoing",
    ],
    "networks": [
        "congestion control",
        "packet scheduling",
        "routing protocols",
        "wireless links",
        "network measurement",
        "traffic engineering",
    ],
    "biology": [
        "protein folding",
        "gene expression",
        "sequence alignment",
        "cell imaging",
        "variant calling",
        "metabolic pathways",
    ],
}
FORMS = [
    "{a} for {b}",
    "Towards {a} with {b}",
    "A study of {a} and {b}",
    "Scalable {a} via {b}",
    "Learning {a} from {b}",
    "Revisiting {a} under {b}",
]


def title(rng: random.Random, x: str, y: str) -> str:
    return rng.choice(FORMS).format(a=rng.choice(TOPICS[x]), b=rng.choice(TOPICS[y]))


def build(n: int = 50, profile: int = 6, seed: int = 0) -> tuple[list, dict]:
    rng = random.Random(seed)
    names = sorted(TOPICS)
    questions, golds = [], []
    for i in range(n):
        a, c = rng.sample(names, 2)
        qid = str(1000 + i)
        items = [
            {"id": f"{qid}{j}", "title": title(rng, a, a), "abstract": "", "date": str(2000 + j)}
            for j in range(profile)
        ]
        paper = title(rng, a, c) if rng.random() < 0.5 else title(rng, c, a)
        related, other = title(rng, a, a), title(rng, c, c)
        first = rng.random() < 0.5
        ref1, ref2 = (related, other) if first else (other, related)
        text = (
            f'For an author who has written the paper with the title "{paper}", which reference is '
            f'related? Just answer with [1] or [2] without explanation. [1]: "{ref1}" [2]: "{ref2}"'
        )
        questions.append({"id": qid, "input": text, "profile": items})
        golds.append({"id": qid, "output": "[1]" if first else "[2]"})
    return questions, {"task": "LaMP_1", "golds": golds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/fixtures/lamp1_topics"))
    args = parser.parse_args()
    folder = args.out / "lamp1" / "user" / "LaMP_1"
    folder.mkdir(parents=True, exist_ok=True)
    questions, outputs = build()
    (folder / "dev_questions.json").write_text(json.dumps(questions, indent=1) + "\n")
    (folder / "dev_outputs.json").write_text(json.dumps(outputs, indent=1) + "\n")
    print(folder)


if __name__ == "__main__":
    main()
