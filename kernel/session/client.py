"""The Session client: :class:`SessionClient` for code, and the ``evoledger-session`` command for Agents.

``evoledger-session`` finds the Host's socket through ``EVOLEDGER_SESSION_SOCKET`` (or ``--socket``) and
the Agent's workspace through ``EVOLEDGER_WORKSPACE``. Exit codes:

* 0 - the Host accepted the request; the result is printed as JSON on stdout.
* 1 - the Host rejected it; ``{"error": {"code", "message", "retryable"}}`` on stderr (codes in
  :data:`~evoledger.kernel.session.rejections.REJECTION_CODES`).
* 2 - a client-side error (usage, selector syntax, missing environment variable, Program outside the
  workspace, Host unreachable); the same JSON shape on stderr with a code from :data:`CLIENT_ERROR_CODES`.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn

from evoledger.kernel.session.frames import FRAME_HEADER, SESSION_MAX_FRAME, encode_frame
from evoledger.kernel.session.rejections import HostRejection, SessionUnavailable
from evoledger.kernel.session.selectors import SelectorError, parse_selector
from evoledger.kernel.session.wire import PROTOCOL, SOCKET_ENV, WORKSPACE_ENV, OkResponse, decode_response
from evoledger.ledger.errors import EvoLedgerError, InputError

__all__ = ["CLIENT_ERROR_CODES", "ClientInputError", "SessionClient", "main", "run", "workspace_relative"]

CLIENT_ERROR_CODES: Final[dict[str, str]] = {
    "usage": "The command line is wrong (unknown command or option, missing argument).",
    "invalid_selector": "The --episodes selector is malformed; the message shows a corrected example.",
    "missing_environment": f"{SOCKET_ENV} (or --socket) or {WORKSPACE_ENV} is not set.",
    "program_outside_workspace": "The PROGRAM path does not lie inside the workspace.",
    "session_unavailable": "The Host could not be reached or sent no usable reply.",
    "client_error": "Any other client-side problem.",
}
"""Codes of client-side errors (exit 2); distinct from the Host's rejection codes (exit 1)."""


