"""Frames over a socket (coordinator <-> worker) and over pipes (worker <-> Policy child): the contract both transports
keep, each test run over both. What only the pipes do is in ``test_pipe_channel.py``."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import pytest
from evoledger.kernel.execution.channel import (
    ChannelClosed,
    ChannelError,
    ChannelTimeout,
    FrameBuffer,
    FrameChannel,
    frame_bytes,
)
from evoledger.kernel.execution.pipe_channel import PipeChannel
from hypothesis import given
from hypothesis import strategies as st


class Pair(NamedTuple):
    left: FrameChannel | PipeChannel
    """Sends (with or without deadlines)."""
    right: FrameChannel | PipeChannel
    """Receives, with deadlines."""
    raw: Callable[[bytes], None]
    """Writes bytes that are not frames into ``left``'s direction."""


MakePair = Callable[..., Pair]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _socket_pair(max_frame: int) -> Pair:
    a, b = socket.socketpair()
    return Pair(FrameChannel(a, max_frame=max_frame), FrameChannel(b, max_frame=max_frame), a.sendall)


def _pipe_pair(max_frame: int) -> Pair:
    right_reads, left_writes = os.pipe()
    left_reads, right_writes = os.pipe()
    left = PipeChannel(left_reads, left_writes, timed=True, max_frame=max_frame)
    right = PipeChannel(right_reads, right_writes, timed=True, max_frame=max_frame)

    def raw(data: bytes) -> None:
        os.set_blocking(left_writes, True)
        _write_all(left_writes, data)
        os.set_blocking(left_writes, False)

    return Pair(left, right, raw)


@pytest.fixture(params=["socket", "pipes"])
def pair(request: pytest.FixtureRequest) -> Iterator[MakePair]:
    """Makes connected pairs over the transport under test (``max_frame`` its argument); closes them after."""
    made: list[Pair] = []

    def make(max_frame: int = 1 << 20) -> Pair:
        made.append(_socket_pair(max_frame) if request.param == "socket" else _pipe_pair(max_frame))
        return made[-1]

    yield make
    for left, right, _raw in made:
        left.close()
        right.close()


def test_frames_arrive_whole_and_in_order(pair: MakePair) -> None:
    left, right, _raw = pair(8 << 20)
    big = os.urandom(3 << 20)

    def send_all() -> None:
        for message in (b"a", b"", big, b"z"):
            left.send(message)

    sender = threading.Thread(target=send_all)
    sender.start()
    assert [right.receive(5) for _ in range(4)] == [b"a", b"", big, b"z"]
    sender.join()


def test_receive_times_out_and_reports_a_closed_peer(pair: MakePair) -> None:
    left, right, raw = pair()
    began = time.monotonic()
    with pytest.raises(ChannelTimeout, match=r"no reply within 0\.100 s"):
        right.receive(0.1)
    assert time.monotonic() - began >= 0.1
    raw(struct.pack("<I", 10) + b"abc")
    left.close()
    with pytest.raises(ChannelClosed, match="7 bytes of an unfinished frame"):
        right.receive(1)


def test_a_peer_that_stops_reading_cannot_block_a_timed_send(pair: MakePair) -> None:
    left, right, _raw = pair()
    left.send(b"fits", timeout=1)
    assert right.receive(1) == b"fits"
    began = time.monotonic()
    with pytest.raises(ChannelTimeout, match="did not accept a frame"):
        left.send(b"x" * (64 << 20), timeout=0.2)  # far more than a socket's buffers or a pipe hold
    assert 0.2 <= time.monotonic() - began < 10  # bounded (no wait for the 64 MiB), generous under load
    right.close()
    with pytest.raises(ChannelClosed):
        left.send(b"y" * (1 << 20), timeout=1)


def test_oversized_frames_are_refused(pair: MakePair) -> None:
    left, right, _raw = pair(16)
    left.send(b"x" * 17)
    with pytest.raises(ChannelError, match="17-byte frame; the limit is 16"):
        right.receive(1)


def test_frames_that_arrive_together_or_in_pieces_are_each_received_whole(pair: MakePair) -> None:
    _left, right, raw = pair()
    raw(struct.pack("<I", 1) + b"a" + struct.pack("<I", 2) + b"bc")  # two frames in one read
    assert right.receive() == b"a"
    assert right.receive() == b"bc"
    raw(struct.pack("<I", 5) + b"de")  # a frame in two pieces

    def rest() -> None:
        time.sleep(0.05)
        raw(b"fgh")

    thread = threading.Thread(target=rest)
    thread.start()
    assert right.receive() == b"defgh"
    thread.join()


@given(st.lists(st.binary(max_size=40), max_size=8), st.lists(st.integers(1, 60), max_size=20))
def test_frames_cut_anywhere_come_out_whole_and_in_order(payloads: list[bytes], cuts: list[int]) -> None:
    # The framing both transports share: however the peer's bytes arrive (one frame, several, or pieces of one),
    # every frame comes out once, whole, in order; an end of file inside a frame is a closed channel.
    data = b"".join(frame_bytes(payload) for payload in payloads)
    frames, received, position = FrameBuffer(64), [], 0
    for size in [*cuts, len(data)]:
        chunk = data[position : position + size]
        position += len(chunk)
        if not chunk:
            break
        frame = frames.add(chunk)
        while frame is not None:
            received.append(frame)
            frame = frames.pop()
    assert received == payloads
    assert len(frames) == 0
    frames.add(frame_bytes(b"half")[:5])
    with pytest.raises(ChannelClosed, match=r"\(5 bytes of an unfinished frame\)"):
        frames.add(b"")
