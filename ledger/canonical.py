"""Canonical JSON: the one byte encoding that Event payloads are hashed in.

Sorted keys, compact separators, UTF-8 (no ASCII escaping), NaN and infinities rejected, and only
JSON's own types accepted (``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``int``,
``float``, ``bool``, ``None``). Anything else raises :class:`EncodingError`; there is never a
``repr`` fallback, so the encoding cannot drift silently when a new type sneaks in.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

from evoledger.ledger.errors import EncodingError

__all__ = ["DIGEST_PATTERN", "canonical_json", "digest_of", "is_digest", "parse_canonical"]

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
    except ValueError as exc:  # NaN / infinity (allow_nan=False) or a circular reference
        raise EncodingError(
            f"cannot encode canonically: {exc}; replace NaN/infinite floats with null or a finite number"
        ) from None
    except TypeError as exc:  # non-string dict keys
        raise EncodingError(f"cannot encode canonically: {exc}; dict keys must be strings") from None
    return text.encode("utf-8")


def parse_canonical(data: bytes) -> Any:
    """Parse JSON bytes written by :func:`canonical_json` (NaN/Infinity literals are refused)."""

    def _no_constants(name: str) -> object:
        raise EncodingError(f"non-finite number {name} is not canonical JSON")

    try:
        return json.loads(data, parse_constant=_no_constants)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EncodingError(f"not valid canonical JSON: {exc}") from None


def digest_of(data: bytes) -> str:
    """The content address of ``data``: ``sha256:`` followed by 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    """Whether ``value`` is a well-formed content address."""
    return isinstance(value, str) and DIGEST_PATTERN.match(value) is not None
