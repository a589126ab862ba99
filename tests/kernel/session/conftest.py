"""Fixtures for the Session tests: short socket paths, a live server and a canned Host coordinator.

The Host coordinator does not exist yet; :class:`CannedHost` is a test double that answers requests
with fixed decisions so the transport can be exercised over real sockets.
"""

from __future__ import annotations

import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.session import SessionServer
from evoledger.kernel.session.protocol import decode_body
from evoledger.kernel.session.server import PendingRequest


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def read_exact(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(sock: socket.socket) -> dict[str, Any] | None:
    header = read_exact(sock, 4)
    if header is None:
        return None
    body = read_exact(sock, struct.unpack(">I", header)[0])
    if body is None:
        return None
    value = decode_body(body)
    assert isinstance(value, dict)
    return value


class CannedHost:
    """Serves ``server.next_request`` on a thread with canned decisions keyed by the request content."""

    def __init__(self, server: SessionServer) -> None:
        self.server = server
        self.seen: list[PendingRequest] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._submissions = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            pending = self.server.next_request(timeout=0.05)
            if pending is None:
                continue
            self.seen.append(pending)
            try:
                self._decide(pending)
            except BaseException as exc:  # surfaced by the fixture teardown
                self.errors.append(exc)

    def _decide(self, pending: PendingRequest) -> None:
        request = pending.request
        if request.method == "submit":
            program = request.params.program
            if program == "hang":
                return  # never answered: the client's timeout must fire
            if program == "slow":
                time.sleep(0.3)
            if program == "rejected":
                pending.reject("program_invalid", "policy.py is missing", retryable=False)
                return
            self._submissions += 1
            pending.reply(
                {
                    "submission_id": f"submission-{self._submissions:06d}",
                    "program": program,
                    "episodes": request.params.episodes,
                }
            )
        elif request.method == "finish":
            unknown = [c for c in request.params.candidates if c.startswith("unknown")]
            if unknown:
                pending.reject("unknown_submission", f"no submission {unknown[0]!r}", retryable=False)
            else:
                pending.reply({"candidates": request.params.candidates})
        else:
            pending.reply({"budget_remaining": 7})


class Harness:
    """A started server, its canned Host and raw-socket helpers."""

    def __init__(self, server: SessionServer, host: CannedHost) -> None:
        self.server = server
        self.host = host
        self.path = server.socket_path

    frame = staticmethod(frame)
    read_frame = staticmethod(read_frame)

    def connect(self, timeout: float = 5.0) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(str(self.path))
        return sock

    def exchange(self, data: bytes) -> dict[str, Any] | None:
        """Send raw bytes on a fresh connection and read one response frame (None if closed first)."""
        with self.connect() as sock:
            sock.sendall(data)
            return read_frame(sock)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory whose path is short enough for a Unix socket (pytest's tmp_path may not be)."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="evs-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_harness(short_dir: Path) -> Iterator[Callable[..., Harness]]:
    """Factory: ``make_harness(**server_options)`` starts a server and a canned Host; both stop at teardown."""
    started: list[Harness] = []

    def make(**options: Any) -> Harness:
        server = SessionServer(short_dir / f"s{len(started)}.sock", **options)
        server.start()
        host = CannedHost(server)
        host.start()
        harness = Harness(server, host)
        started.append(harness)
        return harness

    yield make
    for harness in started:
        harness.host.stop()
        harness.server.close()
        assert not harness.host.errors, harness.host.errors
        assert harness.server.fault is None


@pytest.fixture
def harness(make_harness: Callable[..., Harness]) -> Harness:
    return make_harness(idle_timeout=5.0)
