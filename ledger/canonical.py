"""Canonical JSON: the one byte encoding that Event payloads are hashed in.

Sorted keys, compact separators, UTF-8 (no ASCII escaping), NaN and infinities rejected, and only
JSON's own types accepted (``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int``,
``float``, ``bool``, ``None``). Anything else raises :class:`EncodingError`; there is never a
``repr`` fallback, so the encoding cannot drift silently when a new type sneaks in.

Whatever :func:`canonical_json` returns is canonical for the value it holds: parsing it and encoding
again gives the same bytes (a property test holds it to that). This is why an Event encoded by
:meth:`~evoledger.ledger.records.PendingEvent.encode` needs no second check when it is appended.
"""

from __future__ import annotations

import hashlib
import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any, Final

import orjson
from evoledger.ledger.errors import EncodingError

__all__ = [
    "DIGEST_PATTERN",
    "MAX_PAYLOAD_BYTES",
    "MAX_PAYLOAD_DEPTH",
    "SCAN_JSON",
    "canonical_json",
    "digest_of",
    "is_canonical",
    "is_digest",
    "parse_canonical",
    "parse_payload",
]

DIGEST_PATTERN: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


def _reject(value: object) -> object:
    raise EncodingError(
        f"cannot encode a value of type {type(value).__name__} canonically: {value!r:.80}; "
        "convert it to a JSON type (dict, list, str, int, float, bool, None) first"
    )


_STRICT_ENCODER: Final = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    default=_reject,
)


def canonical_json(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON bytes.

    >>> canonical_json({"b": 1, "a": [True, None, 1.5, "é"]})
    b'{"a":[true,null,1.5,"\\xc3\\xa9"],"b":1}'
    """
    try:
        text = _STRICT_ENCODER.encode(value)
    except RecursionError:
        raise EncodingError("cannot encode canonically: the value is nested too deeply") from None
    except ValueError as exc:  # NaN / infinity (allow_nan=False) or a circular reference
        raise EncodingError(
            f"cannot encode canonically: {exc}; replace NaN/infinite floats with null or a finite number"
        ) from None
    except TypeError as exc:  # mixed key types that cannot be sorted
        raise EncodingError(f"cannot encode canonically: {exc}; dict keys must be strings") from None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodingError(
            f"cannot encode canonically: a string holds a lone surrogate ({exc.object[exc.start : exc.end]!r}); "
            "strings must be valid Unicode"
        ) from None
    _require_string_keys(value)
    return data


def _require_string_keys(value: Any) -> None:
    """Refuse dicts with non-string keys, which the stdlib encoder would silently turn into strings.

    ``{10: 1, 9: 2}`` would encode as ``{"9":2,"10":1}``: keys sorted as numbers, so the bytes are
    not canonical for the value they parse back to. orjson refuses such keys quickly; only when it
    fails for another reason (huge ints, deep nesting, float subclasses) is the value walked here.
    """
    try:
        orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        key = _first_non_string_key(value)
        if key is not _NO_KEY:
            raise EncodingError(
                f"cannot encode canonically: dict key {key!r} is a {type(key).__name__}; dict keys must be strings"
            ) from None


_NO_KEY: Final = object()


def _first_non_string_key(value: Any) -> object:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return key
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return _NO_KEY


def parse_canonical(data: bytes) -> Any:
    """Parse JSON bytes written by :func:`canonical_json` (NaN/Infinity literals are refused).

    Bounded: nesting deeper than the interpreter's recursion limit and integers longer than
    ``sys.get_int_max_str_digits()`` are an :class:`EncodingError`, like invalid UTF-8, never another exception.
    """

    def _no_constants(name: str) -> object:
        raise EncodingError(f"non-finite number {name} is not canonical JSON")

    try:
        return json.loads(data, parse_constant=_no_constants)
    except RecursionError:
        raise EncodingError("not valid canonical JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and an integer past sys.get_int_max_str_digits()
        raise EncodingError(f"not valid canonical JSON: {str(exc)[:200]}") from None


MAX_PAYLOAD_BYTES: Final = 64 * 1024 * 1024
"""The largest Event payload written or read (64 MiB): it bounds every string a recorded payload holds."""

MAX_PAYLOAD_DEPTH: Final = 256
"""The deepest nesting of arrays and objects a recorded payload may hold (recursive readers stay far from the
interpreter's recursion limit)."""


def _deeper_than(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


def parse_payload(data: bytes) -> Any:
    """Parse a recorded Event payload, bounded; anything unreadable is an :class:`EncodingError`.

    At most :data:`MAX_PAYLOAD_BYTES` and :data:`MAX_PAYLOAD_DEPTH` levels (checked only when the payload holds
    that many brackets at all); orjson reads the common case (strict UTF-8); what it refuses (integers beyond
    64 bits) goes through :func:`parse_canonical`, which is bounded by the recursion limit and
    ``sys.get_int_max_str_digits()``.
    """
    if len(data) > MAX_PAYLOAD_BYTES:
        raise EncodingError(f"payload of {len(data):,} bytes is larger than the {MAX_PAYLOAD_BYTES:,}-byte limit")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = parse_canonical(data)
    if data.count(b"[") + data.count(b"{") > MAX_PAYLOAD_DEPTH and _deeper_than(value, MAX_PAYLOAD_DEPTH):
        raise EncodingError(f"payload nests arrays and objects deeper than {MAX_PAYLOAD_DEPTH} levels")
    return value


SCAN_JSON: Final[Callable[[str, int], tuple[Any, int]]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)
"""The C scanner behind ``json.loads``: one JSON value at an offset, no whitespace skipping."""


def is_canonical(data: object) -> bool:
    """Whether ``data`` is bytes holding exactly ``canonical_json`` of the one JSON value it holds."""
    if not isinstance(data, bytes):
        return False
    try:
        value, _end = SCAN_JSON(data.decode("utf-8"), 0)  # trailing bytes make the comparison fail
        return canonical_json(value) == data
    except (UnicodeDecodeError, StopIteration, ValueError, RecursionError, EncodingError):
        return False


def digest_of(data: bytes) -> str:
    """The content address of ``data``: ``sha256:`` followed by 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    """Whether ``value`` is a well-formed content address."""
    return isinstance(value, str) and DIGEST_PATTERN.match(value) is not None
