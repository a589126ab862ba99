"""Length-prefixed frames with deadlines: the framing every execution channel shares, and its socket transport.

A frame is a 4-byte little-endian length followed by that many payload bytes; the first payload byte is the message
kind. :class:`FrameBuffer` cuts what a peer sent into frames and treats the peer as potentially hostile: frames larger
than ``max_frame`` are refused (:class:`ChannelError`), and a closed peer is reported as :class:`ChannelClosed` rather
than as a partial frame. :class:`FrameChannel` carries frames over a stream socket (coordinator <-> worker); a Policy
child and its worker exchange them over a pair of pipes instead (:mod:`~.pipe_channel`), which cost less per step.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import time
from typing import Final

from evoledger.ledger.errors import InfraError

__all__ = [
    "CHANNEL_MAX_FRAME",
    "READ_CHUNK",
    "ChannelClosed",
    "ChannelError",
    "ChannelTimeout",
    "FrameBuffer",
    "FrameChannel",
    "frame_bytes",
    "wait_milliseconds",
]

CHANNEL_MAX_FRAME: Final = 64 * 1024 * 1024
"""Largest payload (bytes) a channel accepts unless given ``max_frame``: 64 MiB.

The execution channels' own limit (4-byte little-endian lengths); unrelated to the Session's
``SESSION_MAX_FRAME`` (big-endian, 1 MiB).
"""
_HEADER: Final = struct.Struct("<I")
READ_CHUNK: Final = 64 * 1024
"""Bytes asked for per read. Not more: a larger request makes every read allocate (mmap) and free a large object,
which costs more than the whole per-step exchange of a small observation."""


class ChannelError(InfraError):
    """The peer sent something that is not a frame (too large, or cut off)."""


class ChannelClosed(ChannelError):
    """The peer closed its end (or died) before a whole frame arrived."""


class ChannelTimeout(ChannelError):
    """No whole frame arrived before the deadline."""


def wait_milliseconds(seconds: float) -> int:
    """A wait in whole milliseconds for ``poll``, rounded up (never 0 for a positive wait: it would spin)."""
    return max(1, int(seconds * 1000 + 0.999))


def frame_bytes(payload: bytes, then: bytes | None = None) -> bytes:
    """The bytes that carry ``payload`` as one frame (and ``then`` as a second one, in the same write)."""
    data = _HEADER.pack(len(payload)) + payload
    if then is not None:
        data += _HEADER.pack(len(then)) + then
    return data


class FrameBuffer:
    """The bytes read from one peer, cut into whole frames."""

    __slots__ = ("_buffer", "_max_frame")

    def __init__(self, max_frame: int = CHANNEL_MAX_FRAME) -> None:
        self._buffer = bytearray()
        self._max_frame = max_frame

    def __len__(self) -> int:
        """Bytes held that are not yet part of a frame returned."""
        return len(self._buffer)

    def add(self, data: bytes) -> bytes | None:
        """Take the bytes just read; the oldest whole frame if there is one now, else None.

        Empty ``data`` is the peer's end of file: :class:`ChannelClosed`. A frame announced larger than ``max_frame``
        is :class:`ChannelError`."""
        size = len(data)
        if size >= 4 and not self._buffer:  # the usual case: exactly one whole small frame, nothing held before
            (length,) = _HEADER.unpack_from(data)
            if length + 4 == size and length <= self._max_frame:
                return data[4:]
        if not size:
            cut = f" ({len(self._buffer)} bytes of an unfinished frame)" if self._buffer else ""
            raise ChannelClosed(f"peer closed the channel{cut}")
        self._buffer += data
        return self.pop()

    def pop(self) -> bytes | None:
        """The oldest whole frame held, or None."""
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
        """Whether a whole frame is held."""
        buffer = self._buffer
        return len(buffer) >= 4 and len(buffer) >= 4 + _HEADER.unpack_from(buffer)[0]


class FrameChannel:
    """Frames over one connected stream socket (owned: :meth:`close` closes it)."""

    __slots__ = ("_fd", "_frames", "_poller", "sock")

    def __init__(self, sock: socket.socket, *, max_frame: int = CHANNEL_MAX_FRAME) -> None:
        self.sock = sock
        self._fd = sock.fileno()
        self._frames = FrameBuffer(max_frame)
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN | select.POLLPRI)
        sock.setblocking(True)

    def fileno(self) -> int:
        """The socket's file descriptor (for selectors)."""
        return self._fd

    def send(self, payload: bytes, timeout: float | None = None, *, then: bytes | None = None) -> None:
        """Send one frame (and the frame ``then`` in the same write). Raises ChannelClosed if the peer is gone.

        With ``timeout``, a peer that stops reading cannot block the sender: ChannelTimeout is raised once
        the frame has not been fully accepted within ``timeout`` seconds. Without it, the call blocks until the
        frame is sent.
        """
        data = frame_bytes(payload, then)
        try:
            if timeout is None:
                self.sock.sendall(data)
                return
            try:
                sent = self.sock.send(data, socket.MSG_DONTWAIT)  # the usual case: everything fits at once
            except BlockingIOError:
                sent = 0
            view = memoryview(data)[sent:]
            deadline = time.monotonic() + timeout
            writable = select.poll()
            writable.register(self._fd, select.POLLOUT)
            while view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ChannelTimeout(f"the peer did not accept a frame within {timeout:.3f} s")
                if writable.poll(wait_milliseconds(remaining)):
                    with contextlib.suppress(BlockingIOError):
                        view = view[self.sock.send(view, socket.MSG_DONTWAIT) :]
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosed(f"peer closed the channel while sending: {exc}") from None

    def pending(self) -> bool:
        """Whether a whole frame is already buffered."""
        return self._frames.pending()

    def _read(self, flags: int = 0) -> bytes | None:
        """One read (None when ``flags`` has ``MSG_DONTWAIT`` and nothing is there yet); a frame if one is whole."""
        try:
            data = self.sock.recv(READ_CHUNK, flags)
        except BlockingIOError:
            return None
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        return self._frames.add(data)

    def receive(self, timeout: float | None = None) -> bytes:
        """The next frame. Waits at most ``timeout`` seconds (None: forever), then raises ChannelTimeout."""
        frames = self._frames
        if len(frames):
            frame = frames.pop()
            if frame is not None:
                return frame
        if timeout is None:
            while True:
                frame = self._read()
                if frame is not None:
                    return frame
        deadline = time.monotonic() + timeout
        while True:
            frame = self._read(socket.MSG_DONTWAIT)
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout(f"no reply within {timeout:.3f} s")
            self._poller.poll(wait_milliseconds(remaining))

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self.sock.close()
