"""COMEDY (Chen et al. 2024), a THEANINE baseline: session memories compressed into events,
portraits and relation, selected per response.

``memory=comedy`` <-> ``conf/memory/comedy.yaml`` <-> :class:`Comedy`. Helpers: ``_comedy`` (prompts
and the method), ``_offline`` (reply parsers and the offline implementations).
"""

from recallbench.memory.comedy._comedy import Comedy
from recallbench.memory.comedy._offline import (
    parse_compressed,
    parse_session_memories,
    third_person,
)

__all__ = ["Comedy", "parse_compressed", "parse_session_memories", "third_person"]
