"""What only a Policy's channel (two pipes) does: the worker drains watched descriptors while it waits, the Policy's
side blocks, a frame larger than a pipe grows it. The contract it shares with the socket channel is in
``test_channel.py``."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator

import pytest
from evoledger.kernel.execution.capture import TailBuffer
from evoledger.kernel.execution.channel import ChannelClosed, ChannelTimeout
from evoledger.kernel.execution.pipe_channel import PipeChannel

_OPEN: list[PipeChannel] = []


@pytest.fixture(autouse=True)
def _close_channels() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _pair(max_frame: int = 1 << 20, *, child_side: bool = False) -> tuple[PipeChannel, PipeChannel]:
    """``left`` (a worker's side, or with ``child_side`` a Policy child's, which blocks) and ``right``, a worker's."""
    right_reads, left_writes = os.pipe()
    left_reads, right_writes = os.pipe()
    left = PipeChannel(left_reads, left_writes, timed=not child_side, max_frame=max_frame)
    right = PipeChannel(right_reads, right_writes, timed=True, max_frame=max_frame)
    _OPEN.extend((left, right))
    return left, right


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


def _watched_pipe(channel: PipeChannel, limit: int = 1024) -> tuple[int, int, TailBuffer]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    tail = TailBuffer(limit)
    channel.watch(read_fd, lambda: tail.drain(read_fd))
    return read_fd, write_fd, tail


def test_a_peer_that_floods_its_output_before_replying_is_not_wedged() -> None:
    # Far more than a pipe holds: the writer blocks until the waiting receiver drains. The reply must arrive, and the
    # output's tail with it.
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


def test_replies_slow_and_quick_arrive_whole_and_in_order() -> None:
    left, right = _pair()
    read_fd, write_fd, tail = _watched_pipe(right)

    def reply_slowly() -> None:
        time.sleep(0.1)  # not there at once: the wait polls
        left.send(b"slow")
        os.write(write_fd, b"out")
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


def test_the_policy_side_blocks_and_sends_frames_larger_than_a_pipe_whole() -> None:
    child, worker = _pair(8 << 20, child_side=True)  # the child's side blocks, as in a Policy process
    big = os.urandom(3 << 20)  # far more than a pipe holds: written in many pieces while the worker reads

    def serve() -> None:
        assert child.receive() == b"start"
        child.send(big)
        child.send(b"after")

    thread = threading.Thread(target=serve)
    thread.start()
    worker.send(b"start", timeout=5)
    assert worker.receive(30) == big
    assert worker.receive(30) == b"after"
    thread.join(30)
    assert not thread.is_alive()


def test_a_policy_side_that_ends_is_seen_as_closed_by_a_waiting_worker() -> None:
    child, worker = _pair(child_side=True)

    def end_soon() -> None:
        time.sleep(0.05)  # the worker is waiting in poll by then
        child.close()

    thread = threading.Thread(target=end_soon)
    thread.start()
    with pytest.raises(ChannelClosed):
        worker.receive(10)
    thread.join()
    with pytest.raises(ChannelClosed):
        worker.send(b"x", timeout=1)


def test_a_frame_larger_than_a_pipe_grows_the_pipe_it_is_written_to() -> None:
    child_reads, worker_writes = os.pipe()
    worker_reads, child_writes = os.pipe()
    worker = PipeChannel(worker_reads, worker_writes, timed=True)
    child = PipeChannel(child_reads, child_writes, timed=False)
    _OPEN.extend((worker, child))
    assert fcntl.fcntl(worker_writes, fcntl.F_GETPIPE_SZ) == 64 * 1024
    image = os.urandom(480_000)  # a 400x400 RGB observation: written at once instead of in 8 parts

    received: list[bytes] = []
    thread = threading.Thread(target=lambda: received.append(child.receive()))
    thread.start()
    worker.send(image, timeout=10)
    thread.join(10)
    assert received == [image]
    assert fcntl.fcntl(worker_writes, fcntl.F_GETPIPE_SZ) == 512 * 1024


def test_a_send_waiting_for_room_drains_a_peer_that_floods_its_output_first() -> None:
    # The Policy writes far more output than its pipe holds before it reads the next observation; that observation
    # is larger than the channel's pipe. Unless the worker drains while it waits for room, each waits for the other.
    child, worker = _pair(8 << 20, child_side=True)
    read_fd, write_fd, tail = _watched_pipe(worker)
    flood, big = b"z" * (6 << 20) + b"end\n", os.urandom(3 << 20)
    received: list[bytes] = []

    def flood_then_read() -> None:
        view = memoryview(flood)
        while view:
            view = view[os.write(write_fd, view) :]
        received.append(child.receive())

    thread = threading.Thread(target=flood_then_read)
    thread.start()
    worker.send(big, timeout=30)
    thread.join(30)
    assert received == [big]
    worker.unwatch(read_fd)
    tail.drain(read_fd)
    assert tail.getvalue().endswith(b"end\n")
    os.close(write_fd)
    os.close(read_fd)
