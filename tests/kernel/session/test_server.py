"""The Session listener over real Unix sockets, with a canned Host coordinator thread."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.session import PROTOCOL, HostRejection, SessionClient, SessionServer
from evoledger.kernel.session.server import MAX_SOCKET_PATH_BYTES
from evoledger.ledger.errors import ConfigError, EncodingError, InfraError, InputError


def _request(method: str = "status", params: dict[str, Any] | None = None, request_id: str = "r1") -> bytes:
    body = {"protocol": PROTOCOL, "id": request_id, "method": method, "params": params or {}}
    return json.dumps(body).encode()


def _error(response: dict[str, Any] | None) -> dict[str, Any]:
    assert response is not None, "the server closed the connection without replying"
    assert response["ok"] is False, response
    assert response["protocol"] == PROTOCOL
    error: dict[str, Any] = response["error"]
    return error


# ------------------------------------------------------------------------------------------ round trips


def test_round_trip_of_each_method(harness: Any) -> None:
    client = SessionClient(harness.path, timeout=5)
    assert client.submit("program", "0:2,4:8") == {
        "submission_id": "submission-000001",
        "program": "program",
        "episodes": "0:2,4:8",
    }
    assert client.finish("submission-000001", "submission-000002") == {
        "candidates": ["submission-000001", "submission-000002"]
    }
    assert client.status() == {"budget_remaining": 7}
    methods = [pending.request.method for pending in harness.host.seen]
    assert methods == ["submit", "finish", "status"]
    assert all(pending.answered for pending in harness.host.seen)


def test_response_echoes_the_request_id_and_protocol(harness: Any) -> None:
    response = harness.exchange(harness.frame(_request(request_id="abc-123")))
    assert response == {"protocol": PROTOCOL, "id": "abc-123", "ok": True, "result": {"budget_remaining": 7}}


def test_several_sequential_requests_on_one_connection(harness: Any) -> None:
    with harness.connect() as sock:
        for n in range(3):
            sock.sendall(harness.frame(_request(request_id=f"seq-{n}")))
            assert harness.read_frame(sock)["id"] == f"seq-{n}"


def test_pipelined_requests_are_answered_in_order_one_at_a_time(harness: Any) -> None:
    with harness.connect() as sock:
        sock.sendall(b"".join(harness.frame(_request(request_id=f"p{n}")) for n in range(4)))
        assert [harness.read_frame(sock)["id"] for _ in range(4)] == ["p0", "p1", "p2", "p3"]


def test_thousands_of_pipelined_bad_frames_are_answered_in_order(harness: Any) -> None:
    count = 3000
    with harness.connect(timeout=20) as sock:
        sock.sendall(b"".join(harness.frame(b"[%d]" % n) for n in range(count)) + harness.frame(_request()))
        for _ in range(count):
            assert "JSON object" in _error(harness.read_frame(sock))["message"]
        assert harness.read_frame(sock)["result"] == {"budget_remaining": 7}


def test_a_frame_split_into_single_bytes_is_reassembled(harness: Any) -> None:
    data = harness.frame(_request(request_id="dribble"))
    with harness.connect() as sock:
        for byte in data:
            sock.sendall(bytes([byte]))
        assert harness.read_frame(sock)["id"] == "dribble"


# ------------------------------------------------------------------------------ transport-level errors


@pytest.mark.parametrize(
    ("body", "code", "needle"),
    [
        (b"{not json", "invalid_request", "not valid JSON"),
        (_request(method="explode"), "invalid_request", "unknown method"),
        (
            json.dumps({"protocol": "evoledger.session/0", "id": "r1", "method": "status", "params": {}}).encode(),
            "protocol_mismatch",
            PROTOCOL,
        ),
        (
            json.dumps({"protocol": PROTOCOL, "id": "r1", "method": "status", "params": {}, "x": 1}).encode(),
            "invalid_request",
            "Extra inputs",
        ),
        (
            json.dumps({"protocol": PROTOCOL, "id": "r1", "method": "submit", "params": {"program": "p"}}).encode(),
            "invalid_request",
            "params.episodes",
        ),
        (_request(params={"n": 10**40}), "invalid_request", "int64"),
        (
            b'{"protocol": "%s", "id": "r1", "method": "status", "params": {"n": NaN}}' % PROTOCOL.encode(),
            "invalid_request",
            "NaN",
        ),
        (_request(params={"deep": json.loads("[" * 200 + "]" * 200)}), "invalid_request", "nested deeper"),
    ],
)
def test_body_errors_are_answered_and_the_connection_stays_usable(
    harness: Any, body: bytes, code: str, needle: str
) -> None:
    with harness.connect() as sock:
        sock.sendall(harness.frame(body))
        error = _error(harness.read_frame(sock))
        assert error["code"] == code
        assert needle in error["message"]
        assert error["retryable"] is False
        sock.sendall(harness.frame(_request(request_id="after")))  # framing intact: the next request works
        assert harness.read_frame(sock)["ok"] is True
    assert [p.request.id for p in harness.host.seen] == ["after"]


def test_garbage_bytes_get_an_error_then_the_connection_is_dropped(harness: Any) -> None:
    with harness.connect() as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n")
        error = _error(harness.read_frame(sock))
        assert error["code"] == "invalid_request"
        assert "exceeds the limit" in error["message"]
        assert sock.recv(1) == b""  # closed after the error reply
    assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}


def test_oversize_frame_is_refused_from_its_header(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(max_frame=4096)
    with harness.connect() as sock:
        sock.sendall((5000).to_bytes(4, "big"))  # announce only; the body is never read
        error = _error(harness.read_frame(sock))
        assert "5000 bytes exceeds the limit of 4096" in error["message"]
        assert sock.recv(1) == b""


def test_client_sending_an_oversize_request_gets_the_rejection(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(max_frame=4096)
    with pytest.raises(HostRejection, match="exceeds the limit of 4096") as info:
        SessionClient(harness.path, timeout=5).submit("p" * 3_000_000, "0")  # the reply outlives the broken pipe
    assert info.value.code == "invalid_request"


def test_empty_frame_is_refused(harness: Any) -> None:
    with harness.connect() as sock:
        sock.sendall(bytes(4))
        assert "length prefix is 0" in _error(harness.read_frame(sock))["message"]


def test_truncated_frame_then_close_leaves_the_server_healthy(harness: Any) -> None:
    with harness.connect() as sock:
        sock.sendall((100).to_bytes(4, "big") + b'{"protocol"')
    with harness.connect() as sock:
        sock.sendall(b"\x00\x00")  # half a header
    assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}
    _wait_for(lambda: harness.server.connection_count == 0)
    assert len(harness.host.seen) == 1


def test_client_leaving_before_the_reply_does_not_disturb_the_server(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(idle_timeout=5.0)
    with harness.connect() as sock:
        sock.sendall(harness.frame(_request("submit", {"program": "slow", "episodes": "0"})))
    time.sleep(0.4)  # the canned Host answers a closed connection
    assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}


# ------------------------------------------------------------------------------------- concurrency


def test_twenty_clients_at_once(harness: Any) -> None:
    results: dict[int, Any] = {}
    barrier = threading.Barrier(20)

    def work(n: int) -> None:
        client = SessionClient(harness.path, timeout=10)
        barrier.wait()
        results[n] = client.submit(f"program-{n}", f"{n}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=15)
    assert sorted(results) == list(range(20))
    assert all(results[n]["program"] == f"program-{n}" and results[n]["episodes"] == str(n) for n in range(20))
    assert len({r["submission_id"] for r in results.values()}) == 20


def test_silent_client_does_not_block_others_and_is_dropped(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(idle_timeout=0.5)
    silent = harness.connect()
    stalled = harness.connect()
    stalled.sendall((50).to_bytes(4, "big") + b"{")  # a partial frame, then nothing
    try:
        started = time.monotonic()
        assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}
        for sock in (silent, stalled):  # served while both were still connected and unanswered
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
            sock.settimeout(5)
        for sock in (silent, stalled):
            error = _error(harness.read_frame(sock))
            assert "no complete request within 0.5 s" in error["message"]
            assert sock.recv(1) == b""
        assert time.monotonic() - started < 30  # bounded even on a loaded machine; the stalls were 0.5 s
        _wait_for(lambda: harness.server.connection_count == 0)
    finally:
        silent.close()
        stalled.close()


def test_a_request_waiting_for_the_host_is_not_dropped_as_idle(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(idle_timeout=0.1)
    result = SessionClient(harness.path, timeout=5).submit("slow", "0")  # the Host takes 0.3 s
    assert result["program"] == "slow"


def test_connections_beyond_the_limit_are_refused(make_harness: Callable[..., Any]) -> None:
    harness = make_harness(max_connections=2, idle_timeout=5.0)
    first, second = harness.connect(), harness.connect()
    try:
        _wait_for(lambda: harness.server.connection_count == 2)
        with harness.connect() as third:
            error = _error(harness.read_frame(third))
            assert "too many open Session connections" in error["message"]
            assert error["retryable"] is True
    finally:
        first.close()
        second.close()
    _wait_for(lambda: harness.server.connection_count == 0)
    assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}


# ------------------------------------------------------------------------------- replies from the Host


def test_pending_request_contract(short_dir: Path) -> None:
    with SessionServer(short_dir / "p.sock", max_frame=1024) as server:
        answers: list[Any] = []
        errors: list[BaseException] = []

        def client() -> None:
            try:
                answers.append(SessionClient(server.socket_path, timeout=5).status())
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=client)
        thread.start()
        pending = server.next_request(timeout=5)
        assert pending is not None
        assert not pending.answered
        with pytest.raises(EncodingError):
            pending.reply({"x": float("nan")})
        with pytest.raises(InfraError, match="above the frame limit"):
            pending.reply({"x": "y" * 2000})
        with pytest.raises(InputError, match="unknown rejection code"):
            pending.reject("nope", "x")  # type: ignore[arg-type]
        assert not pending.answered  # none of the failures consumed the answer
        pending.reject("session_closed", "the Session is over", retryable=False)
        assert pending.answered
        with pytest.raises(InfraError, match="already answered"):
            pending.reply({})
        thread.join(timeout=5)
        assert answers == []
        assert getattr(errors[0], "code", None) == "session_closed"
        assert server.next_request(timeout=0.05) is None


def test_next_request_returns_none_after_close(short_dir: Path) -> None:
    server = SessionServer(short_dir / "n.sock")
    server.start()
    waiter: list[Any] = ["unset"]
    thread = threading.Thread(target=lambda: waiter.__setitem__(0, server.next_request(timeout=10)))
    thread.start()
    time.sleep(0.05)
    server.close()
    thread.join(timeout=5)
    assert waiter == [None]
    assert server.next_request(timeout=1) is None
    server.close()  # idempotent


# ------------------------------------------------------------------------------------------ lifecycle


def test_socket_file_is_private_and_removed_on_close(short_dir: Path) -> None:
    path = short_dir / "x.sock"
    with SessionServer(path):
        mode = os.stat(path).st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600
    assert not path.exists()


def test_refuses_a_live_socket(harness: Any) -> None:
    with pytest.raises(ConfigError, match="live socket"):
        SessionServer(harness.path).start()
    assert SessionClient(harness.path, timeout=5).status() == {"budget_remaining": 7}  # the first is unharmed


def test_replaces_a_stale_socket(short_dir: Path) -> None:
    path = short_dir / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays behind, nobody listens
    with SessionServer(path) as server:
        thread = threading.Thread(target=lambda: _answer_one(server))
        thread.start()
        assert SessionClient(path, timeout=5).status() == {"ok": 1}
        thread.join(timeout=5)


def _answer_one(server: SessionServer) -> None:
    pending = server.next_request(timeout=5)
    assert pending is not None
    pending.reply({"ok": 1})


def test_refuses_a_path_that_is_not_a_socket(short_dir: Path) -> None:
    path = short_dir / "file.sock"
    path.write_text("precious")
    with pytest.raises(ConfigError, match="is not a socket"):
        SessionServer(path).start()
    assert path.read_text() == "precious"


def test_refuses_a_missing_directory(short_dir: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        SessionServer(short_dir / "missing" / "s.sock").start()


def test_refuses_a_too_long_path_with_a_clear_message(short_dir: Path) -> None:
    deep = short_dir / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / "session.sock"
    assert len(os.fsencode(str(path))) > MAX_SOCKET_PATH_BYTES
    with pytest.raises(ConfigError, match="shorter run directory") as info:
        SessionServer(path).start()
    assert str(path) in str(info.value)


def test_cannot_start_twice(short_dir: Path) -> None:
    server = SessionServer(short_dir / "t.sock")
    with server, pytest.raises(ConfigError, match="already started"):
        server.start()


@pytest.mark.parametrize(
    ("options", "match"),
    [({"max_frame": 10}, "max_frame"), ({"idle_timeout": 0}, "idle_timeout"), ({"max_connections": 0}, "max_conn")],
)
def test_bad_server_options(short_dir: Path, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SessionServer(short_dir / "o.sock", **options)


def _wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)
