"""The library client and the ``evoledger-session`` command: results, rejections and client-side errors."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.session import SOCKET_ENV, WORKSPACE_ENV, HostRejection, SessionClient, SessionUnavailable
from evoledger.kernel.session.client import ClientInputError, run, workspace_relative


def _fake_host(path: Path, reply: bytes | None) -> threading.Thread:
    """A one-shot impostor: accept one connection, read whatever arrives, send ``reply`` raw (or nothing), close."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(5)
                conn.recv(65536)
                if reply is not None:
                    conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def _framed(value: Any) -> bytes:
    body = json.dumps(value).encode()
    return len(body).to_bytes(4, "big") + body


# ------------------------------------------------------------------------------------------ library


def test_host_rejection_carries_the_code(harness: Any) -> None:
    with pytest.raises(HostRejection) as info:
        SessionClient(harness.path, timeout=5).submit("rejected", "0")
    assert (info.value.code, info.value.retryable, info.value.exit_code) == ("program_invalid", False, 1)
    assert info.value.message == "policy.py is missing"


def test_missing_socket(short_dir: Path) -> None:
    with pytest.raises(SessionUnavailable, match=r"no Session socket .* not live"):
        SessionClient(short_dir / "none.sock", timeout=1).status()


def test_stale_socket(short_dir: Path) -> None:
    path = short_dir / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()
    with pytest.raises(SessionUnavailable, match="nothing is listening"):
        SessionClient(path, timeout=1).status()


def test_too_long_socket_path(short_dir: Path) -> None:
    with pytest.raises(SessionUnavailable, match="107 bytes"):
        SessionClient(short_dir / ("x" * 200), timeout=1).status()


def test_timeout_while_the_host_works(harness: Any) -> None:
    with pytest.raises(SessionUnavailable, match=r"within 0.2 s.*evoledger-session status"):
        SessionClient(harness.path, timeout=0.2).submit("hang", "0")


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (None, "closed the connection without a complete reply"),
        (b"\x00\x00", "closed the connection without a complete reply"),
        (b"HTTP/1.1 200 OK\r\n\r\n", "announced a reply of"),
        (b"\x00\x00\x00\x03abc", "unreadable reply"),
        (_framed({"protocol": "evoledger.session/1", "id": "someone-else", "ok": True, "result": {}}), "instead of"),
        (_framed({"protocol": "evoledger.session/9", "id": None, "ok": True, "result": {}}), "session/9"),
        (_framed({"protocol": "evoledger.session/1", "id": None, "ok": True}), "malformed reply"),
    ],
)
def test_impostor_replies_are_session_unavailable(short_dir: Path, reply: bytes | None, match: str) -> None:
    path = short_dir / "fake.sock"
    thread = _fake_host(path, reply)
    with pytest.raises(SessionUnavailable, match=match):
        SessionClient(path, timeout=5, id_factory=lambda: "mine").status()
    thread.join(timeout=5)


def test_workspace_relative(short_dir: Path) -> None:
    (short_dir / "program").mkdir()
    assert workspace_relative("program", short_dir, cwd=short_dir) == "program"
    assert workspace_relative(".", short_dir, cwd=short_dir / "program") == "program"
    assert workspace_relative("a/b/../c", short_dir, cwd=short_dir) == "a/c"
    assert workspace_relative(str(short_dir / "x"), short_dir, cwd=Path("/")) == "x"
    with pytest.raises(ClientInputError, match="outside the workspace"):
        workspace_relative("../elsewhere", short_dir, cwd=short_dir)
    (short_dir / "link").symlink_to("/etc")
    with pytest.raises(ClientInputError, match="outside the workspace"):
        workspace_relative("link", short_dir, cwd=short_dir)


# ------------------------------------------------------------------------------------ CLI in process


