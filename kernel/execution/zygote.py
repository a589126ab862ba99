"""The zygote: a clean, pre-warmed process that forks one Policy child per Episode.

A worker forks its zygote right after start-up, once numpy, gymnasium and the Policy runtime are
imported but *before* it has resolved the Benchmark or received any task. The zygote therefore never
holds a Host seed, a scenario, a pool index or an Environment: it holds only the Benchmark's public
description (the spaces, metadata and environment parameters, sent once by the worker). Every
Policy child is forked from the zygote, so a Policy can never find Host-private data in its memory —
not this Episode's, not any earlier Episode's — and forking is cheap because the image is small and
frozen (``gc.freeze``) before the first fork.

The worker talks to the zygote over a ``SOCK_SEQPACKET`` pair (one message per request)::

    worker -> zygote   I/J  the pickled template, in chunks (J is the last); pickled by the worker, which is ours
                       F    fork a child; carries the child's ends of its two channel pipes (one each way, see
                            :mod:`~.pipe_channel`) and of its log pipe (SCM_RIGHTS)
                       W    pid: report that child's exit status (after the worker killed it); replies S
                       K    pid: release that child (the worker killed it and needs no status)
    zygote -> worker   P    pid of a new child
                       S    pid, wait status

Children are reaped only once the worker has released or waited for them, so a pid the worker holds
can never be reused under it. When the worker goes away (end of file), the zygote kills every child's
process group and exits; if the worker is killed, the kernel kills the zygote, and with it each child
(``PR_SET_PDEATHSIG``, :mod:`~.process_guard`). Locally, when some CPU has no worker, the zygote runs there, so the
next Episode's child is forked and set up on that free CPU while the worker runs this Episode; the child then joins
the worker's CPU, where it waits for its Episode (or, started ahead for the same Program, loads it on the free CPU
first: :mod:`~.episode_runner`), and a killed child is freed on the free CPU again. A Policy that
stops or kills the zygote is found out (``check_alive``) once its Episode is over, and blamed.

With ``--isolation bwrap`` (:mod:`~.isolation`) the zygote is not forked but launched per worker inside a
bubblewrap sandbox (:meth:`Zygote.launch`, entry point :mod:`~.sandbox_main`), as pid 1 of its own pid namespace,
without capabilities and not dumpable: a Policy can neither signal it (pid 1 ignores signals it has no handler for) nor
trace it or read its memory. There ``W`` and ``K`` end the Episode: the zygote kills every other process of the
namespace (``kill(-1)``, which also catches a Policy that called ``setsid``), reaps them, empties ``/tmp`` and
``/dev/shm``, removes System V IPC objects, and only then replies (``S``, or ``D`` for ``K``). The worker asks for
the next child only after that reply, so a sandbox never holds anything of an earlier Episode.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.execution.isolation import start_sandbox
from evoledger.kernel.execution.policy_runtime import PolicyTemplate, become_policy_process, warm_up_zygote
from evoledger.kernel.execution.process_guard import broken_state, die_with_parent, kill_group, prepare_to_fork
from evoledger.kernel.execution.sandbox_sweep import sweep_sandbox
from evoledger.ledger.errors import InfraError

__all__ = ["SandboxBroken", "SpareChild", "Zygote", "ZygoteBroken", "serve_sandboxed"]

_PID: Final = struct.Struct("<q")
_STATUS: Final = struct.Struct("<qq")
_CHUNK: Final = 60 * 1024
_RECV: Final = _CHUNK + 64
_SANDBOX_REPLY_SECONDS: Final = 20.0
"""How long a worker waits for its sandboxed zygote's reply before calling the sandbox broken."""
_SANDBOX_STOP_SECONDS: Final = 5.0
_LOCAL_LOOK_SECONDS: Final = 0.05
"""A worker waiting for its local zygote looks this often whether a Policy stopped or ended it (then no reply comes)."""
_LOCAL_EXIT_SECONDS: Final = 10.0
"""How long a closed local zygote that is neither stopped nor signalled may take to exit before it is killed."""
_LOG_PIPE_BYTES: Final = 1024 * 1024
"""A Policy's stdout/stderr pipe holds this much (the unprivileged maximum, ``/proc/sys/fs/pipe-max-size``): the
worker drains it only while it waits for the Policy without a reply there already (:mod:`~.pipe_channel`)."""


class ZygoteBroken(InfraError):
    """The zygote died, was stopped or stopped answering; during an Episode only Policy code could have caused it."""


class SandboxBroken(ZygoteBroken):
    """The sandboxed zygote died or stopped answering (the worker launches a new sandbox)."""


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


