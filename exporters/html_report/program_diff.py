"""A bounded unified diff between two recorded Programs, read from the ledger's Objects.

A Program is a manifest of files (path -> Object digest); files whose digests agree are equal and are not read.
A run directory is untrusted input, so everything is bounded: files above :data:`MAX_FILE_BYTES` or not UTF-8 are
named, not diffed, and a diff stops after :data:`MAX_DIFF_LINES` lines (saying how many were left out). A file whose
Object was evicted or is missing is named too; nothing here raises for what a record holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Final, Protocol

from evoledger.ledger.errors import LedgerError

__all__ = ["MAX_DIFF_LINES", "MAX_FILE_BYTES", "ObjectReader", "program_diff"]

MAX_FILE_BYTES: Final = 256 * 1024
"""Files larger than this are not diffed (their change is named)."""
MAX_DIFF_LINES: Final = 400
"""A diff is cut after this many lines."""
MAX_LINE_CHARS: Final = 400
"""Each diff line is cut to this many characters."""


class ObjectReader(Protocol):
    """What the diff reads of an Object store (``ledger.objects``)."""

    def size(self, digest: str) -> int: ...

    def get(self, digest: str) -> bytes: ...


def _text(objects: ObjectReader, digest: str) -> tuple[list[str] | None, str]:
    """The file's lines, or ``None`` and why it cannot be diffed."""
    try:
        size = objects.size(digest)
        if size > MAX_FILE_BYTES:
            return None, f"{size} bytes, above the {MAX_FILE_BYTES}-byte diff limit"
        data = objects.get(digest)
    except LedgerError as exc:  # evicted, missing, damaged: the record is audited elsewhere
        return None, f"its Object cannot be read ({type(exc).__name__})"
    try:
        return data.decode("utf-8").splitlines(keepends=False), ""
    except UnicodeDecodeError:
        return None, "a binary file"


def program_diff(
    objects: ObjectReader, before: Mapping[str, str] | None, after: Mapping[str, str], *, context: int = 2
) -> str:
    """The unified diff from Program files ``before`` (``None``: no earlier Program) to ``after``; ``""``: equal."""
    old = dict(before or {})
    lines: list[str] = []
    for path in sorted({*old, *after}):
        a, b = old.get(path), after.get(path)
        if a == b:
            continue
        a_lines, a_why = _text(objects, a) if a is not None else ([], "")
        b_lines, b_why = _text(objects, b) if b is not None else ([], "")
        if a_lines is None or b_lines is None:
            lines.append(f"--- a/{path}\n+++ b/{path}\n(changed; not diffed: {a_why or b_why})")
            continue
        from_name = f"a/{path}" if a is not None else "/dev/null"
        to_name = f"b/{path}" if b is not None else "/dev/null"
        lines.extend(difflib.unified_diff(a_lines, b_lines, from_name, to_name, n=context, lineterm=""))
        if len(lines) > MAX_DIFF_LINES:
            break
    shown = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..." for line in lines]
    if len(shown) > MAX_DIFF_LINES:
        cut = len(shown) - MAX_DIFF_LINES
        shown = [*shown[:MAX_DIFF_LINES], f"... diff cut after {MAX_DIFF_LINES} lines ({cut}+ more not shown)"]
    return "\n".join(shown)
