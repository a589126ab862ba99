"""Mapping Events to and from the log's stored records.

**Payload layout.** A row's payload is the canonical JSON of the Event's fields *without* ``kind``
and ``version``: those two live in their own columns of the row (and are hashed there), so storing
them again inside the payload would only let the two copies disagree. Reading puts them back: the
row's ``kind`` picks the model, the row's ``version`` picks the upcasting chain, and a payload that
does carry ``kind`` or ``version`` is refused. The row's ``visibility`` must equal the visibility
the kind declares.

Reading validates JSON bytes directly (pydantic's fast JSON path) when the stored version is
current; an older payload is parsed, upcast as a dict, re-encoded and validated the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json, parse_canonical
from evoledger.ledger.errors import EncodingError, SchemaError, UnknownNameError
from evoledger.ledger.events.base import EventBase
from evoledger.ledger.events.union import EVENT_TYPES, kind_of, version_of
from evoledger.ledger.events.upcasting import UPCASTERS, UpcasterRegistry
from evoledger.ledger.records import PendingEvent, StoredEvent
from pydantic import ValidationError

__all__ = ["EventCodec", "encode_payload", "from_stored", "to_pending"]

_ROW_FIELDS: Final = frozenset({"kind", "version"})


def _payload_value(event: EventBase) -> Any:
    return event.model_dump(mode="json", exclude=set(_ROW_FIELDS))


def encode_payload(event: EventBase) -> bytes:
    """The canonical JSON payload of ``event``: every field except ``kind`` and ``version``."""
    return canonical_json(_payload_value(event))


def _summarise(exc: ValidationError, limit: int = 5) -> str:
    parts = []
    for error in exc.errors(include_url=False)[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(payload)"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


class EventCodec:
    """Encodes Events into :class:`PendingEvent` and decodes :class:`StoredEvent` rows back.

    The module-level :func:`to_pending` and :func:`from_stored` use the library's own kinds and
    upcasters; build a codec of your own to read with other tables (e.g. in tests).
    """

    def __init__(
        self,
        types: Mapping[str, type[EventBase]] = EVENT_TYPES,
        upcasters: UpcasterRegistry = UPCASTERS,
    ) -> None:
        self._types = types
        self._upcasters = upcasters

    def to_pending(self, event: EventBase) -> PendingEvent:
        """Encode ``event`` for appending (see the module docstring for the payload layout)."""
        cls = type(event)
        kind = kind_of(cls)
        if self._types.get(kind) is not cls:
            raise UnknownNameError("event kind", kind, self._types)
        return PendingEvent.encode(kind, event.version, cls.visibility, _payload_value(event))

    def from_stored(self, stored: StoredEvent) -> EventBase:
        """Decode a log row into its Event, upcasting older versions; :class:`SchemaError` if it cannot."""
        where = f"event #{stored.seq} ({stored.kind!r} v{stored.version})"
        cls = self._types.get(stored.kind)
        if cls is None:
            raise SchemaError(
                f"{where}: unknown kind; known kinds: {', '.join(sorted(self._types))}. "
                "Upgrade evoledger if this record was written by a newer version"
            )
        if stored.visibility != cls.visibility:
            raise SchemaError(
                f"{where}: stored visibility {stored.visibility!r} but {stored.kind!r} is declared "
                f"{cls.visibility!r}; the record was altered or written by a faulty tool"
            )
        current = version_of(cls)
        if stored.version > current or stored.version < 1:
            raise SchemaError(
                f"{where}: version {stored.version} is not readable here (current is v{current}); "
                "upgrade evoledger if the record is newer"
            )
        payload = stored.payload
        if stored.version != current:
            payload = self._upcast(stored, where, current)
        try:
            event = cls.model_validate_json(payload)
        except ValidationError as exc:
            raise SchemaError(f"{where}: payload does not match the schema: {_summarise(exc)}") from None
        repeated = _ROW_FIELDS & event.model_fields_set
        if repeated:
            raise SchemaError(f"{where}: payload repeats {sorted(repeated)}; kind and version belong in the row only")
        return event

    def _upcast(self, stored: StoredEvent, where: str, current: int) -> bytes:
        try:
            data = parse_canonical(stored.payload)
        except EncodingError as exc:
            raise SchemaError(f"{where}: {exc}") from None
        if not isinstance(data, dict):
            raise SchemaError(f"{where}: payload is a JSON {type(data).__name__}, not an object")
        try:
            upcast = self._upcasters.upcast(stored.kind, data, from_version=stored.version, to_version=current)
        except SchemaError as exc:
            raise SchemaError(f"{where}: {exc}") from exc
        try:
            return canonical_json(upcast)
        except EncodingError as exc:
            raise SchemaError(f"{where}: upcast payload cannot be encoded: {exc}") from None


_DEFAULT_CODEC: Final = EventCodec()


def to_pending(event: EventBase) -> PendingEvent:
    """Encode ``event`` for appending: the payload is its canonical JSON without ``kind``/``version``."""
    return _DEFAULT_CODEC.to_pending(event)


def from_stored(stored: StoredEvent) -> EventBase:
    """Decode a stored row into its Event (upcasting older versions); raises :class:`SchemaError`."""
    return _DEFAULT_CODEC.from_stored(stored)