class ClientInputError(InputError):
    """A client-side problem with the invocation; ``code`` is one of :data:`CLIENT_ERROR_CODES`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _default_id() -> str:
    return secrets.token_hex(8)


class SessionClient:
    """Talks to a Host's Session socket: one connection per request.

    ``timeout`` bounds connecting and waiting for the reply (``None``: wait as long as the Host takes;
    a submission runs its Episodes before replying). Results are dicts; a refusal raises
    :class:`HostRejection`; connection problems raise :class:`SessionUnavailable`.
    """

    def __init__(
        self,
        socket_path: str | os.PathLike[str],
        timeout: float | None = None,
        *,
        max_frame: int = SESSION_MAX_FRAME,
        id_factory: Callable[[], str] = _default_id,
    ) -> None:
        self.socket_path = Path(socket_path)
        self.timeout = timeout
        self.max_frame = max_frame
        self._id_factory = id_factory

    def submit(self, program: str, episodes: str) -> dict[str, Any]:
        """Submit the Program at ``program`` (relative to the workspace) on the Episodes ``episodes`` selects."""
        return self.request("submit", {"program": program, "episodes": episodes})

    def finish(self, *submission_ids: str) -> dict[str, Any]:
        """End the Session, publishing ``submission_ids`` as Candidates in order of preference."""
        return self.request("finish", {"candidates": list(submission_ids)})

    def status(self) -> dict[str, Any]:
        """The Session's public status (read-only)."""
        return self.request("status", {})

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return its result; raises :class:`HostRejection` or :class:`SessionUnavailable`."""
        request_id = self._id_factory()
        frame = encode_frame({"protocol": PROTOCOL, "id": request_id, "method": method, "params": dict(params)})
        with self._connect() as sock:
            try:
                sock.sendall(frame)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the Host refused early (e.g. oversize frame); its error reply may still be readable
            except TimeoutError:
                raise self._timed_out() from None
            except OSError as exc:
                raise SessionUnavailable(f"sending to {self._where()} failed: {exc}") from None
            body = self._read_frame(sock)
        response = decode_response(body)
        if response.id is not None and response.id != request_id:
            raise SessionUnavailable(
                f"the Host answered request {response.id!r} instead of {request_id!r}; the socket at "
                f"{self._where()} is not behaving like an evoledger Host"
            )
        if isinstance(response, OkResponse):
            return response.result
        error = response.error
        raise HostRejection(error.code, error.message, error.retryable)

    def _where(self) -> str:
        return repr(str(self.socket_path))

    def _timed_out(self) -> SessionUnavailable:
        return SessionUnavailable(
            f"no reply from the Host at {self._where()} within {self.timeout:g} s; the Host may still be working "
            "on the request: check with `evoledger-session status`, or retry with a larger --timeout"
        )

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.socket_path))
        except FileNotFoundError:
            sock.close()
            raise SessionUnavailable(
                f"no Session socket at {self._where()}: the Run is not live (or the path is wrong); check "
                f"{SOCKET_ENV} or --socket"
            ) from None
        except ConnectionRefusedError:
            sock.close()
            raise SessionUnavailable(
                f"nothing is listening on {self._where()}: the Host has stopped (a stale socket file)"
            ) from None
        except TimeoutError:
            sock.close()
            raise self._timed_out() from None
        except OSError as exc:
            sock.close()
            raise SessionUnavailable(
                f"cannot connect to {self._where()}: {exc.strerror or exc}; check {SOCKET_ENV} or --socket "
                "(Unix socket paths are limited to 107 bytes)"
            ) from None
        return sock

    def _read_exact(self, sock: socket.socket, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            try:
                chunk = sock.recv(min(size - len(chunks), 1 << 16))
            except TimeoutError:
                raise self._timed_out() from None
            except OSError as exc:
                raise SessionUnavailable(f"reading from {self._where()} failed: {exc}") from None
            if not chunk:
                raise SessionUnavailable(
                    f"the Host at {self._where()} closed the connection without a complete reply; "
                    "it may have stopped, or dropped an idle connection"
                )
            chunks += chunk
        return bytes(chunks)

    def _read_frame(self, sock: socket.socket) -> bytes:
        (length,) = FRAME_HEADER.unpack(self._read_exact(sock, FRAME_HEADER.size))
        if length == 0 or length > self.max_frame:
            raise SessionUnavailable(
                f"the Host at {self._where()} announced a reply of {length} bytes (limit {self.max_frame}); "
                "it is not speaking the evoledger Session protocol"
            )
        return self._read_exact(sock, length)


# ------------------------------------------------------------------------------------------------ CLI


def workspace_relative(program: str, workspace: str | os.PathLike[str], cwd: Path | None = None) -> str:
    """``program`` (relative to ``cwd``) as a POSIX path relative to ``workspace``; ClientInputError if outside."""
    root = Path(workspace).resolve()
    if not root.is_dir():
        raise ClientInputError(
            "missing_environment", f"{WORKSPACE_ENV}={str(workspace)!r} is not a directory; point it at the workspace"
        )
    target = ((cwd or Path.cwd()) / program).resolve()
    try:
        relative = target.relative_to(root)
    except ValueError:
        raise ClientInputError(
            "program_outside_workspace",
            f"Program {program!r} resolves to {str(target)!r}, outside the workspace {str(root)!r}; submit a "
            "directory inside the workspace, e.g. `evoledger-session submit program --episodes 0:2`",
        ) from None
    return relative.as_posix()


def _environment_value(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ClientInputError(
            "missing_environment",
            f"environment variable {name} is not set; the Host sets it for the Agent"
            + (" (or pass --socket PATH)" if name == SOCKET_ENV else ""),
        )
    return value


def _client(socket_path: str | None, timeout: float | None) -> SessionClient:
    return SessionClient(socket_path or _environment_value(SOCKET_ENV), timeout)


def _emit(result: Mapping[str, Any]) -> None:
    print(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))


_OVERVIEW: Final = f"""Talk to the evoledger Host of the current Run.

Results are printed as JSON on stdout (exit 0). A Host rejection prints
{{"error": {{"code", "message", "retryable"}}}} on stderr (exit 1); a client-side
error (usage, selector syntax, missing environment, Host unreachable) prints
the same shape on stderr (exit 2).

Commands:
  submit    Run the Program directory PROGRAM on the selected training Episodes.
  finish    End the Session, publishing the given submissions as Candidates (best first).
  status    Show the Session's public status (budget left, submissions so far). Read-only.

Environment:
  {SOCKET_ENV}  the Host's socket (set by the Host; --socket overrides)
  {WORKSPACE_ENV}       the workspace that Program paths are relative to

Example:
  evoledger-session submit program --episodes 0:2,4:8
"""

_COMMANDS: Final = {
    "submit": """Run the Program directory PROGRAM on the selected training Episodes.

