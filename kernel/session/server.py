"""The Session listener: a Unix-socket server whose one thread only moves frames.

:class:`SessionServer` runs a single non-blocking listener thread (``selectors``) that accepts many
clients, reads length-prefixed frames, validates them into request models and queues each valid
request for the Host coordinator. The coordinator takes them with :meth:`SessionServer.next_request`
and answers through :meth:`PendingRequest.reply` / :meth:`PendingRequest.reject` from its own thread;
the listener writes the answer back (woken through a socketpair).

The listener decides only transport-level errors (``invalid_request``, ``protocol_mismatch``): bad
frames are answered on the spot and never reach the coordinator. Each connection carries one request
at a time; a client may send several in sequence. A connection that is not waiting for the Host and
makes no progress for ``idle_timeout`` seconds is dropped, without delaying anyone else.
"""

from __future__ import annotations

import contextlib
import queue
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Final

from evoledger.kernel.session.frames import FRAME_HEADER, SESSION_MAX_FRAME, encode_frame, frame_length
from evoledger.kernel.session.pending import PendingRequest
from evoledger.kernel.session.protocol import PROTOCOL, decode_request
from evoledger.kernel.session.rejections import MalformedRequest, RejectionCode
from evoledger.kernel.session.socket_file import MAX_SOCKET_PATH_BYTES, bind_socket, remove_socket_file
from evoledger.ledger.errors import ConfigError, InfraError

__all__ = ["DEFAULT_IDLE_TIMEOUT", "MAX_SOCKET_PATH_BYTES", "PendingRequest", "SessionServer"]

DEFAULT_IDLE_TIMEOUT: Final = 30.0
"""Seconds a connection may sit idle (not waiting for the Host) before it is dropped."""

_READ_CHUNK: Final = 65536
_LISTENER: Final = "listener"
_WAKE: Final = "wake"


@dataclass(eq=False)
class _Connection:
    key: int
    sock: socket.socket
    last_activity: float
    inbuf: bytearray = field(default_factory=bytearray)
    need: int | None = None
    outbuf: bytearray = field(default_factory=bytearray)
    awaiting_host: bool = False
    close_after_write: bool = False
    mask: int = 0


