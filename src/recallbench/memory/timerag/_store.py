"""Writing gate, update/forget and time-aware retrieval over TimeRAG records (sec. 3.2-3.4).

Confidence (sec. 3.2: "pattern reliability, repetition across turns/sessions, and contradiction
checks against existing memory in the same slot type"):

    c = min(1, reliability + repetition_bonus * (times seen before) - contradiction_penalty * [an
        active record of the same speaker and slot says otherwise and has higher confidence])

A candidate is written when ``c >= tau`` and it is novel (no active record states the same fact;
a repeat reinforces that record: its timestamp and confidence move up instead).

Retrieval (sec. 3.3): ``score(m, q) = sim(phi(m), phi(q)) * exp(-lambda * dt) - gamma *
conflict(m)``, where ``conflict(m)`` is 1 when a more recent record of the same speaker and slot
states another value or polarity, else 0 (``conflict_scope: all``: any newer version, whatever
its status, since a decayed or deleted newer version still says the old value is stale;
``eligible``: only newer records that are themselves retrievable); only ``active`` records are
eligible (deleted ones never; decayed ones only without the recency filter), top ``k`` by score.

Update/forget (sec. 3.4): a newer conflicting write either keeps both versions and lets the
conflict penalty down-weight the old one (``conflict: downweight``, the paper's "in practice")
or marks the old one ``deleted`` with provenance (``overwrite``); after each session records
whose time weight fell below ``decay_threshold`` become ``decayed``; a deletion request marks
every active record whose value shares a content word with the request ``deleted`` (provenance:
the request's utterance); above ``budget`` active records per speaker, the lowest
``confidence * w_time`` are set ``decayed`` (reason ``budget``). The budget's eviction is
forgetting: without update/forget it is lifted too (``budget_with_update_forget``).

A slot in ``additive_slots`` (the profile writer's ``background.research``: a user works on
several topics at once) holds several values: they never contradict, conflict or overwrite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from recallbench.memory.timerag._records import (
    ACTIVE,
    DECAYED,
    DELETED,
    MemoryRecord,
    elapsed,
    time_weight,
)
from recallbench.memory.timerag._writer import Candidate
from recallbench.text import content_words


@dataclass(frozen=True)
class Policy:
    """Every knob of the store; the ablations switch one part off (Table VIII)."""

    tau: float = 0.55
    lam: float = 0.25
    gamma: float = 0.5
    budget: int = 40
    decay_threshold: float = 0.05
    repetition_bonus: float = 0.15
    contradiction_penalty: float = 0.1
    dt_unit: str = "days"
    conflict: str = "downweight"  # | overwrite
    gating: bool = True  # False: write every candidate (w/o Gated Writing)
    update_forget: bool = True  # False: no overwrite, decay, deletion or conflict penalty
    time_decay: bool = True  # False: lambda = 0 (w/o Time Decay)
    recency_filter: bool = True  # False: decayed records stay retrievable (w/o Recency Filter)
    conflict_scope: str = "all"  # | eligible: newer versions that count as a conflict
    additive_slots: tuple[str, ...] = ("background.research",)  # values accumulate, never conflict
    budget_with_update_forget: bool = True  # False: the budget holds w/o Update/Forget too


class RecordStore:
    """The records of one episode (all speakers) with the policy's write/update/retrieve."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.records: list[MemoryRecord] = []
        self.seen: dict[tuple[str, str, str, str], int] = {}  # (speaker, slot, value, pol) -> n

    @property
    def lam(self) -> float:
        return self.policy.lam if self.policy.time_decay else 0.0

    def competes(self, slot_type: str) -> bool:
        """Whether two values of ``slot_type`` contradict each other (not an additive slot)."""
        return slot_type not in self.policy.additive_slots

    # -- writing -----------------------------------------------------------------------------

    def confidence(self, speaker: str, cand: Candidate) -> float:
        repeats = self.seen.get((speaker, cand.slot_type, cand.value, cand.polarity), 0)
        rivals = [
            r
            for r in self.active()
            if r.key() == (speaker, cand.slot_type)
            and (r.value, r.polarity) != (cand.value, cand.polarity)
            and self.competes(cand.slot_type)
        ]
        c = cand.reliability + self.policy.repetition_bonus * repeats
        if any(r.confidence > cand.reliability for r in rivals):
            c -= self.policy.contradiction_penalty
        return max(0.0, min(1.0, c))

    def offer(
        self,
        speaker: str,
        cand: Candidate,
        support: str,
        when: datetime | None,
        session_index: int,
    ) -> MemoryRecord | None:
        """Gate one candidate; return the record written (or reinforced), None when gated out."""
        c = self.confidence(speaker, cand)
        key = (speaker, cand.slot_type, cand.value, cand.polarity)
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.policy.gating and c < self.policy.tau:
            return None
        new = MemoryRecord(
            f"r{len(self.records)}",
            cand.slot_type,
            cand.value,
            cand.polarity,
            when,
            c,
            (support,),
            speaker,
            session_index,
        )
        for i, old in enumerate(self.records):
            if old.status == ACTIVE and old.same_fact(new):  # not novel: reinforce
                self.records[i] = replace(
                    old,
                    timestamp=when or old.timestamp,
                    session_index=session_index,
                    confidence=max(old.confidence, c),
                    support=(*old.support, support),
                )
                return self.records[i]
        overwrite = self.policy.conflict == "overwrite" and self.competes(new.slot_type)
        if self.policy.update_forget and overwrite:
            for i, old in enumerate(self.records):
                if old.status == ACTIVE and old.key() == new.key():
                    self.records[i] = old.with_status(
                        DELETED, reason="overwritten", by=new.record_id
                    )
        self.records.append(new)
        return new

    # -- forgetting --------------------------------------------------------------------------

    def delete_matching(self, speaker: str, request: str, support: str) -> list[str]:
        """Mark ``deleted`` the speaker's active records whose value shares a content word."""
        if not self.policy.update_forget:
            return []
        words = set(content_words(request))
        gone = []
        for i, r in enumerate(self.records):
            if r.status != DELETED and r.speaker == speaker and words & set(content_words(r.value)):
                self.records[i] = r.with_status(DELETED, reason="user request", request=support)
                gone.append(r.record_id)
        return gone

    def decay(self, now: datetime | None, session_index: int) -> None:
        """Active records whose time weight is below ``decay_threshold`` become ``decayed``."""
        if not (self.policy.update_forget and self.policy.time_decay):
            return
        for i, r in enumerate(self.records):
            w = time_weight(elapsed(r, now, session_index, self.policy.dt_unit), self.lam)
            if r.status == ACTIVE and w < self.policy.decay_threshold:
                self.records[i] = r.with_status(DECAYED, reason="time decay", weight=round(w, 6))

    def enforce_budget(self, now: datetime | None, session_index: int) -> None:
        """Keep at most ``budget`` active records per speaker (lowest confidence * w_time go)."""
        if self.policy.budget_with_update_forget and not self.policy.update_forget:
            return
        for speaker in sorted({r.speaker for r in self.active()}):
            mine = [
                i for i, r in enumerate(self.records) if r.status == ACTIVE and r.speaker == speaker
            ]
            excess = len(mine) - self.policy.budget
            if excess <= 0:
                continue
            for i in sorted(mine, key=lambda i: (self._worth(i, now, session_index), i))[:excess]:
                self.records[i] = self.records[i].with_status(DECAYED, reason="budget")

    def _worth(self, i: int, now: datetime | None, session_index: int) -> float:
        record = self.records[i]
        dt = elapsed(record, now, session_index, self.policy.dt_unit)
        return record.confidence * time_weight(dt, self.lam)

    # -- retrieval ---------------------------------------------------------------------------

    def active(self) -> list[MemoryRecord]:
        return [r for r in self.records if r.status == ACTIVE]

    def eligible(self) -> list[MemoryRecord]:
        keep = {ACTIVE} if self.policy.recency_filter else {ACTIVE, DECAYED}
        return [r for r in self.records if r.status in keep]

    def conflict(self, record: MemoryRecord, pool: Sequence[MemoryRecord]) -> float:
        """1 when a more recent record of the same speaker and slot says otherwise (among every
        record with ``conflict_scope: all``, among ``pool`` with ``eligible``)."""
        if not (self.policy.update_forget and self.competes(record.slot_type)):
            return 0.0
        for other in self.records if self.policy.conflict_scope == "all" else pool:
            newer = (other.session_index, int(other.record_id[1:])) > (
                record.session_index,
                int(record.record_id[1:]),
            )
            if newer and other.key() == record.key() and not other.same_fact(record):
                return 1.0
        return 0.0

    def retrieve(
        self,
        similarity: Callable[[list[MemoryRecord]], list[float]],
        now: datetime | None,
        session_index: int,
        k: int,
    ) -> list[tuple[MemoryRecord, float]]:
        """Top ``k`` eligible records by the sec. 3.3 score, best first (ties: older first)."""
        pool = self.eligible()
        if not pool:
            return []
        sims = similarity(pool)
        scored = []
        for order, (record, sim) in enumerate(zip(pool, sims, strict=True)):
            w = time_weight(elapsed(record, now, session_index, self.policy.dt_unit), self.lam)
            score = sim * w - self.policy.gamma * self.conflict(record, pool)
            scored.append((-score, order, record, score))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [(record, round(score, 6)) for _, _, record, score in scored[:k]]