Each selected index costs one unit of Episode budget, every time it is used.
PROGRAM is resolved from the current directory and must lie inside the workspace.
The reply comes after the Episodes ran, so this may take a while.

Example:
  evoledger-session submit program --episodes 0:2,4:8
  evoledger-session submit ./program -e 5 --timeout 600
""",
    "finish": """End the Session, publishing the given submissions as Candidates (best first).

The Host privately validates every Candidate and selects one; no further
submission is accepted afterwards.

Example:
  evoledger-session finish submission-000002 submission-000003
""",
    "status": """Show the Session's public status (budget left, submissions so far). Read-only.

Example:
  evoledger-session status
""",
}
"""Each command's help (argparse, not click: the command must start in a few tens of milliseconds)."""


class _UsageError(Exception):
    """A malformed command line (exit 2, code ``usage``)."""


class _HelpShown(Exception):
    """``--help`` was printed (exit 0)."""


class _Parser(argparse.ArgumentParser):
    """Raises instead of exiting, and words the common mistakes as click did."""

    def error(self, message: str) -> NoReturn:
        prefix = "the following arguments are required: "
        if message.startswith(prefix):
            missing = [name.strip() for name in message.removeprefix(prefix).split(", ")]
            words = [
                f"Missing option '{name}'" if name.startswith("-") else f"Missing argument '{name}'" for name in missing
            ]
            message = "; ".join(words)
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise _HelpShown
        raise _UsageError(message or "invalid command line")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not in the range x>0")
    return value


def _parser(command: str) -> _Parser:
    parser = _Parser(
        prog=f"evoledger-session {command}",
        description=_COMMANDS[command],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    if command == "submit":
        parser.add_argument("program", metavar="PROGRAM")
        parser.add_argument(
            "--episodes",
            "-e",
            required=True,
            metavar="SELECTOR",
            help="Pool indices to run: half-open ranges a:b and single indices, strictly increasing (e.g. 0:2,4:8,9).",
        )
    elif command == "finish":
        parser.add_argument("submission_ids", nargs="+", metavar="ID [ID ...]")
    parser.add_argument(
        "--socket", dest="socket_path", metavar="PATH", help=f"The Host's Session socket (default: ${SOCKET_ENV})."
    )
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help="Give up waiting for the reply after SECONDS (default: wait as long as the Host takes).",
    )
    return parser


def _dispatch(argv: list[str]) -> None:
    if not argv:
        raise _UsageError("missing command: use `evoledger-session submit|finish|status`")
    command, rest = argv[0], argv[1:]
    if command in ("-h", "--help"):
        print(_OVERVIEW, end="")
        raise _HelpShown
    if command not in _COMMANDS:
        raise _UsageError(f"No such command '{command}'.")
    args = _parser(command).parse_args(rest)
    if command == "submit":
        parse_selector(args.episodes)  # early check; the Host re-checks authoritatively
        relative = workspace_relative(args.program, _environment_value(WORKSPACE_ENV))
        _emit(_client(args.socket_path, args.timeout).submit(relative, args.episodes.strip()))
    elif command == "finish":
        _emit(_client(args.socket_path, args.timeout).finish(*args.submission_ids))
    else:
        _emit(_client(args.socket_path, args.timeout).status())


def _fail(code: str, message: str, retryable: bool = False) -> None:
    error = {"code": code, "message": message, "retryable": retryable}
    print(json.dumps({"error": error}, sort_keys=True, ensure_ascii=False), file=sys.stderr)


def _client_code(exc: EvoLedgerError) -> str:
    if isinstance(exc, ClientInputError):
        return exc.code
    if isinstance(exc, SelectorError):
        return "invalid_selector"
    if isinstance(exc, SessionUnavailable):
        return "session_unavailable"
    return "client_error"


def run(argv: Sequence[str] | None = None) -> int:
    """Run ``evoledger-session`` with ``argv`` (default: the process arguments) and return its exit code."""
    try:
        _dispatch(list(sys.argv[1:] if argv is None else argv))
    except _HelpShown:
        return 0
    except HostRejection as exc:
        _fail(exc.code, exc.message, exc.retryable)
        return 1
    except EvoLedgerError as exc:
        _fail(_client_code(exc), str(exc))
        return 2
    except _UsageError as exc:
        _fail("usage", f"{exc} (see `evoledger-session --help`)")
        return 2
    except KeyboardInterrupt:
        _fail("client_error", "interrupted")
        return 2
    return 0


def main() -> None:
    """Console-script entry point of ``evoledger-session``."""
    sys.exit(run())


if __name__ == "__main__":
    main()
