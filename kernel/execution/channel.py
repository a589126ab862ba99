"""Length-prefixed frames over a stream socket, with deadlines.

A frame is a 4-byte little-endian length followed by that many payload bytes; the first payload byte
is the message kind. The same framing carries coordinator <-> worker and worker <-> Policy-child
messages. The receiving side treats the peer as potentially hostile: frames larger than
``max_frame`` are refused (:class:`ChannelError`), and a closed peer is reported as
:class:`ChannelClosed` rather than as a partial frame.

While waiting for a frame with :meth:`FrameChannel.receive`, extra file descriptors can be watched
(``drains``): whenever one becomes readable its callback runs, so the worker keeps a chatty Policy's
stdout pipe drained while it waits for the Policy's reply, and a full pipe can never block the Policy for long.
Such a wait costs one system call when the reply comes soon (as a Policy's ``act`` usually does): a blocking read that
ends after a short slice (``SO_RCVTIMEO``). Only when a slice ends without a frame does the wait turn to ``poll`` over
the socket and the watched descriptors, draining them (the slices never outlast the deadline: its last stretch is
always polled); once a watched descriptor had something to drain, every later wait of the channel polls from the start.
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
_SLICE_TIMEVAL: Final = struct.pack("@ll", 0, 5000)
"""One blocking read while descriptors are watched (``SO_RCVTIMEO``, a ``struct timeval``): 5 ms asked, which the
kernel rounds up to whole clock ticks (measured: 8-16 ms). About the longest a full pipe blocks a Policy that had been
quiet until then (from then on the channel polls)."""
_POLLED_STRETCH_SECONDS: Final = 0.05
"""The last stretch before a deadline is always polled (millisecond precision, as every wait was): it is longer than
a slice, so a slice never outlasts a deadline."""
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

    __slots__ = ("_buffer", "_drained", "_drains", "_fd", "_max_frame", "_poller", "_sliced", "sock")

    def __init__(self, sock: socket.socket, *, max_frame: int = CHANNEL_MAX_FRAME) -> None:
        self.sock = sock
        self._fd = sock.fileno()
        self._max_frame = max_frame
        self._buffer = bytearray()
        self._poller = select.poll()
        self._poller.register(self._fd, _POLL_IN)
        self._drains: dict[int, Callable[[], bool]] = {}
        self._drained = False
        """Whether a watched descriptor has had something to drain: waits then poll from the start."""
        self._sliced = False
        """Whether ``SO_RCVTIMEO`` is set to one slice (done at the first wait that watches descriptors)."""
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
            try:
                sent = self.sock.send(data, socket.MSG_DONTWAIT)  # the usual case: everything fits at once
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                self._send_rest(memoryview(data)[sent:], time.monotonic() + timeout, timeout)
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
        return self._take(data)

    def _take(self, data: bytes) -> bytes | None:
        """What :meth:`_read_available` does with the bytes read: one whole frame returned, else buffered."""
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

    def _receive_in_slices(self, deadline: float | None) -> bytes | None:
        """Blocking reads of at most one slice each, until a frame is whole; None once a slice ended without one, or
        the deadline is near (the caller then drains and polls)."""
        sock = self.sock
        if not self._sliced:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _SLICE_TIMEVAL)
            self._sliced = True
        while deadline is None or deadline - time.monotonic() > _POLLED_STRETCH_SECONDS:
            try:
                data = sock.recv(_READ_CHUNK)
            except BlockingIOError:  # the slice ended
                return None
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            size = len(data)
            if size >= 4 and not self._buffer:  # the usual case, one whole small frame (what _take does, inlined)
                (length,) = _HEADER.unpack_from(data)
                if length + 4 == size and length <= self._max_frame:
                    return data[4:]
            frame = self._take(data)
            if frame is None:
                frame = self._pop_frame()
            if frame is not None:
                return frame
        return None

    def receive(self, timeout: float | None = None) -> bytes:
        """The next frame. Waits at most ``timeout`` seconds (None: forever), then raises ChannelTimeout."""
        if self._buffer:
            frame = self._pop_frame()
            if frame is not None:
                return frame
        if not self._drains:
            if timeout is None and not self._buffer:  # a Policy child waiting for its next observation
                frame = self._read_available()
                if frame is None:  # part of a frame, or more than one
                    frame = self._pop_frame()
                if frame is not None:
                    return frame
        elif not self._drained:
            deadline = None if timeout is None else time.monotonic() + timeout
            frame = self._receive_in_slices(deadline)
            if frame is not None:
                return frame
            return self._receive_polling(deadline, timeout)
        if timeout is not None and not self._buffer:
            # Often the reply is there already (on one CPU the peer ran as soon as it was sent to): no wait needed.
            frame = self._read_available(socket.MSG_DONTWAIT)
            if frame is None:
                frame = self._pop_frame()
            if frame is not None:
                return frame
        return self._receive_polling(None if timeout is None else time.monotonic() + timeout, timeout)

    def _receive_polling(self, deadline: float | None, timeout: float | None) -> bytes:
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
                elif fd in drains:
                    self._drained = True
                    if not drains[fd]():
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
