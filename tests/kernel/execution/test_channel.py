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


def _watched_pipe(channel: FrameChannel, limit: int = 1024) -> tuple[int, int, TailBuffer]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    tail = TailBuffer(limit)
    channel.watch(read_fd, lambda: tail.drain(read_fd))
    return read_fd, write_fd, tail


def test_a_peer_that_floods_its_output_before_replying_is_not_wedged() -> None:
    # Far more than a pipe holds: the writer blocks until the waiting receiver drains, whether its wait is a blocking
    # read in slices or a poll. The reply must arrive, and the output's tail with it.
    left, right = _pair()
    read_fd, write_fd, tail = _watched_pipe(right)
    flood = b"x" * (6 << 20) + b"last-line\n"

    def chatter() -> None:
        view = memoryview(flood)
        while view:
            view = view[os.write(write_fd, view) :]
        left.send(b"reply")

    thread = threading.Thread(target=chatter)
    thread.start()
    assert right.receive(30) == b"reply"
    thread.join(30)
    assert not thread.is_alive()
    right.unwatch(read_fd)
    tail.drain(read_fd)
    assert tail.getvalue().endswith(b"last-line\n")
    assert tail.dropped == len(flood) - tail.limit  # every byte was drained
    os.close(write_fd)
    os.close(read_fd)


def test_a_peer_that_floods_its_output_and_never_replies_times_out_on_time() -> None:
    _left, right = _pair()
    read_fd, write_fd, tail = _watched_pipe(right)
    stop = threading.Event()
    written = 0

    def flood() -> None:
        nonlocal written
        chunk = b"y" * 65536
        while not stop.is_set():
            written += os.write(write_fd, chunk)

    thread = threading.Thread(target=flood)
    thread.start()
    began = time.monotonic()
    with pytest.raises(ChannelTimeout, match=r"no reply within 0\.500 s"):
        right.receive(0.5)
    elapsed = time.monotonic() - began
    stop.set()
    right.unwatch(read_fd)
    while thread.is_alive():  # unblock its last write
        tail.drain(read_fd)
        thread.join(0.01)
    assert 0.5 <= elapsed < 10  # never early; bounded (generous under load)
    assert written > 4 << 20  # it was drained while the receiver waited, beyond what any pipe holds
    os.close(write_fd)
    os.close(read_fd)


@pytest.mark.parametrize("timeout", [0.02, 0.06, 0.3])
def test_a_wait_that_watches_a_quiet_descriptor_never_ends_early(timeout: float) -> None:
    # Below, around and above the last stretch before a deadline, which is always polled.
    _left, right = _pair()
    read_fd, write_fd, _tail = _watched_pipe(right)
    began = time.monotonic()
    with pytest.raises(ChannelTimeout):
        right.receive(timeout)
    assert timeout <= time.monotonic() - began < timeout + 10
    os.close(write_fd)
    os.close(read_fd)


def test_replies_slower_than_a_slice_arrive_and_later_ones_too() -> None:
    left, right = _pair()
    read_fd, write_fd, tail = _watched_pipe(right)

    def reply_slowly() -> None:
        time.sleep(0.1)  # longer than a slice: the wait turns to polling
        left.send(b"slow")
        os.write(write_fd, b"out")  # output seen while waiting: later waits poll from the start
        time.sleep(0.1)
        left.send(b"after output")
        for index in range(50):
            left.send(b"quick %d" % index)

    thread = threading.Thread(target=reply_slowly)
    thread.start()
    assert right.receive(10) == b"slow"
    assert right.receive(10) == b"after output"
    assert [right.receive(10) for _ in range(50)] == [b"quick %d" % index for index in range(50)]
    thread.join()
    assert tail.getvalue() == b"out"
    os.close(write_fd)
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


def test_frames_that_arrive_together_or_in_pieces_are_each_received_whole() -> None:
    left, right = _pair()
    left.sock.sendall(struct.pack("<I", 1) + b"a" + struct.pack("<I", 2) + b"bc")  # two frames in one read
    assert right.receive() == b"a"
    assert right.receive() == b"bc"
    left.sock.sendall(struct.pack("<I", 5) + b"de")  # a frame in two pieces

    def rest() -> None:
        time.sleep(0.05)
        left.sock.sendall(b"fgh")

    thread = threading.Thread(target=rest)
    thread.start()
    assert right.receive() == b"defgh"
    thread.join()
