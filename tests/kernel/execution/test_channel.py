"""Frames over sockets, bounded output capture, and bounded text."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from evoledger.kernel.execution.capture import TailBuffer, bound_text
from evoledger.kernel.execution.channel import ChannelClosed, ChannelError, ChannelTimeout, FrameChannel
from hypothesis import given, settings
from hypothesis import strategies as st

_OPEN: list[FrameChannel] = []


def _pair(max_frame: int = 1 << 20) -> tuple[FrameChannel, FrameChannel]:
    a, b = socket.socketpair()
    pair = FrameChannel(a, max_frame=max_frame), FrameChannel(b, max_frame=max_frame)
    _OPEN.extend(pair)
    return pair


@pytest.fixture(autouse=True)
def _close_channels() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def test_frames_arrive_whole_and_in_order() -> None:
    left, right = _pair(max_frame=8 << 20)
    big = os.urandom(3 << 20)

    def send_all() -> None:
        for message in (b"a", b"", big, b"z"):
            left.send(message)

    sender = threading.Thread(target=send_all)
    sender.start()
    assert [right.receive(5) for _ in range(4)] == [b"a", b"", big, b"z"]
    sender.join()


def test_receive_times_out_and_reports_a_closed_peer() -> None:
    left, right = _pair()
    began = time.monotonic()
    with pytest.raises(ChannelTimeout, match=r"no reply within 0\.100 s"):
        right.receive(0.1)
    assert time.monotonic() - began >= 0.1
    left.sock.sendall(struct.pack("<I", 10) + b"abc")
    left.close()
    with pytest.raises(ChannelClosed, match="7 bytes of an unfinished frame"):
        right.receive(1)


def test_a_peer_that_stops_reading_cannot_block_a_timed_send() -> None:
    left, right = _pair()
    left.send(b"fits", timeout=1)
    assert right.receive(1) == b"fits"
    began = time.monotonic()
    with pytest.raises(ChannelTimeout, match="did not accept a frame"):
        left.send(b"x" * (64 << 20), timeout=0.2)  # far more than the socket buffers hold
    assert 0.2 <= time.monotonic() - began < 10  # bounded (no wait for the 64 MiB), generous under load
    right.close()
    with pytest.raises(ChannelClosed):
        left.send(b"y" * (1 << 20), timeout=1)


def test_oversized_frames_are_refused() -> None:
    left, right = _pair(max_frame=16)
    left.send(b"x" * 17)
    with pytest.raises(ChannelError, match="17-byte frame; the limit is 16"):
        right.receive(1)


def test_watched_descriptors_are_drained_while_waiting() -> None:
    left, right = _pair()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    tail = TailBuffer(1024)
    right.watch(read_fd, lambda: tail.drain(read_fd))

    def chatter() -> None:
        os.write(write_fd, b"hello ")
        time.sleep(0.05)
        os.write(write_fd, b"world")
        os.close(write_fd)
        time.sleep(0.05)
        left.send(b"reply")

    thread = threading.Thread(target=chatter)
    thread.start()
    assert right.receive(5) == b"reply"
    thread.join()
    assert tail.getvalue() == b"hello world"
    os.close(read_fd)


def test_tail_buffer_keeps_the_last_bytes_with_a_marker() -> None:
    tail = TailBuffer(100)
    for i in range(1000):
        tail.write(f"{i:04d}\n".encode())
    value = tail.getvalue()
    assert len(value) <= 100
    assert value.endswith(b"0999\n")
    assert value.startswith(b"[evoledger: ")
    assert b"earlier bytes of output dropped]" in value
    small = TailBuffer(100)
    small.write(b"short")
    assert small.getvalue() == b"short"


def test_bound_text_keeps_head_and_tail() -> None:
    assert bound_text("short", 100) == "short"
    text = "HEAD" + "x" * 10_000 + "TAIL"
    bounded = bound_text(text, 500)
    assert len(bounded) <= 500
    assert bounded.startswith("HEAD")
    assert bounded.endswith("TAIL")
    assert "characters cut" in bounded


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=2000))
def test_bound_text_never_exceeds_its_limit(text: str, limit: int) -> None:
    bounded = bound_text(text, limit)
    assert len(bounded) <= limit
    assert bounded == text or len(text) > limit


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(min_value=60, max_value=500))
def test_tail_buffer_is_bounded_and_keeps_the_newest_bytes(chunks: list[bytes], limit: int) -> None:
    tail = TailBuffer(limit)
    for chunk in chunks:
        tail.write(chunk)
    everything = b"".join(chunks)
    value = tail.getvalue()
    assert len(value) <= limit
    if len(everything) <= limit:
        assert value == everything
    else:
        kept = value.split(b"]\n", 1)[1]
        assert everything.endswith(kept)
        assert len(kept) >= limit - 60