class SpareChild:
    """A forked Policy child waiting for its start message: the worker's ends of its channel pipes and log pipe."""

    __slots__ = ("log_fd", "pid", "read_fd", "write_fd")

    def __init__(self, pid: int, read_fd: int, write_fd: int, log_fd: int) -> None:
        self.pid = pid
        self.read_fd = read_fd
        """Where the child's messages arrive."""
        self.write_fd = write_fd
        """Where the worker's messages to the child go."""
        self.log_fd = log_fd

    def close_fds(self) -> None:
        """Close the worker's ends (for a child never handed to a :class:`~.policy_process.PolicyProcess`)."""
        _close_all((self.read_fd, self.write_fd, self.log_fd))


def _close_all(fds: tuple[int, ...]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _zygote_loop(sock: socket.socket, cpu: int | None, sandboxed: bool = False) -> None:
    prepare_to_fork()
    chunks: list[bytes] = []
    template: PolicyTemplate | None = None
    live: set[int] = set()
    released: set[int] = set()
    try:
        while True:
            for pid in list(released):
                with contextlib.suppress(ChildProcessError):
                    done, _status = os.waitpid(pid, os.WNOHANG)
                    if done == 0:
                        continue
                released.discard(pid)
                live.discard(pid)
            try:
                message, fds, _flags, _addr = socket.recv_fds(sock, _RECV, 4)
            except ConnectionResetError:  # the worker went away with a request unread
                return
            if not message:
                return
            kind, body = message[:1], message[1:]
            if kind in (b"I", b"J"):
                chunks.append(body)
                if kind == b"J":
                    fields: tuple[Any, ...] = pickle.loads(b"".join(chunks))
                    template = PolicyTemplate(*fields)
                    chunks.clear()
                    warm_up_zygote(template)
                    gc.freeze()  # no collection first: it found nothing to free, and cost 10-20 ms before the hello
            elif kind == b"F":
                if template is None or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    why = "before it received its template" if template is None else f"with {len(fds)} of 3 descriptors"
                    raise InfraError(f"the zygote was asked to fork {why}")
                _flush_stdio()
                zygote = os.getpid()
                pid = os.fork()
                if pid == 0:
                    sock.detach()
                    die_with_parent(zygote)  # a zygote killed by a Policy takes its other children along
                    become_policy_process(fds, template, cpu)
                for fd in fds:
                    os.close(fd)
                live.add(pid)
                sock.send(b"P" + _PID.pack(pid))
            elif kind == b"W" and sandboxed:
                (pid,) = _PID.unpack(body)
                status = sweep_sandbox(pid if pid in live else None)
                live.clear()
                sock.send(b"S" + _STATUS.pack(pid, status))
            elif kind == b"W":
                (pid,) = _PID.unpack(body)
                status = -1
                if pid in live:
                    with contextlib.suppress(ChildProcessError):
                        _done, status = os.waitpid(pid, 0)
                    live.discard(pid)
                sock.send(b"S" + _STATUS.pack(pid, status))
            elif kind == b"K" and sandboxed:
                (pid,) = _PID.unpack(body)
                sweep_sandbox(None)
                live.clear()
                sock.send(b"D" + _PID.pack(pid))
            elif kind == b"K":
                (pid,) = _PID.unpack(body)
                if pid in live:
                    released.add(pid)
    finally:
        for pid in live:
            kill_group(pid)


class Zygote:
    """The worker's handle on its zygote process."""

    def __init__(self, pid: int, sock: socket.socket, sandbox: subprocess.Popen[bytes] | None = None) -> None:
        self.pid = pid
        self._sock = sock
        self._sandbox = sandbox
        self._pending: deque[tuple[int, int, int]] = deque()
        """The worker's ends (read, write, log) of each child requested and not yet forked, oldest first."""
        self._spares: deque[SpareChild] = deque()
        self._teardown_cpus: set[int] | None = None
        """Where a killed child ends (its memory is freed there): the zygote's CPUs when it has more than the
        worker's own, so that a free CPU does it while the worker runs its next Episode."""
        sock.settimeout(_SANDBOX_REPLY_SECONDS if sandbox is not None else _LOCAL_LOOK_SECONDS)

    @property
    def sandboxed(self) -> bool:
        """Whether this zygote runs in a bubblewrap sandbox (child pids are then the sandbox's own)."""
        return self._sandbox is not None

    @classmethod
    def launch(cls, bwrap: str, programs: Path, cpu: int | None) -> Zygote:
        """Start a zygote in a new bubblewrap sandbox that sees ``programs`` read-only (see the module docstring)."""
        process, ours = start_sandbox(bwrap, programs, cpu)
        return cls(process.pid, ours, process)

    @classmethod
    def fork(cls, cpu: int | None, close_in_zygote: tuple[int, ...] = (), cpus: set[int] | None = None) -> Zygote:
        """Fork the zygote from the current (single-threaded) process; ``close_in_zygote`` are fds it must drop.

        ``cpus``: where the zygote (and each child until it is set up) may run. A fork and a child's set-up then
        use a free CPU while the worker runs an Episode on its own ``cpu``, which each child joins once set up."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        _flush_stdio()
        prepare_to_fork()
        worker = os.getpid()
        pid = os.fork()
        if pid == 0:  # the zygote
            code = 0
            try:
                die_with_parent(worker)  # a worker killed (by the executor's watchdog, say) takes its zygote along
                if cpus:
                    os.sched_setaffinity(0, cpus)
                ours.close()
                for fd in close_in_zygote:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                _zygote_loop(theirs, cpu)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the worker went away mid-request: a normal way to end
            except BaseException as exc:
                code = 70
                with contextlib.suppress(Exception):
                    print(f"evoledger zygote failed: {exc!r}", file=sys.stderr)
            _flush_stdio()
            os._exit(code)
        theirs.close()
        zygote = cls(pid, ours)
        if cpus and cpu is not None and cpus != {cpu}:
            zygote._teardown_cpus = set(cpus)
        return zygote

    def _send(self, message: bytes, fds: tuple[int, ...] = ()) -> None:
        while True:
            try:
                if fds:
                    socket.send_fds(self._sock, [message], list(fds))
                else:
                    self._sock.send(message)
                return
            except TimeoutError:  # nothing was sent (a whole message or nothing): the zygote has not read for a while
                self._waited("took no request")
            except OSError as exc:
                raise self._broken(f"zygote (pid {self.pid}) is gone: {exc}") from None

    def _waited(self, what: str) -> None:
        """The socket's timeout passed without the zygote's part (``what`` it did not do): a sandboxed zygote is then
        broken; a local one is still waited for, unless it cannot answer any more (:meth:`_raise_if_broken`)."""
        if self.sandboxed:
            raise self._broken(f"zygote (pid {self.pid}) {what} within {_SANDBOX_REPLY_SECONDS:g} s") from None
        self._raise_if_broken(asleep_counts=True)

    def _raise_if_broken(self, *, asleep_counts: bool) -> None:
        """Raise :class:`ZygoteBroken` if the local zygote was stopped or ended, or sent a signal that will.

        While the worker waits for it (``asleep_counts``), a stop may have come after the last check of an Episode
        found it asleep: then it would never answer, and waiting on would hang the worker."""
        why = broken_state(self.pid, asleep_counts=asleep_counts)
        if why is not None:
            raise ZygoteBroken(f"the zygote (pid {self.pid}) {why}")

    def _broken(self, message: str) -> InfraError:
        return SandboxBroken(f"the sandbox's {message}") if self.sandboxed else InfraError(f"the {message}")

    def _read_one(self) -> tuple[bytes, bytes]:
        while True:
            try:
                message = self._sock.recv(64)
                break
            except TimeoutError:
                self._waited("did not answer")
            except OSError as exc:
                raise self._broken(f"zygote (pid {self.pid}) is gone: {exc}") from None
        if not message:
            raise self._broken(f"zygote (pid {self.pid}) exited unexpectedly")
        kind, body = message[:1], message[1:]
        if kind == b"P":
            (pid,) = _PID.unpack(body)
            self._spares.append(SpareChild(pid, *self._pending.popleft()))
        return kind, body

    def send_template(
        self, observation_space: Any, action_space: Any, metadata: Any, parameters: Any, policy_abi: Any = None
    ) -> None:
        """Give the zygote the Benchmark's public description (once, before the first fork); ``policy_abi``: a
        :class:`~.abi.child.ChildAbi` for ``--policy-abi`` other than the default."""
        fields = (observation_space, action_space, dict(metadata), dict(parameters))
        data = pickle.dumps(fields if policy_abi is None else (*fields, policy_abi))
        chunks = [data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [b""]
        for i, chunk in enumerate(chunks):
            self._send((b"J" if i == len(chunks) - 1 else b"I") + chunk)

    def request_child(self) -> None:
        """Ask for a new Policy child; it is collected later by :meth:`take_child` (fork latency hidden)."""
        child_reads, worker_writes = os.pipe()
        worker_reads, child_writes = os.pipe()
        log_read, log_write = os.pipe()
        try:
            self._send(b"F", (child_reads, child_writes, log_write))
        except BaseException:
            _close_all((worker_reads, worker_writes, log_read))
            raise
        finally:
            _close_all((child_reads, child_writes, log_write))
        os.set_blocking(log_read, False)
        with contextlib.suppress(OSError):  # room for a chatty Policy's output between two drains (else 64 KiB)
            fcntl.fcntl(log_read, fcntl.F_SETPIPE_SZ, _LOG_PIPE_BYTES)
        self._pending.append((worker_reads, worker_writes, log_read))

    @property
    def child_coming(self) -> bool:
        """Whether a child has been requested or forked and not yet taken."""
        return bool(self._pending or self._spares)

    def take_child(self) -> SpareChild:
        """The oldest requested child (requesting one first if none is on the way)."""
        if not self._spares and not self._pending:
            self.request_child()
        while not self._spares:
            self._read_one()
        return self._spares.popleft()

    def ready_child(self) -> SpareChild | None:
        """The oldest requested child if it is forked already, else None (never waits for the zygote)."""
        while not self._spares and self._pending and select.select([self._sock], [], [], 0)[0]:
            self._read_one()
        return self._spares.popleft() if self._spares else None

    @property
    def sets_up_elsewhere(self) -> bool:
        """Whether a child sets up on CPUs other than the worker's (a local zygote on spare CPUs): only then can a
        child load its Program while the worker runs an Episode without taking CPU from that Episode."""
        return self._teardown_cpus is not None

    def wait_status(self, pid: int) -> int:
        """The wait status of child ``pid``, which the caller has already killed."""
        self._send(b"W" + _PID.pack(pid))
        while True:
            kind, body = self._read_one()
            if kind == b"S":
                got, status = _STATUS.unpack(body)
                if got == pid:
                    return int(status)

    def discard(self, child: SpareChild) -> None:
        """Kill an unused child, free its descriptors and let the zygote reap it."""
        self.kill_child(child.pid)
        child.close_fds()
        self.release(child.pid)

    def release(self, pid: int) -> None:
        """Let the zygote reap child ``pid`` (already killed) without reporting its status.

        In a sandbox this waits until the zygote has cleared the sandbox of everything the Episode left."""
        self._send(b"K" + _PID.pack(pid))
        while self.sandboxed:
            kind, body = self._read_one()
            if kind == b"D" and _PID.unpack(body)[0] == pid:
                return

    def check_alive(self) -> None:
        """Raise :class:`ZygoteBroken` if a local zygote has ended or is stopped (call once the Policy is killed:
        nothing of it can change that any more). A sandboxed zygote is checked by its reply deadlines instead."""
        if not self.sandboxed:
            self._raise_if_broken(asleep_counts=False)

    def kill_child(self, pid: int) -> None:
        """SIGKILL child ``pid``'s process group (in a sandbox the zygote does it when told ``W`` or ``K``)."""
        if not self.sandboxed:
            if self._teardown_cpus is not None:
                with contextlib.suppress(OSError):  # it may be gone already
                    os.sched_setaffinity(pid, self._teardown_cpus)
            kill_group(pid)

    def close(self) -> None:
        """Kill spare children, close the socket (the zygote kills the rest and exits) and reap the zygote."""
        for spare in self._spares:
            self.kill_child(spare.pid)
            spare.close_fds()
        self._spares.clear()
        for fds in self._pending:
            _close_all(fds)
        self._pending.clear()
        self._sock.close()
        if self._sandbox is not None:  # the zygote sees the end of file and exits; as pid 1 it takes everything along
            try:
                self._sandbox.wait(_SANDBOX_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self._sandbox.kill()
                self._sandbox.wait()
            return
        _reap_or_kill(self.pid, time.monotonic() + _LOCAL_EXIT_SECONDS)


def _reap_or_kill(pid: int, deadline: float) -> None:
    """Reap a local zygote told to exit (its socket closed), killing it once it cannot or did not in time.

    A zygote a Policy stopped never sees the end of file, nor does one with a stop still pending (it may show as
    running, finishing a fork, when the worker closes it): it is killed as soon as either shows, never waited for."""
    pause = 0.0005
    while True:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        if time.monotonic() >= deadline or broken_state(pid) not in (None, "has ended"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def serve_sandboxed(sock: socket.socket, cpu: int | None) -> None:
    """Serve the worker as a sandboxed zygote until it goes away (see the module docstring)."""
    _zygote_loop(sock, cpu, sandboxed=True)