class SessionServer:
    """A Unix-socket listener for one Run's Session. Use as a context manager or call start()/close()."""

    def __init__(
        self,
        socket_path: Path,
        *,
        max_frame: int = SESSION_MAX_FRAME,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = 128,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_frame < 64:
            raise ConfigError(f"max_frame={max_frame} is too small to carry a request; use at least 64 bytes")
        if not idle_timeout > 0:
            raise ConfigError(f"idle_timeout={idle_timeout} must be a positive number of seconds, e.g. 30")
        if max_connections < 1:
            raise ConfigError(f"max_connections={max_connections} must be at least 1, e.g. 128")
        self.socket_path = Path(socket_path)
        self.max_frame = max_frame
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._clock = clock
        self._requests: queue.Queue[PendingRequest | None] = queue.Queue()
        self._outgoing: deque[tuple[int, bytes]] = deque()
        self._outgoing_lock = threading.Lock()
        self._conns: dict[int, _Connection] = {}
        self._next_key = 0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: socket.socket | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._selector: selectors.BaseSelector | None = None
        self._bound_inode: tuple[int, int] | None = None
        self._closed = False
        self.fault: BaseException | None = None
        """An unexpected error that stopped the listener thread (a bug); next_request re-raises it."""

    # ----------------------------------------------------------------------------------- lifecycle

    def __enter__(self) -> SessionServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        """Bind the socket (mode 0600) and start the listener thread."""
        if self._thread is not None or self._closed:
            raise ConfigError(f"the Session server on {self.socket_path} was already started; create a new one")
        self._listener, self._bound_inode = bind_socket(self.socket_path)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, _LISTENER)
        self._selector.register(self._wake_r, selectors.EVENT_READ, _WAKE)
        self._thread = threading.Thread(target=self._run, name="evoledger-session-listener", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the listener, close every connection and remove the socket file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for conn in list(self._conns.values()):
            self._drop(conn)
        for sock in (self._listener, self._wake_r, self._wake_w):
            if sock is not None:
                sock.close()
        if self._selector is not None:
            self._selector.close()
        if self._bound_inode is not None:
            remove_socket_file(self.socket_path, self._bound_inode)
        self._requests.put(None)

    def next_request(self, timeout: float | None = None) -> PendingRequest | None:
        """The next valid request, or ``None`` after ``timeout`` seconds or once the server is closed."""
        if self.fault is not None:
            raise InfraError(f"the Session listener stopped on an internal error: {self.fault!r}") from self.fault
        if self._closed:
            return None
        try:
            item = self._requests.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is None:  # closing: let other waiters see the sentinel too
            self._requests.put(None)
        return item

    @property
    def connection_count(self) -> int:
        """How many client connections are open right now (for tests and status)."""
        return len(self._conns)

    # ------------------------------------------------------------------------------- thread plumbing

    def _wake(self) -> None:
        if self._wake_w is not None:
            with contextlib.suppress(OSError):  # a full pipe already holds a pending wake-up
                self._wake_w.send(b"\0")

    def _deliver_to(self, key: int) -> Callable[[bytes], None]:
        def deliver(frame: bytes) -> None:
            with self._outgoing_lock:
                self._outgoing.append((key, frame))
            self._wake()

        return deliver

    def _run(self) -> None:
        assert self._selector is not None  # set by start() before the thread exists
        try:
            while not self._stopping.is_set():
                for key, mask in self._selector.select(self._select_timeout()):
                    if key.data == _LISTENER:
                        self._accept()
                    elif key.data == _WAKE:
                        self._drain_wake()
                    else:
                        self._service(key.data, mask)
                self._take_outgoing()
                self._expire_idle()
        except BaseException as exc:  # a bug in the listener: surface it to the coordinator, never hang
            self.fault = exc
            self._requests.put(None)

    def _select_timeout(self) -> float:
        deadlines = [c.last_activity + self.idle_timeout for c in self._conns.values() if not c.awaiting_host]
        if not deadlines:
            return 1.0
        return max(0.0, min(min(deadlines) - self._clock(), 1.0)) + 0.001

    def _drain_wake(self) -> None:
        assert self._wake_r is not None
        with contextlib.suppress(BlockingIOError):
            while self._wake_r.recv(4096):
                pass

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # e.g. EMFILE: leave it in the backlog and try on the next round
                return
            sock.setblocking(False)
            if len(self._conns) >= self.max_connections:
                refusal = _error_frame(
                    None, "invalid_request", "too many open Session connections; retry shortly", True
                )
                with contextlib.suppress(OSError):
                    sock.send(refusal)
                sock.close()
                continue
            self._next_key += 1
            conn = _Connection(self._next_key, sock, self._clock())
            self._conns[conn.key] = conn
            self._update_interest(conn)

    def _update_interest(self, conn: _Connection) -> None:
        assert self._selector is not None
        wanted = 0
        if conn.outbuf:
            wanted |= selectors.EVENT_WRITE
        elif not conn.awaiting_host and not conn.close_after_write:
            wanted |= selectors.EVENT_READ
        if wanted == conn.mask:
            return
        if conn.mask == 0:
            self._selector.register(conn.sock, wanted, conn)
        elif wanted == 0:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, wanted, conn)
        conn.mask = wanted

    def _drop(self, conn: _Connection) -> None:
        self._conns.pop(conn.key, None)
        if conn.mask and self._selector is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(conn.sock)
        conn.mask = 0
        with contextlib.suppress(OSError):
            conn.sock.close()

    # ------------------------------------------------------------------------------- per connection

    def _service(self, conn: _Connection, mask: int) -> None:
        try:
            if mask & selectors.EVENT_WRITE:
                self._flush(conn)
            elif mask & selectors.EVENT_READ:
                self._read(conn)
        except Exception:  # one client's failure must never take the listener down
            self._drop(conn)

    def _read(self, conn: _Connection) -> None:
        try:
            data = conn.sock.recv(_READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not data:  # peer closed (possibly mid-frame): nothing to answer
            self._drop(conn)
            return
        conn.last_activity = self._clock()
        conn.inbuf += data
        self._process(conn)

    def _process(self, conn: _Connection) -> None:
        """Turn buffered bytes into requests one at a time; transport errors are answered on the spot."""
        while self._alive(conn) and not (conn.awaiting_host or conn.outbuf or conn.close_after_write):
            body = self._take_body(conn)
            if body is None:
                break
            try:
                request = decode_request(body)
            except MalformedRequest as exc:
                conn.outbuf += _error_frame(exc.request_id, exc.code, exc.message)
                self._write(conn)
                continue
            conn.awaiting_host = True
            self._requests.put(PendingRequest(request, self._deliver_to(conn.key), self.max_frame))
        if self._alive(conn):
            self._update_interest(conn)

    def _alive(self, conn: _Connection) -> bool:
        return self._conns.get(conn.key) is conn

    def _take_body(self, conn: _Connection) -> bytes | None:
        """The next complete frame body in the buffer, or None (incomplete, or an oversize frame answered)."""
        if conn.need is None:
            if len(conn.inbuf) < FRAME_HEADER.size:
                return None
            try:
                conn.need = frame_length(bytes(conn.inbuf[: FRAME_HEADER.size]), self.max_frame)
            except MalformedRequest as exc:  # framing is lost: answer, then hang up
                conn.inbuf.clear()
                conn.close_after_write = True
                conn.outbuf += _error_frame(None, exc.code, exc.message)
                self._write(conn)
                return None
        end = FRAME_HEADER.size + conn.need
        if len(conn.inbuf) < end:
            return None
        body = bytes(conn.inbuf[FRAME_HEADER.size : end])
        del conn.inbuf[:end]
        conn.need = None
        return body

    def _write(self, conn: _Connection) -> None:
        """Send what the socket takes now; hang up once drained if the connection is marked to close."""
        try:
            sent = conn.sock.send(conn.outbuf)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:  # peer gone
            self._drop(conn)
            return
        if sent:
            del conn.outbuf[:sent]
            conn.last_activity = self._clock()
        if not conn.outbuf and conn.close_after_write:
            self._drop(conn)

    def _flush(self, conn: _Connection) -> None:
        self._write(conn)
        self._process(conn)  # resumes reading, or serves a request already buffered

    def _take_outgoing(self) -> None:
        with self._outgoing_lock:
            batch = list(self._outgoing)
            self._outgoing.clear()
        for key, frame in batch:
            conn = self._conns.get(key)
            if conn is None:  # the client left before the Host answered
                continue
            conn.awaiting_host = False
            conn.last_activity = self._clock()
            conn.outbuf += frame
            try:
                self._flush(conn)
            except Exception:
                self._drop(conn)

    def _expire_idle(self) -> None:
        now = self._clock()
        for conn in list(self._conns.values()):
            if conn.awaiting_host or now - conn.last_activity < self.idle_timeout:
                continue
            if not conn.outbuf:
                message = f"no complete request within {self.idle_timeout:g} s; connection closed"
                with contextlib.suppress(OSError):
                    conn.sock.send(_error_frame(None, "invalid_request", message))
            self._drop(conn)


def _error_frame(request_id: str | None, code: RejectionCode, message: str, retryable: bool = False) -> bytes:
    body = {"code": code, "message": message, "retryable": retryable}
    return encode_frame({"protocol": PROTOCOL, "id": request_id, "ok": False, "error": body})
