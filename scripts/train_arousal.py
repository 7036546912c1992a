"""Train (and cache) the LUFY arousal regressor on EmoBank; print held-out Pearson r.

    python scripts/train_arousal.py --data-dir ../shared/data [--embedder minilm] \
        [--cache-dir results/models] [--force]

Ridge regression from the embedder's sentence vectors to EmoBank arousal (train split), penalty
picked on dev, Pearson r reported on test. The model lands in
``<cache-dir>/arousal-<embedder>-<sha8>.npz``, where the ``lufy`` memory finds it.
Logic: recallbench.memory.lufy._arousal.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from omegaconf import OmegaConf

from recallbench import CONF_DIR
from recallbench.cli.build import build_embedder
from recallbench.memory.lufy import (
    EMOBANK_RELPATH,
    cache_file,
    load_or_train,
    read_emobank,
    train_arousal,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help=f"data root holding {EMOBANK_RELPATH}")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--cache-dir", default="results/cache")
    parser.add_argument("--force", action="store_true", help="retrain even if cached")
    args = parser.parse_args(argv)
    path = Path(args.data_dir) / EMOBANK_RELPATH
    embedder = build_embedder(OmegaConf.load(CONF_DIR / "embedder" / f"{args.embedder}.yaml"))
    if args.force:
        data = read_emobank(path)
        model = train_arousal(embedder, data)
        model.save(cache_file(args.cache_dir, embedder.name, data.sha256))
    else:
        model = load_or_train(embedder, path, args.cache_dir)
    out = {"embedder": model.embedder_name, "alpha": model.alpha} | model.info
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
