"""Which Object digests an Event refers to, by the naming convention of ``ledger.events.base``.

A digest is an Object reference when it is the value (or an item of the list value) of a key named
``digest``, ``digests``, ``*_digest`` or ``*_digests``, or a value of a ``files`` mapping -- at any
depth, free-form JSON objects included. Only well-formed digests are collected, so ``None`` and
absent optional fields contribute nothing.
"""

from __future__ import annotations

import re
from typing import Any, Final

from evoledger.ledger.canonical import is_digest
from evoledger.ledger.events.base import EventBase

__all__ = ["is_reference_field", "object_refs", "payload_object_refs"]

_REFERENCE_KEY: Final = re.compile(r"^(?:.+_)?digests?$")


def is_reference_field(name: str) -> bool:
    """Whether a field or key called ``name`` holds Object digests under the convention."""
    return _REFERENCE_KEY.match(name) is not None


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if is_digest(value):
            found.add(value)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found)


def _walk(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and is_reference_field(key):
                _collect(item, found)
            elif key == "files" and isinstance(item, dict):
                for digest in item.values():
                    _collect(digest, found)
            _walk(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk(item, found)


def payload_object_refs(data: Any) -> frozenset[str]:
    """The Object digests referred to by a parsed payload (e.g. ``StoredEvent.data()``)."""
    found: set[str] = set()
    _walk(data, found)
    return frozenset(found)


def object_refs(event: EventBase) -> frozenset[str]:
    """The Object digests ``event`` refers to."""
    return payload_object_refs(event.model_dump(mode="json"))
