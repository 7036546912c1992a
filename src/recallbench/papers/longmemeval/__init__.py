"""LongMemEval (Wu et al., ICLR 2025): the code that exists only for its tables.

``dataset_table``: the dataset statistics of the loaded variants (``longmemeval_table5``).
"""
