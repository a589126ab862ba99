"""What ``rejections.json`` in the Agent mirror lists: a bounded record of each refused request.

The mirror lists the last :data:`MAX_LISTED_REJECTIONS` refusals, each with its message cut to
:data:`MAX_MESSAGE_CHARS` characters and its request summary as recorded (the Host records a digest and a
short prefix, :func:`~evoledger.ledger.events.request_summary`). A request recorded in full by an older
Host is summarized the same way here when its canonical JSON exceeds :data:`MAX_REQUEST_BYTES`, so that
even an old log yields a small file. Pure functions of the Event's fields: the mirror stays a fold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.events import request_summary
from immutables import Map

__all__ = [
    "MAX_LISTED_REJECTIONS",
    "MAX_MESSAGE_CHARS",
    "MAX_REQUEST_BYTES",
    "append_listed",
    "omitted_note",
    "rejection_record",
]

MAX_LISTED_REJECTIONS: Final = 100
"""``rejections.json`` lists at most this many refusals: the latest ones (older ones are counted)."""

MAX_MESSAGE_CHARS: Final = 1024
"""A listed message is cut to this many characters (the Host's own messages are already this short)."""

MAX_REQUEST_BYTES: Final = 1024
"""A recorded request whose canonical JSON is larger is listed as its summary (digest, size, prefix)."""


def rejection_record(kind: str, code: str, message: str, retryable: bool, request: Mapping[str, Any] | None) -> bytes:
    """The canonical JSON of one listed refusal (``request`` is ``None`` for kinds that record none)."""
    if len(message) > MAX_MESSAGE_CHARS:
        keep = MAX_MESSAGE_CHARS - 48
        message = f"{message[:keep]} ... ({len(message) - keep} more characters)"
    record: dict[str, Any] = {"kind": kind, "code": code, "message": message, "retryable": retryable}
    if request is not None:
        small = len(canonical_json(dict(request))) <= MAX_REQUEST_BYTES
        record["request"] = request if small else request_summary(request)
    return canonical_json(record)


def append_listed(listed: Map[int, bytes], record: bytes) -> Map[int, bytes]:
    """``listed`` (items 0..n-1) with ``record`` appended, keeping the latest :data:`MAX_LISTED_REJECTIONS`.

    O(log n) while the list grows, O(:data:`MAX_LISTED_REJECTIONS`) once it is full: bounded either way.
    """
    if len(listed) < MAX_LISTED_REJECTIONS:
        return listed.set(len(listed), record)
    kept = [listed[i] for i in range(1, len(listed))]
    kept.append(record)
    return Map(dict(enumerate(kept)))


def omitted_note(total: int) -> dict[str, Any]:
    """The top-level fields of ``rejections.json`` once ``total`` refusals exceed what it lists."""
    omitted = total - MAX_LISTED_REJECTIONS
    if omitted <= 0:
        return {}
    return {"omitted": omitted, "note": f"only the latest {MAX_LISTED_REJECTIONS} refused requests are listed"}
