"""Bounded capture of a Policy's output: keep the tail, never block the writer for long.

A Policy may print without limit. The Policy's stdout/stderr pipe holds 1 MiB; the worker drains it
whenever it has to wait for the Policy's reply (:mod:`~.pipe_channel`) and at the Episode's end, and keeps
only the last ``limit`` bytes (with a one-line marker saying how much was dropped), so a chatty Policy is
never blocked for long on a full pipe and never grows the worker's memory.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["TailBuffer", "bound_text"]

_READ_CHUNK: Final = 256 * 1024


class TailBuffer:
    """The last ``limit`` bytes written to it, and how many bytes were dropped before them."""

    __slots__ = ("_data", "dropped", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dropped = 0
        self._data = bytearray()

    def write(self, chunk: bytes) -> None:
        """Append ``chunk``, dropping the oldest bytes beyond the limit (amortized: trims at 2x)."""
        self._data += chunk
        if len(self._data) > 2 * self.limit:
            self._trim()

    def _trim(self) -> None:
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.dropped += excess

    def getvalue(self) -> bytes:
        """The kept bytes, prefixed by a marker line if anything was dropped; never longer than ``limit``."""
        self._trim()
        if not self.dropped:
            return bytes(self._data)
        marker = f"[evoledger: {self.dropped} earlier bytes of output dropped]\n".encode()
        keep = max(0, self.limit - len(marker))
        return (marker + bytes(self._data[len(self._data) - keep :]))[: self.limit]

    def drain(self, fd: int) -> bool:
        """Read everything available from non-blocking ``fd``; False once it reached end of file."""
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.write(chunk)


def bound_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, keeping the head and the tail (the tail says what failed)."""
    if len(text) <= limit:
        return text
    if limit < 80:
        return text[len(text) - limit :]
    marker = f"\n[... {len(text) - limit} characters cut ...]\n"
    head = max(0, limit // 4)
    tail = max(0, limit - head - len(marker))
    return text[:head] + marker + text[len(text) - tail :]