@pytest.fixture
def cli_env(harness: Any, short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    workspace = short_dir / "ws"
    (workspace / "program").mkdir(parents=True)
    monkeypatch.setenv(SOCKET_ENV, str(harness.path))
    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    monkeypatch.chdir(workspace)
    return harness


def _outcome(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _client_error(err: str) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(err)["error"]
    assert set(error) == {"code", "message", "retryable"}
    return error


def test_cli_submit_prints_the_result(cli_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _outcome(["submit", "program", "--episodes", "0:2,4:8"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"submission_id": "submission-000001", "program": "program", "episodes": "0:2,4:8"}


def test_cli_submit_sends_the_path_relative_to_the_workspace(
    cli_env: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(os.environ[WORKSPACE_ENV]) / "program")
    code, out, _ = _outcome(["submit", ".", "-e", " 3 "], capsys)
    assert code == 0
    assert json.loads(out)["program"] == "program"
    assert cli_env.host.seen[-1].request.params.episodes == "3"


def test_cli_finish_and_status(cli_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _outcome(["finish", "submission-000001", "submission-000002"], capsys)
    assert code == 0
    assert json.loads(out) == {"candidates": ["submission-000001", "submission-000002"]}
    code, out, _ = _outcome(["status"], capsys)
    assert code == 0
    assert json.loads(out) == {"budget_remaining": 7}


@pytest.mark.parametrize(
    ("argv", "code"),
    [(["submit", "rejected", "--episodes", "0"], "program_invalid"), (["finish", "unknown-1"], "unknown_submission")],
)
def test_cli_host_rejection_exits_1(
    cli_env: Any, capsys: pytest.CaptureFixture[str], argv: list[str], code: str
) -> None:
    exit_code, out, err = _outcome(argv, capsys)
    assert (exit_code, out) == (1, "")
    assert _client_error(err)["code"] == code


@pytest.mark.parametrize(
    ("argv", "unset", "code", "needle"),
    [
        (["submit", "program", "--episodes", "4:2"], None, "invalid_selector", "'2:4'"),
        (["submit", "program", "--episodes", "0:2,1"], None, "invalid_selector", "strictly increasing"),
        (["submit", "../outside", "--episodes", "0"], None, "program_outside_workspace", "outside the workspace"),
        (["submit", "program", "--episodes", "0"], WORKSPACE_ENV, "missing_environment", WORKSPACE_ENV),
        (["status"], SOCKET_ENV, "missing_environment", SOCKET_ENV),
        (["status", "--socket", "/tmp/evs-definitely-missing.sock"], None, "session_unavailable", "not live"),
        (["submit", "program"], None, "usage", "--episodes"),
        (["finish"], None, "usage", "Missing argument"),
        (["status", "--timeout", "0"], None, "usage", "--timeout"),
        (["explode"], None, "usage", "No such command"),
        ([], None, "usage", "missing command"),
    ],
)
def test_cli_client_errors_exit_2_without_contacting_the_host(
    cli_env: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    unset: str | None,
    code: str,
    needle: str,
) -> None:
    if unset:
        monkeypatch.delenv(unset)
    exit_code, out, err = _outcome(argv, capsys)
    assert (exit_code, out) == (2, "")
    error = _client_error(err)
    assert error["code"] == code
    assert needle in error["message"]
    assert cli_env.host.seen == []


def test_cli_workspace_must_be_a_directory(
    cli_env: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, short_dir: Path
) -> None:
    monkeypatch.setenv(WORKSPACE_ENV, str(short_dir / "nope"))
    exit_code, _, err = _outcome(["submit", "program", "-e", "0"], capsys)
    assert exit_code == 2
    assert "is not a directory" in _client_error(err)["message"]


def test_cli_socket_option_overrides_the_environment(
    cli_env: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SOCKET_ENV, "/tmp/evs-definitely-missing.sock")
    code, out, _ = _outcome(["status", "--socket", str(cli_env.path)], capsys)
    assert code == 0
    assert json.loads(out) == {"budget_remaining": 7}


def test_cli_timeout(cli_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    exit_code, _, err = _outcome(["submit", "hang", "-e", "0", "--timeout", "0.2"], capsys)
    assert exit_code == 2
    error = _client_error(err)
    assert error["code"] == "session_unavailable"
    assert "within 0.2 s" in error["message"]


@pytest.mark.parametrize("command", [[], ["submit"], ["finish"], ["status"]])
def test_cli_help_has_an_example(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _outcome([*command, "--help"], capsys)
    assert code == 0
    assert "Example:" in out
    assert "evoledger-session " in out.split("Example:")[1]


# ------------------------------------------------------------------------------- real subprocess


def _command() -> list[str]:
    beside = Path(sys.executable).parent / "evoledger-session"
    found = str(beside) if beside.exists() else shutil.which("evoledger-session")
    assert found, "evoledger-session is not installed (pip install -e .)"
    return [found]


@pytest.fixture
def invoke(cli_env: Any) -> Callable[..., subprocess.CompletedProcess[str]]:
    def call(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, **(env or {})}
        return subprocess.run(
            [*_command(), *args], capture_output=True, text=True, env=environment, cwd=os.getcwd(), timeout=30
        )

    return call


def test_subprocess_exit_codes_and_streams(invoke: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    ok = invoke("submit", "program", "--episodes", "0:2,4:8")
    assert (ok.returncode, ok.stderr) == (0, "")
    assert json.loads(ok.stdout)["episodes"] == "0:2,4:8"

    rejected = invoke("finish", "unknown-7")
    assert (rejected.returncode, rejected.stdout) == (1, "")
    assert json.loads(rejected.stderr) == {
        "error": {"code": "unknown_submission", "message": "no submission 'unknown-7'", "retryable": False}
    }

    bad_selector = invoke("submit", "program", "--episodes", "0:2,2:1")
    assert (bad_selector.returncode, bad_selector.stdout) == (2, "")
    assert json.loads(bad_selector.stderr)["error"]["code"] == "invalid_selector"

    unreachable = invoke("status", env={SOCKET_ENV: "/tmp/evs-definitely-missing.sock"})
    assert (unreachable.returncode, unreachable.stdout) == (2, "")
    assert json.loads(unreachable.stderr)["error"]["code"] == "session_unavailable"
