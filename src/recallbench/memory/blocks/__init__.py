"""The building blocks that several memory methods share (none of them is a method).

``baseline``: the classic baselines' common state and ``render_flat``; ``summarize``: per-session
summarization; ``gold``: gold memory sentences and their source turns; ``retrieval``: cosine top-k;
``prompts``: the response prompts (``prompt_style``); ``llm_common``: the LLM-driven baselines'
helpers; ``replay``: the queries of a logged session, before every reply; ``bae_update``: Bae et
al.'s Algorithm 1 with its pairwise classifier. Import each from its module; this package imports
none of them (``import recallbench.memory`` stays light).
"""
