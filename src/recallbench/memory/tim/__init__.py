"""TiM, Think-in-Memory (Liu, Yang, Shen, Hu, Zhang, Gu, Zhang; arXiv 2311.08719, 2023).

The method (``memory=tim``, ``conf/memory/tim.yaml``) is in ``_tim``.
"""

from recallbench.memory.tim._tim import LSH, ORGANIZE_TASK, TiM, parse_organize

__all__ = [
    "LSH",
    "ORGANIZE_TASK",
    "TiM",
    "parse_organize",
]
