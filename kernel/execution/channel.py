"""Length-prefixed frames over a stream socket, with deadlines.

A frame is a 4-byte little-endian length followed by that many payload bytes; the first payload byte
is the message kind. The same framing carries coordinator <-> worker and worker <-> Policy-child
messages. The receiving side treats the peer as potentially hostile: frames larger than
``max_frame`` are refused (:class:`ChannelError`), and a closed peer is reported as
:class:`ChannelClosed` rather than as a partial frame.

While waiting for a frame with :meth:`FrameChannel.receive`, extra file descriptors can be watched
(``drains``): whenever one becomes readable its callback runs, so the worker keeps a chatty Policy's
stdout pipe drained while it waits for the Policy's reply, and a full pipe can never block the Policy.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Final

from evoledger.ledger.errors import InfraError

__all__ = ["CHANNEL_MAX_FRAME", "ChannelClosed", "ChannelError", "ChannelTimeout", "FrameChannel"]

CHANNEL_MAX_FRAME: Final = 64 * 1024 * 1024
"""Largest payload (bytes) a :class:`FrameChannel` accepts unless given ``max_frame``: 64 MiB.

The execution channel's own limit (4-byte little-endian lengths); unrelated to the Session's
``SESSION_MAX_FRAME`` (big-endian, 1 MiB).
"""
_HEADER: Final = struct.Struct("<I")
_READ_CHUNK: Final = 64 * 1024
"""Bytes asked for per read. Not more: a larger request makes every read allocate (mmap) and free a large object,
which costs more than the whole per-step exchange of a small observation."""
_POLL_IN: Final = select.POLLIN | select.POLLPRI
_POLL_END: Final = select.POLLHUP | select.POLLERR | select.POLLNVAL


class ChannelError(InfraError):
    """The peer sent something that is not a frame (too large, or cut off)."""


class ChannelClosed(ChannelError):
    """The peer closed its end (or died) before a whole frame arrived."""


class ChannelTimeout(ChannelError):
    """No whole frame arrived before the deadline."""


class FrameChannel:
    """Frames over one connected stream socket (owned: :meth:`close` closes it)."""

    __slots__ = ("_buffer", "_drains", "_fd", "_max_frame", "_poller", "sock")

    def __init__(self, sock: socket.socket, *, max_frame: int = CHANNEL_MAX_FRAME) -> None:
        self.sock = sock
        self._fd = sock.fileno()
        self._max_frame = max_frame
        self._buffer = bytearray()
        self._poller = select.poll()
        self._poller.register(self._fd, _POLL_IN)
        self._drains: dict[int, Callable[[], bool]] = {}
        sock.setblocking(True)

    def fileno(self) -> int:
        """The socket's file descriptor (for selectors)."""
        return self._fd

    def send(self, payload: bytes, timeout: float | None = None, *, then: bytes | None = None) -> None:
        """Send one frame (and the frame ``then`` in the same write). Raises ChannelClosed if the peer is gone.

        With ``timeout``, a peer that stops reading cannot block the sender: ChannelTimeout is raised once
        the frame has not been fully accepted within ``timeout`` seconds (watched descriptors are drained
        meanwhile). Without it, the call blocks until the frame is sent.
        """
        data = _HEADER.pack(len(payload)) + payload
        if then is not None:
            data += _HEADER.pack(len(then)) + then
        try:
            if timeout is None:
                self.sock.sendall(data)
                return
            view = memoryview(data)
            try:
                sent = self.sock.send(view, socket.MSG_DONTWAIT)  # the usual case: everything fits at once
            except BlockingIOError:
                sent = 0
            if sent < len(view):
                self._send_rest(view[sent:], time.monotonic() + timeout, timeout)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosed(f"peer closed the channel while sending: {exc}") from None

    def _send_rest(self, view: memoryview, deadline: float, timeout: float) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        for fd in self._drains:
            poller.register(fd, _POLL_IN)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout(f"the peer did not accept a frame within {timeout:.3f} s")
            for fd, _event in poller.poll(max(1, int(remaining * 1000 + 0.999))):
                if fd == self._fd:
                    with contextlib.suppress(BlockingIOError):
                        view = view[self.sock.send(view, socket.MSG_DONTWAIT) :]
                elif fd in self._drains and not self._drains[fd]():
                    poller.unregister(fd)
                    self.unwatch(fd)

    def _pop_frame(self) -> bytes | None:
        buffer = self._buffer
        if len(buffer) < 4:
            return None
        (size,) = _HEADER.unpack_from(buffer)
        if size > self._max_frame:
            raise ChannelError(f"peer announced a {size}-byte frame; the limit is {self._max_frame} bytes")
        end = 4 + size
        if len(buffer) < end:
            return None
        frame = bytes(buffer[4:end])
        del buffer[:end]
        return frame

    def pending(self) -> bool:
        """Whether a whole frame is already buffered."""
        buffer = self._buffer
        return len(buffer) >= 4 and len(buffer) >= 4 + _HEADER.unpack_from(buffer)[0]

    def _read_available(self, flags: int = 0) -> bytes | None:
        """Read what is available; returns the frame read if it is exactly one whole frame (the usual case of a
        small message), else buffers the bytes for :meth:`_pop_frame` and returns None (also when ``flags`` has
        ``MSG_DONTWAIT`` and nothing is there yet)."""
        try:
            data = self.sock.recv(_READ_CHUNK, flags)
        except BlockingIOError:
            return None
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        if not data:
            cut = f" ({len(self._buffer)} bytes of an unfinished frame)" if self._buffer else ""
            raise ChannelClosed(f"peer closed the channel{cut}")
        size = len(data)
        if size >= 4 and not self._buffer:
            (length,) = _HEADER.unpack_from(data)
            if length + 4 == size and length <= self._max_frame:
                return data[4:]
        self._buffer += data
        return None

    def watch(self, fd: int, callback: Callable[[], bool]) -> None:
        """While :meth:`receive` waits, run ``callback`` whenever ``fd`` is readable.

        The callback returns False once its descriptor is exhausted (end of file); it is then unwatched.
        """
        if fd not in self._drains:
            self._poller.register(fd, _POLL_IN)
        self._drains[fd] = callback

    def unwatch(self, fd: int) -> None:
        """Stop watching ``fd`` (no-op if it is not watched)."""
        if self._drains.pop(fd, None) is not None:
            self._poller.unregister(fd)

    def receive(self, timeout: float | None = None) -> bytes:
        """The next frame. Waits at most ``timeout`` seconds (None: forever), then raises ChannelTimeout."""
        frame = self._pop_frame()
        if frame is not None:
            return frame
        if timeout is not None and not self._buffer:
            # Often the reply is there already (on one CPU the peer ran as soon as it was sent to): no wait needed.
            frame = self._read_available(socket.MSG_DONTWAIT)
            if frame is None:
                frame = self._pop_frame()
            if frame is not None:
                return frame
        deadline = None if timeout is None else time.monotonic() + timeout
        drains = self._drains
        while True:
            if deadline is None:
                if not drains:  # nothing else to watch: a plain blocking read
                    frame = self._read_available()
                    if frame is None:
                        frame = self._pop_frame()
                    if frame is not None:
                        return frame
                    continue
                wait_ms = None
            else:
                wait_ms = max(0, int((deadline - time.monotonic()) * 1000 + 0.999))
            frame = None
            for fd, event in self._poller.poll(wait_ms):
                if fd == self._fd:
                    if event & (_POLL_IN | _POLL_END):
                        frame = self._read_available()
                elif fd in drains and not drains[fd]():
                    self.unwatch(fd)
            if frame is None:
                frame = self._pop_frame()
            if frame is not None:
                return frame
            if deadline is not None and time.monotonic() >= deadline:
                raise ChannelTimeout(f"no reply within {timeout:.3f} s")

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self.sock.close()
