"""Recorded text made safe for a terminal: control characters shown as escapes, never interpreted.

A run directory is untrusted input, and its Event text (kinds, ids, messages, names, paths) reaches the
terminal through tables, findings and error messages. Written raw, an ``ESC`` sequence clears the screen or
recolours it and a carriage return overwrites a line, so a record could draw a fake verdict. Every command
passes such text through :func:`printable` (C0 and C1 controls, DEL, and the Unicode line separators and
bidirectional overrides become ``\\xNN`` / ``\\uNNNN`` text); rich output also escapes its markup
(:func:`markup`, :func:`cell`). ``--json`` output needs none of this: JSON escapes control characters itself.
"""

from __future__ import annotations

import re
from typing import Final

from rich.markup import escape
from rich.text import Text

__all__ = ["cell", "markup", "printable"]

_UNSAFE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``str(text)`` with every control character written as an escape.

    >>> printable("\\x1b[2Jok\\r")
    '\\\\x1b[2Jok\\\\x0d'
    """
    return _UNSAFE.sub(_escaped, str(text))


def markup(text: object) -> str:
    """:func:`printable` text that rich's console markup shows literally (``[red]`` stays text)."""
    return escape(printable(text))


def cell(text: object) -> Text:
    """A rich table cell or console argument holding :func:`printable` text, never parsed as markup."""
    return Text(printable(text))
