"""Stored records: what the Event log keeps, independent of the Event schema.

Following the ``eventsourcing`` library's split between domain events and stored records, the log
only ever sees :class:`PendingEvent` (an encoded Event about to be appended) and
:class:`StoredEvent` (a row of the log). ``ledger.events`` maps its pydantic models to and from
these; the log backends never import the schema.

The chain hash binds each row to everything before it::

    hash = sha256(prev_hash ‖ 0x00 ‖ kind ‖ 0x00 ‖ version ‖ 0x00 ‖ visibility ‖ 0x00 ‖ payload)

``recorded_at`` is stored but never hashed, so two Runs with the same decisions have the same chain.
Visibility is hashed too (not only kind, version and payload) so that flipping an event from
``host`` to ``public`` cannot go unnoticed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple

from evoledger.ledger.canonical import canonical_json, is_canonical, parse_canonical
from evoledger.ledger.errors import EncodingError

__all__ = ["GENESIS_HASH", "EncodedEvent", "PendingEvent", "StoredEvent", "Visibility", "chain_hash"]

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


@dataclass(frozen=True, slots=True, eq=False)
class PendingEvent:
    """An encoded Event about to be appended: ``payload`` is canonical JSON bytes.

    The log checks a payload given as bytes in full (parse, re-encode, compare). :meth:`encode`
    makes the payload itself from a value, returning an :class:`EncodedEvent` that the log trusts
    without the second pass -- which is how the Host encodes every Event (``ledger.events.to_pending``).
    """

    kind: str
    version: int
    visibility: Visibility
    payload: bytes

    @staticmethod
    def encode(kind: str, version: int, visibility: Visibility, value: Any) -> PendingEvent:
        """The Event whose payload is ``canonical_json(value)`` (raises :class:`EncodingError` like it)."""
        event = _new_pending(EncodedEvent)
        _init_pending(event, kind, version, visibility, canonical_json(value))
        return event

    def _fields(self) -> tuple[str, int, str, bytes]:
        return (self.kind, self.version, self.visibility, self.payload)

    def __eq__(self, other: object) -> bool:  # an EncodedEvent equals the PendingEvent with its fields
        if not isinstance(other, PendingEvent):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


_new_pending: Final = object.__new__
_init_pending: Final = PendingEvent.__init__


class EncodedEvent(PendingEvent):
    """A :class:`PendingEvent` whose payload ``canonical_json`` produced, so it is canonical by construction.

    Made by :meth:`PendingEvent.encode`. Building one any other way (directly, or through
    ``dataclasses.replace``) checks the payload in full and raises :class:`EncodingError` unless it is
    canonical JSON; like every ``PendingEvent`` it cannot be changed afterwards.
    """

    __slots__ = ()

    def __init__(self, kind: str, version: int, visibility: Visibility, payload: bytes) -> None:
        if not is_canonical(payload):
            raise EncodingError(
                f"EncodedEvent payload {payload!r:.120} is not canonical JSON; use PendingEvent.encode(kind, "
                "version, visibility, value), or a plain PendingEvent (whose payload the log checks)"
            )
        _init_pending(self, kind, version, visibility, payload)


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
