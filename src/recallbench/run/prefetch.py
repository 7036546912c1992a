"""Embed what a run's episodes fix in a few large calls before replaying them (issue 55 item 7).

``MemoryMethod.prefetch_texts(episode)`` names the texts replaying an episode will embed that its
data already fixes; each protocol encodes them in one call right after ``reset``
(``prefetch_episode``). The runner goes one step further before any episode is replayed: it asks
one method instance for the texts of every episode still to run and encodes them in calls of at
least ``GROUP`` distinct texts, so the per-episode calls, and those made session by session, find
their vectors in the embedder's memory. With the texts of each episode go those of its queries
that the data fixes (the protocol's ``fixed_queries``, embedded as the method's
``query_texts``: the response protocols' retrieval queries, the last turns of the dataset's
dialogue, new at every reply). One large length-sorted call pads far less than an
episode's few hundred texts of mixed length: LongMemEval S user turns range from a few words to
MiniLM's 256 word pieces. What is embedded, and so every result, is unchanged beyond the
floating-point noise of batching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recallbench.memory import HasEmbedder, MemoryMethod, MethodFactory
from recallbench.records import Episode, Query

GROUP = 4096  # distinct texts per encode call (the embedder still splits it into its batches)


def prefetch_embeddings(
    make_method: Callable[[], MemoryMethod],
    episodes: Sequence[Episode],
    group: int | None = None,
    progress: bool = False,
    queries: Callable[[Episode], Sequence[Query]] | None = None,
) -> int:
    """Encode the ``prefetch_texts`` of every episode, and the ``query_texts`` of its
    ``queries`` (the protocol's ``fixed_queries``), in calls of ``group`` or more distinct
    texts (default ``GROUP``); return how many distinct texts were asked for (0: none fixed).

    Only a factory that names its class (``MethodFactory``, as ``cli.build`` makes them) whose
    class defines ``prefetch_texts``, or any such factory when some episode has ``queries``,
    builds one extra method here, reset per episode only for ``prefetch_texts`` (cheap for those: it drops
    the store); other methods are never built for it. ``progress``: a bar over the episodes
    with the texts encoded so far (on S this stage is most of a dense run).
    """
    if not episodes or not isinstance(make_method, MethodFactory):
        return 0
    group = GROUP if group is None else max(1, int(group))
    fixed = make_method.method_class.prefetch_texts is not MemoryMethod.prefetch_texts
    asked_for = [queries(e) for e in episodes] if queries is not None else [()] * len(episodes)
    if not fixed and not any(asked_for):
        return 0
    method = make_method()
    if not isinstance(method, HasEmbedder) or method.embedder is None:
        return 0
    from tqdm.auto import tqdm

    embedder, pending, asked = method.embedder, dict[str, None](), 0
    bar = tqdm(episodes, desc="embedding prefetch", unit="episode", disable=not progress)
    for i, episode in enumerate(bar):
        texts: list[str] = []
        if fixed:
            method.reset(episode)
            texts += method.prefetch_texts(episode)
        texts += method.query_texts(asked_for[i])
        pending.update(dict.fromkeys(t for t in texts if t.strip()))
        if pending and (len(pending) >= group or i == len(episodes) - 1):
            embedder.encode(list(pending))
            asked, pending = asked + len(pending), {}
            bar.set_postfix(texts=asked)
    bar.close()
    return asked
