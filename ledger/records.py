"""Stored records: what the Event log keeps, independent of the Event schema.

Following the ``eventsourcing`` library's split between domain events and stored records, the log
only ever sees :class:`PendingEvent` (an encoded Event about to be appended) and
:class:`StoredEvent` (a row of the log). ``ledger.events`` maps its pydantic models to and from
these; the log backends never import the schema.

The chain hash binds each row to everything before it::

    hash = sha256(prev_hash ‖ 0x00 ‖ kind ‖ 0x00 ‖ version ‖ 0x00 ‖ visibility ‖ 0x00 ‖ payload)

``recorded_at`` is stored but never hashed, so two Runs with the same decisions have the same chain.
Visibility is hashed (a stronger form of the design's formula) so that flipping an event from
``host`` to ``public`` cannot go unnoticed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple

from evoledger.ledger.canonical import parse_canonical

__all__ = ["GENESIS_HASH", "PendingEvent", "StoredEvent", "Visibility", "chain_hash"]

Visibility = Literal["public", "host"]

GENESIS_HASH: Final = "sha256:" + "0" * 64
"""The ``prev_hash`` of the first event of every log."""


def chain_hash(prev_hash: str, kind: str, version: int, visibility: str, payload: bytes) -> str:
    """The hash of one log row given the hash of the row before it."""
    h = hashlib.sha256()
    h.update(prev_hash.encode("ascii"))
    h.update(b"\x00")
    h.update(kind.encode("utf-8"))
    h.update(b"\x00")
    h.update(str(version).encode("ascii"))
    h.update(b"\x00")
    h.update(visibility.encode("ascii"))
    h.update(b"\x00")
    h.update(payload)
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """An encoded Event about to be appended: ``payload`` is canonical JSON bytes."""

    kind: str
    version: int
    visibility: Visibility
    payload: bytes


class StoredEvent(NamedTuple):
    """One row of the Event log, its fields in the column order of the ``events`` table.

    A named tuple rather than a dataclass: logs build and read hundreds of thousands of these, and
    a tuple is both cheaper to make and directly usable as the row's SQL parameters.
    """

    seq: int
    kind: str
    version: int
    visibility: Visibility
    payload: bytes
    prev_hash: str
    hash: str
    recorded_at: str

    def data(self) -> Any:
        """The payload parsed from canonical JSON."""
        return parse_canonical(self.payload)

    def expected_hash(self) -> str:
        """The hash this row should carry given its ``prev_hash`` and content."""
        return chain_hash(self.prev_hash, self.kind, self.version, self.visibility, self.payload)
