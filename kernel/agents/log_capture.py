"""Capturing an Agent's output with a fixed memory and disk budget: the head, a ring buffer of the tail, counts.

An Agent may print without end (hundreds of MB, or forever). Each of its output streams is a pipe read by a
thread of the Host into a :class:`CappedLog`: the first :data:`AGENT_LOG_HEAD_BYTES` bytes are kept, then a
ring buffer keeps the last :data:`AGENT_LOG_TAIL_BYTES` bytes; whatever falls between is counted (bytes and
lines) and dropped. The log file (``stdout.log`` / ``stderr.log``) holds the output as it arrives while it
fits the cap, so it can be watched live, and is rewritten at the end as the head, one line saying exactly
what was dropped, and the tail. That file is what the Host stores as an Object, so neither the Host's memory
nor the ledger grows with what the Agent prints. The file is created fresh (``O_EXCL | O_NOFOLLOW``, after
removing whatever was at its name) and rewritten atomically, so a planted link there is never written through.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from evoledger.ledger.run_files import open_root, write_file_at

__all__ = [
    "AGENT_LOG_HEAD_BYTES",
    "AGENT_LOG_TAIL_BYTES",
    "ARRIVALS_KEPT",
    "TIMES_SUFFIX",
    "TRANSCRIPT_HEAD_BYTES",
    "CappedLog",
    "StreamCapture",
]

AGENT_LOG_HEAD_BYTES: Final = 256 * 1024
"""The first bytes of each Agent stream that are always kept."""

AGENT_LOG_TAIL_BYTES: Final = 2 * 1024 * 1024
"""The last bytes of each Agent stream that are always kept (a ring buffer)."""

TRANSCRIPT_HEAD_BYTES: Final = 32 * 1024 * 1024
"""The head kept of a stdout that is a machine-readable transcript (``AgentCommand.transcript``): a whole Run's
transcript usually fits, so the ledger keeps every message, not just the first and last."""

ARRIVALS_KEPT: Final = 100_000
"""Chunk arrival times kept per stream (a transcript's lines are timed by them)."""

TIMES_SUFFIX: Final = ".times"
"""``stdout.log.times``: the JSON of :meth:`CappedLog.timing`, written beside a log whose arrivals are recorded."""

_READ_BYTES: Final = 64 * 1024
_POLL_MS: Final = 100


class CappedLog:
    """The head and the tail of a byte stream, and how much of its middle was dropped."""

    def __init__(
        self,
        head_bytes: int = AGENT_LOG_HEAD_BYTES,
        tail_bytes: int = AGENT_LOG_TAIL_BYTES,
        *,
        arrivals: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._head_cap = head_bytes
        self._tail_cap = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0
        self.dropped_bytes = 0
        self.dropped_lines = 0
        self._note_bytes = 0
        self._clock = clock
        self.arrivals: list[tuple[int, float]] | None = [] if arrivals else None
        """With ``arrivals``: (bytes of the stream so far, ``clock()``) as each chunk arrived, the first
        :data:`ARRIVALS_KEPT`; so a line's arrival time is that of the first chunk that reaches its end."""

    def feed(self, data: bytes) -> None:
        """Add ``data`` (amortised O(len(data)); memory stays under twice the cap)."""
        self.total_bytes += len(data)
        if self.arrivals is not None and len(self.arrivals) < ARRIVALS_KEPT:
            self.arrivals.append((self.total_bytes, self._clock()))
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._tail_cap
        if excess > self._tail_cap:  # trim in large steps: each byte is moved a bounded number of times
            self._drop(excess)

    def _drop(self, count: int) -> None:
        self.dropped_bytes += count
        self.dropped_lines += self._tail.count(b"\n", 0, count)
        del self._tail[:count]

    def render(self) -> bytes:
        """The kept bytes, with a line saying what was dropped between head and tail (if anything)."""
        excess = len(self._tail) - self._tail_cap
        if excess > 0:
            self._drop(excess)
        if not self.dropped_bytes:
            return bytes(self._head + self._tail)
        note = (
            f"\n[evoledger: {self.dropped_bytes} bytes ({self.dropped_lines} newlines) of this output were dropped "
            f"here; of {self.total_bytes} bytes, the first {len(self._head)} and the last {len(self._tail)} are "
            "kept]\n"
        )
        self._note_bytes = len(note)
        return bytes(self._head) + note.encode("ascii") + bytes(self._tail)

    def timing(self) -> dict[str, Any]:
        """Where the rendered bytes come from in the stream, and the arrivals (call after :meth:`render`):
        rendered offsets below ``head_bytes`` are stream offsets; from ``head_bytes + note_bytes`` on, rendered offset
        ``r`` is stream offset ``tail_from + r - head_bytes - note_bytes``."""
        return {
            "total_bytes": self.total_bytes,
            "head_bytes": len(self._head),
            "note_bytes": self._note_bytes,
            "tail_from": self.total_bytes - len(self._tail) if self.dropped_bytes else len(self._head),
            "arrivals": self.arrivals or [],
        }


class StreamCapture:
    """A thread reading one pipe into a :class:`CappedLog` and keeping ``path`` up to date (see the module doc)."""

    def __init__(self, read_fd: int, path: Path, log: CappedLog | None = None) -> None:
        self._fd = read_fd
        self._path = path
        self.log = log or CappedLog()
        self._stop = threading.Event()
        self._live = open(path, "wb", opener=_fresh_file)  # noqa: SIM115 (closed in finish())
        self._live_limit = self.log._head_cap + self.log._tail_cap
        self._thread = threading.Thread(target=self._run, name=f"agent-log-{path.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            while not self._stop.is_set():
                if not poller.poll(_POLL_MS):
                    continue
                try:
                    data = os.read(self._fd, _READ_BYTES)
                except OSError:
                    return
                if not data:
                    return  # every writer closed the pipe
                self.log.feed(data)
                self._write_live(data)
        finally:
            os.close(self._fd)

    def _write_live(self, data: bytes) -> None:
        if self._live.closed or self.log.total_bytes > self._live_limit:
            return  # past the cap: the file is rewritten from the capped log at the end
        with contextlib.suppress(OSError):
            self._live.write(data)
            self._live.flush()

    def finish(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the end of the stream, stop reading, and write the capped log to ``path``."""
        self._thread.join(timeout)
        self._stop.set()
        self._thread.join()
        self._live.close()
        folder = open_root(self._path.parent)
        try:
            write_file_at(folder, self._path.name, self.log.render(), self._path, tmp=self._path.name + ".tmp")
            if self.log.arrivals is not None:  # when each line arrived (kernel.agents.transcripts reads it)
                times = self._path.with_name(self._path.name + TIMES_SUFFIX)
                data = json.dumps(self.log.timing(), separators=(",", ":")).encode("ascii")
                write_file_at(folder, times.name, data, times, tmp=times.name + ".tmp")
        finally:
            os.close(folder)


def _fresh_file(path: str, flags: int) -> int:
    """Create ``path`` anew for writing: whatever was at its name (a planted link, a fifo) is removed, not followed."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
        os.unlink(path)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
