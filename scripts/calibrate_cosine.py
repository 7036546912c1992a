"""Print an embedder config's cosine profile on the LUFY dataset (the LUFY-family cut-off).

    python scripts/calibrate_cosine.py minilm --data-dir ../shared/data [--system "Naive RAG"]

Replays the LUFY logs of ``--system`` through Naive RAG without a cut-off and prints, per
candidate threshold, the share of bot replies that retrieve anything and the top of the band of
retrieved cosines: the numbers ``conf/memory/_cosine_cut.yaml`` declares per embedder scale.
The embedder is built from ``conf/embedder/<stem>.yaml`` as a run builds it.
Logic: recallbench.papers.lufy.calibration.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_embedder, build_generator
from recallbench.datasets import load
from recallbench.papers.lufy.calibration import cosine_profile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("embedder", help="a conf/embedder stem (minilm, hashing, ...)")
    parser.add_argument("--data-dir", default="data/downloaded", help="data root holding lufy/")
    parser.add_argument("--system", default="Naive RAG", help="whose LUFY logs to replay")
    args = parser.parse_args(argv)
    embedder = build_embedder(OmegaConf.load(CONF_DIR / "embedder" / f"{args.embedder}.yaml"))
    episodes = load("lufy", args.data_dir, system=args.system)
    llm = build_generator({"backend": "extractive"}, None)
    profile = cosine_profile(embedder, episodes, llm)
    print(f"{profile.embedder}: {len(profile.queries)} replies", profile.best_match_quantiles())
    for t in np.arange(0.3, 0.95, 0.05):
        top = profile.band_top(t)
        print(f"threshold {t:.2f}: retrieval rate {profile.retrieval_rate(t):.3f}, band top {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
