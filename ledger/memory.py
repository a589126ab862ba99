"""An in-memory :class:`~evoledger.ledger.log.EventLog`: the same contract as SQLite, no file.

Used by the contract tests (every behaviour the SQLite backend promises is checked against this
one too) and by pure unit tests of code that only needs a log. Not persistent, single process.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Sequence
from typing import Final

from evoledger.ledger.errors import ConcurrencyError
from evoledger.ledger.head import EMPTY_HEAD, Head
from evoledger.ledger.log import (
    Clock,
    build_chain,
    check_batch,
    check_expected_head,
    check_read_args,
    timestamp,
    utc_now,
)
from evoledger.ledger.records import PendingEvent, StoredEvent

__all__ = ["MemoryEventLog"]


class MemoryEventLog:
    """A list of :class:`StoredEvent` with the Event log's append/read/head contract."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock: Final = clock if clock is not None else utc_now
        self._events: list[StoredEvent] = []
        self._lock: Final = threading.Lock()

    def head(self) -> Head:
        with self._lock:
            return self._head_unlocked()

    def _head_unlocked(self) -> Head:
        if not self._events:
            return EMPTY_HEAD
        last = self._events[-1]
        return Head(last.hash, last.seq + 1)

    def append(self, events: Sequence[PendingEvent], *, expected_head: str) -> list[StoredEvent]:
        check_expected_head(expected_head)
        batch = check_batch(events)
        recorded_at = timestamp(self._clock)
        with self._lock:
            head = self._head_unlocked()
            if head.hash != expected_head:
                raise ConcurrencyError(
                    f"stale expected head {expected_head}: the log's head is {head.hash} after "
                    f"{head.count} events; someone appended first. Re-read the log and retry"
                )
            stored = build_chain(batch, head, recorded_at)
            self._events.extend(stored)
        return stored

    def read(
        self, from_seq: int = 0, *, visibility: str | None = None, kinds: Collection[str] | None = None
    ) -> Iterator[StoredEvent]:
        kind_set = check_read_args(from_seq, visibility, kinds)
        return self._stream(from_seq, visibility, None if kind_set is None else frozenset(kind_set))

    def _stream(self, from_seq: int, visibility: str | None, kinds: frozenset[str] | None) -> Iterator[StoredEvent]:
        index = from_seq
        while index < len(self._events):
            event = self._events[index]
            index += 1
            if visibility is not None and event.visibility != visibility:
                continue
            if kinds is not None and event.kind not in kinds:
                continue
            yield event
