"""Which Object digests an Event refers to, by the naming convention of ``ledger.events.base``.

A digest is an Object reference when it is the value (or an item of the list value) of a key named
``digest``, ``digests``, ``*_digest`` or ``*_digests``, or a value of a ``files`` mapping. Only
well-formed digests are collected, so ``None`` and absent optional fields contribute nothing.

:func:`payload_object_refs` applies the convention at any depth, free-form JSON included: it is the
fast, schema-free superset that ``verify()`` scans payload bytes for. :func:`typed_object_refs`
applies it through the schema: the free-form JSON fields (``dict[str, JsonValue]``, e.g. an
Episode's ``metrics``, a Benchmark's ``params``, the recorded ``config``) are opaque, so an
Environment metric called ``map_digest`` is data, not an Object reference.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import Any, Final

from evoledger.ledger.canonical import is_digest
from evoledger.ledger.events.base import EventBase
from evoledger.ledger.events.union import EVENT_TYPES
from pydantic import BaseModel, JsonValue

__all__ = ["is_reference_field", "object_refs", "payload_object_refs", "typed_object_refs"]

_REFERENCE_KEY: Final = re.compile(r"^(?:.+_)?digests?$")
_NO_PLAN: Final[tuple[frozenset[str], dict[str, type[BaseModel]]]] = (frozenset(), {})
"""The plan of a dict read without a model: nothing opaque, nothing nested."""


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


def _walk(value: Any, found: set[str], model: type[BaseModel] | None = None) -> None:
    """Collect references below ``value``; a dict read as ``model`` skips its free-form JSON fields."""
    if isinstance(value, dict):
        opaque, nested = _plan(model) if model is not None else _NO_PLAN
        for key, item in value.items():
            if key in opaque:
                continue
            if isinstance(key, str) and is_reference_field(key):
                _collect(item, found)
            elif key == "files" and isinstance(item, dict):
                for digest in item.values():
                    _collect(digest, found)
            _walk(item, found, nested.get(key))
    elif isinstance(value, list | tuple):
        for item in value:  # a list of nested models: each dict in it is one
            _walk(item, found, model if isinstance(item, dict) else None)


def payload_object_refs(data: Any) -> frozenset[str]:
    """The Object digests referred to by a parsed payload (e.g. ``StoredEvent.data()``)."""
    found: set[str] = set()
    _walk(data, found)
    return frozenset(found)


def object_refs(event: EventBase) -> frozenset[str]:
    """The Object digests ``event`` refers to."""
    return payload_object_refs(event.model_dump(mode="json"))


def typed_object_refs(kind: str, data: Any) -> frozenset[str]:
    """The Object digests a parsed payload of ``kind`` refers to, free-form JSON fields left out.

    A kind the schema does not know, and any key its model does not declare, fall back to the
    convention over everything below them (as :func:`payload_object_refs`), so nothing is missed.
    """
    model = EVENT_TYPES.get(kind)
    found: set[str] = set()
    _walk(data, found, model if isinstance(data, dict) else None)
    return frozenset(found)


@functools.cache
def _plan(model: type[BaseModel]) -> tuple[frozenset[str], dict[str, type[BaseModel]]]:
    """A model's free-form JSON fields, and the fields that hold (lists of) a nested model."""
    opaque: set[str] = set()
    nested: dict[str, type[BaseModel]] = {}
    for name, field in model.model_fields.items():
        if _is_free_form(field.annotation):
            opaque.add(name)
        else:
            part = _model_in(field.annotation)
            if part is not None:
                nested[name] = part
    return frozenset(opaque), nested


def _is_free_form(annotation: Any) -> bool:
    if typing.get_origin(annotation) is dict:
        return typing.get_args(annotation)[1:] == (JsonValue,)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_is_free_form(arg) for arg in typing.get_args(annotation) if arg is not type(None))
    return False


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        part = _model_in(arg)
        if part is not None:
            return part
    return None
