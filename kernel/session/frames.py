"""Frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON.

Frames are written as canonical JSON and read strictly: NaN/Infinity, floats that overflow to
infinity, integers outside int64, duplicate object keys, lone surrogates and nesting deeper than
:data:`MAX_JSON_DEPTH` are all refused as ``invalid_request``. A frame longer than the receiver's
``max_frame`` is refused from its header alone.
"""

from __future__ import annotations

import json
import math
import struct
from typing import TYPE_CHECKING, Any, Final

from evoledger.kernel.session.rejections import MalformedRequest
from evoledger.ledger.canonical import canonical_json

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["FRAME_HEADER", "MAX_JSON_DEPTH", "SESSION_MAX_FRAME", "decode_body", "encode_frame", "frame_length"]

FRAME_HEADER: Final = struct.Struct(">I")
"""The 4-byte big-endian length prefix of every frame."""

SESSION_MAX_FRAME: Final = 1 << 20
"""Largest Session frame body (bytes) accepted by default: 1 MiB (the execution channel has its own limit)."""

MAX_JSON_DEPTH: Final = 32
"""Deepest nesting of arrays/objects a frame body may have."""

_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


def encode_frame(message: BaseModel | dict[str, Any]) -> bytes:
    """A complete frame (length prefix + canonical JSON body) for ``message``.

    Raises :class:`~evoledger.ledger.errors.EncodingError` for values JSON cannot carry (NaN, sets, ...).
    """
    data = message if isinstance(message, dict) else message.model_dump(mode="json")  # no pydantic import here
    body = canonical_json(data)
    return FRAME_HEADER.pack(len(body)) + body


def frame_length(header: bytes, max_frame: int) -> int:
    """The body length announced by a 4-byte ``header``; :class:`MalformedRequest` if 0 or above ``max_frame``."""
    length: int = FRAME_HEADER.unpack(header)[0]
    if length == 0:
        raise MalformedRequest("invalid_request", "empty frame: the length prefix is 0; send a JSON request body")
    if length > max_frame:
        raise MalformedRequest(
            "invalid_request",
            f"frame of {length} bytes exceeds the limit of {max_frame} bytes; send a 4-byte big-endian length "
            "followed by a UTF-8 JSON request (garbage bytes also end up here)",
        )
    return length


class _BadJson(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text) > 20:
        raise _BadJson(f"integer {text[:24]}... is outside the int64 range")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _BadJson(f"integer {text} is outside the int64 range")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadJson(f"number {text[:40]} overflows to infinity; send a finite number")
    return value


def _parse_constant(name: str) -> Any:
    raise _BadJson(f"{name} is not JSON; send a finite number or null")


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _BadJson(f"duplicate object key {key!r}; send each key once")
        result[key] = value
    return result


def _check_tree(value: Any) -> None:
    """Reject nesting deeper than MAX_JSON_DEPTH and strings that are not valid Unicode (lone surrogates)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _BadJson("a string contains a lone surrogate escape; send valid Unicode text") from None
        elif isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise _BadJson(f"JSON nested deeper than {MAX_JSON_DEPTH} levels; flatten the request")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def decode_body(body: bytes) -> Any:
    """Parse a frame body strictly; :class:`MalformedRequest` (``invalid_request``) on any violation."""
    try:
        text = body.decode("utf-8")
        value = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
            object_pairs_hook=_object_pairs,
        )
        _check_tree(value)
    except UnicodeDecodeError as exc:
        raise MalformedRequest(
            "invalid_request", f"frame body is not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    except _BadJson as exc:
        raise MalformedRequest("invalid_request", str(exc)) from None
    except RecursionError:
        raise MalformedRequest("invalid_request", f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # json.JSONDecodeError
        raise MalformedRequest("invalid_request", f"frame body is not valid JSON: {exc}") from None
    return value
