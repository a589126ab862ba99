"""Executors run Episodes and hand back their outcomes in task order; the caller alone writes the ledger.

:class:`Executor` is the seam a distributed backend plugs into: ``run(tasks)`` yields one
:class:`EpisodeOutcome` per task, in task order, and ``close()`` releases everything. Outcomes depend
only on the tasks (not on scheduling), so any backend must give byte-identical trajectories.

:class:`LocalExecutor` runs Episodes on this machine with ``workers`` pre-warmed worker processes
(fresh interpreters, pinned to CPU ``i % ncpu``), each forking a fresh Policy child per Episode from
its zygote. While tasks remain, a busy worker has its next task queued in its channel, so it starts that Episode
without waiting for the coordinator to read the outcome (a task queued behind an Episode the worker dies in never
started: it goes back in line). A worker that dies is replaced; its in-flight Episode is reported as
``infra_fault``, unless the worker was found *stopped* (a Policy that sent it ``SIGSTOP``): it is then killed at
once and the Episode is the Policy's ``protocol_error``. Closing the executor, Ctrl-C and ``SIGTERM`` leave no
worker behind (:mod:`~.process_guard`).
With ``isolation="bwrap"`` (or ``"auto"`` where bubblewrap works) each worker's zygote and Policy children run in
a bubblewrap sandbox instead (:mod:`~.isolation`); the isolation actually used is :attr:`LocalExecutor.isolation`.
The workers of a Benchmark whose family has its own environment (``evoledger env install FAMILY``) start from that
venv's interpreter (:attr:`LocalExecutor.python`; :func:`~evoledger.kernel.family_env.worker_python`).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Protocol, Self, runtime_checkable

import orjson
from evoledger.kernel.execution.abi import DEFAULT_POLICY_ABI, check_policy_abi
from evoledger.kernel.execution.channel import ChannelClosed, ChannelTimeout, FrameChannel
from evoledger.kernel.execution.isolation import IsolationChoice, bwrap_path, resolve_isolation
from evoledger.kernel.execution.messages import (
    COORDINATOR_MAX_FRAME,
    TO_WORKER_BENCHMARK,
    TO_WORKER_QUIT,
    TO_WORKER_TASK,
    WORKER_ACCEPTED,
    WORKER_ERROR,
    WORKER_HELLO,
    WORKER_OUTCOME,
    outcome_from_frame,
    task_to_json,
)
from evoledger.kernel.execution.process_guard import guard_workers, is_stopped, kill_group, release_workers
from evoledger.kernel.execution.tasks import EpisodeOutcome, EpisodeTask
from evoledger.kernel.registry import BenchmarkRef, UntrustedRecordError
from evoledger.ledger.errors import ConfigError, InfraError, InputError

__all__ = ["Executor", "LocalExecutor"]

_WORKER_ENVIRONMENT: Final = {
    # One CPU per worker: keep numeric libraries single-threaded (also keeps Policy children small).
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # A fixed hash seed: set/dict iteration over str in Policies and Environments replays identically.
    "PYTHONHASHSEED": "0",
}
_INHERITED: Final = frozenset({"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "PYTHONPATH"})
_INHERITED_PREFIXES: Final = ("OPENBLAS_", "MKL_", "OMP_", "GOTO", "NUMEXPR_")
"""What a worker (and so every Policy) may inherit from the Host: never API keys or other secrets.
Numeric-library settings are kept: some CPUs need OPENBLAS_CORETYPE for correct results."""


def worker_environment(parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The minimal environment a worker process starts with."""
    source = os.environ if parent is None else parent
    kept = {k: v for k, v in source.items() if k in _INHERITED or k.startswith(_INHERITED_PREFIXES)}
    return {**kept, **_WORKER_ENVIRONMENT}


_STOP_GRACE_SECONDS: Final = 5.0
_WATCHDOG_SLACK_SECONDS: Final = 0.5
_SANDBOX_SLACK_SECONDS: Final = 30.0
"""Extra watchdog time with bwrap: a worker may wait for a stuck sandbox, then start a new one, before a task."""
_STATE_CHECK_SECONDS: Final = 0.25
"""How often the coordinator looks (in /proc) whether a busy worker has been stopped, e.g. by its Policy."""


def _watchdog_seconds(task: EpisodeTask, sandboxed: bool = False) -> float:
    """How long one Episode may take in wall-clock time before its worker is presumed stuck.

    The Policy's own limits, plus an allowance for Environment time of max(1 s, the Policy's Episode budget).
    """
    limits = task.limits
    environment = max(1.0, limits.episode_policy_seconds)
    slack = _WATCHDOG_SLACK_SECONDS + (_SANDBOX_SLACK_SECONDS if sandboxed else 0.0)
    return limits.make_policy_timeout_seconds + limits.episode_policy_seconds + environment + slack


@runtime_checkable
class Executor(Protocol):
    """Runs Episode tasks; yields their outcomes in task order."""

    def run(self, tasks: Sequence[EpisodeTask]) -> Iterator[EpisodeOutcome]:
        """Run ``tasks`` and yield one outcome per task, in the order of ``tasks``."""
        ...

    def close(self) -> None:
        """Release workers and processes. Idempotent."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class _Worker:
    """The coordinator's handle on one worker process."""

    def __init__(
        self,
        slot: int,
        cpu: int | None,
        benchmark_json: bytes,
        bwrap: str | None = None,
        spare: tuple[int, ...] = (),
        python: str = sys.executable,
    ) -> None:
        self.slot = slot
        self.cpu = cpu
        self.spare = spare
        self.bwrap = bwrap
        self.python = python
        """The interpreter the worker starts from: the main one, or a family venv's (never resolved: that loses it)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [python, "-m", "evoledger.kernel.execution.worker_start", "--fd", str(theirs.fileno())]
        if cpu is not None:
            command += ["--cpu", str(cpu)]
        if cpu is not None and spare:  # CPUs no worker is pinned to: its zygote forks the next Policy child there
            command += ["--spare-cpus", ",".join(map(str, spare))]
        self.programs: Path | None = None
        """With bwrap: the worker's folder of per-Episode Program copies (removed once the worker has ended)."""
        if bwrap is not None:
            self.programs = Path(tempfile.mkdtemp(prefix="evoledger-programs-"))
            command += ["--bwrap", bwrap, "--programs", str(self.programs)]
        try:
            self.process = subprocess.Popen(
                command,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=2,  # a Benchmark's prints must never reach the caller's stdout
                start_new_session=True,  # a terminal's Ctrl-C reaches the coordinator, which shuts workers down
                env=worker_environment(),
            )
        finally:
            theirs.close()
        guard_workers(self.process.pid)  # its own session: the worker leads its process group
        self.channel = FrameChannel(ours, max_frame=COORDINATOR_MAX_FRAME)
        self.ready = False
        self.dead = False
        self.task_id: int | None = None
        self.accepted = False
        """Whether the worker acknowledged its current task (before that, its death re-queues the task)."""
        self.deadline = 0.0
        self.overdue = False
        self.stopped = False
        """Whether the coordinator killed it because it was stopped (during an accepted task: the Policy's doing)."""
        self.dispatched_at = 0.0
        self.queued: deque[tuple[int, float]] = deque()
        """Tasks sent after the current one, not started yet (task id, watchdog seconds): the worker reads the next
        as soon as it sends an outcome, so that the coordinator's turnaround is not between its Episodes."""
        self.channel.send(TO_WORKER_BENCHMARK + benchmark_json)

    @property
    def idle(self) -> bool:
        return self.ready and not self.dead and self.task_id is None

    @property
    def can_queue(self) -> bool:
        """Whether a task may be sent to wait behind the current one."""
        return self.ready and not self.dead and self.task_id is not None and not self.queued
        # (an overdue or stopped worker is being killed: its channel closes and it is replaced)

    def start_next(self, now: float) -> None:
        """The current task ended: the next queued one (if any) is current now, its watchdog running from ``now``."""
        self.accepted = False
        if not self.queued:
            self.task_id = None
            return
        self.task_id, watchdog = self.queued.popleft()
        self.dispatched_at = now
        self.deadline = now + watchdog

    def kill(self) -> None:
        """SIGKILL the worker's process group (worker, zygote, sandbox); Policy children die with their zygote."""
        kill_group(self.process.pid)

    def reap(self, timeout: float) -> int:
        """Wait for the worker to end (killing its group after ``timeout``); its exit code."""
        try:
            try:
                code = self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                code = self.process.wait()
        except BaseException:  # e.g. a second Ctrl-C while waiting: never leave the worker behind
            self.kill()
            raise
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group only: the pid itself is reaped
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever is left of it (a zygote stopped by a Policy)
        release_workers(self.process.pid)
        return code

    def exit_description(self) -> str:
        code = self.reap(_STOP_GRACE_SECONDS)
        status = (-code) if code < 0 else (code << 8)
        from evoledger.kernel.execution.policy_process import describe_wait_status  # numpy: not at start-up

        return describe_wait_status(status)

    def discard_programs(self) -> None:
        """Remove the Program copies folder (call once the worker process has ended)."""
        if self.programs is not None:
            shutil.rmtree(self.programs, ignore_errors=True)

    def ask_to_stop(self) -> None:
        with contextlib.suppress(ChannelClosed):
            self.channel.send(TO_WORKER_QUIT)
        self.channel.close()

    def wait_stopped(self, deadline: float) -> None:
        if is_stopped(self.process.pid):  # it cannot read the quit message
            self.kill()
        self.reap(max(0.0, deadline - time.monotonic()))
        self.discard_programs()


def _unread(channel: FrameChannel) -> bool:
    """Whether ``channel`` holds bytes this process has not read yet."""
    return channel.pending() or bool(select.select([channel.fileno()], [], [], 0)[0])


def _startup_error(worker: _Worker, frame: bytes) -> Exception:
    try:
        report = orjson.loads(frame[1:])
        name, message = str(report["error"]), str(report["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return InfraError(f"worker {worker.slot} failed to start and sent an unreadable report")
    if name == "UntrustedRecordError":
        return UntrustedRecordError(f"the worker refused the Benchmark: {message}")
    if name in ("UnknownNameError", "ConfigError", "MissingExtraError", "InputError", "ValidationError"):
        return ConfigError(f"the worker could not build the Benchmark: {message}")
    return InfraError(f"worker {worker.slot} failed to start: {name}: {message}")


class LocalExecutor:
    """Runs Episodes in ``workers`` local worker processes (see the module docstring).

    Use it as a context manager (or call :meth:`close`). ``run`` may be called many times; one run at a
    time. Results are identical for any ``workers``: each Episode depends only on its task.
    ``allow_import=False`` (a Benchmark name read from a record the user did not trust): the workers build
    the Benchmark by registry name only and refuse an import string.
    ``wait_until_ready=False`` returns as soon as the worker processes are started, so that their start-up (a fresh
    interpreter each) overlaps the caller's own preparation; the first :meth:`run` waits for them (and raises
    their start-up errors).
    ``policy_abi``: the contract Policy Programs are run under (:mod:`~.abi`; default: the kernel's own).
    """

    def __init__(
        self,
        benchmark: BenchmarkRef,
        *,
        workers: int = 1,
        pin_cpus: bool = True,
        startup_timeout: float = 120.0,
        isolation: str = "local",
        allow_import: bool = True,
        wait_until_ready: bool = True,
        policy_abi: str = DEFAULT_POLICY_ABI,
    ) -> None:
        if not isinstance(benchmark, BenchmarkRef):
            raise ConfigError(f"benchmark must be a BenchmarkRef, got {type(benchmark).__name__}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a positive integer, got {workers!r}")
        self.isolation: IsolationChoice = resolve_isolation(isolation)
        """The isolation in use (``local`` or ``bwrap``), and why when ``auto`` fell back to ``local``."""
        self._bwrap = bwrap_path() if self.isolation.isolation == "bwrap" else None
        # allow_import=False: the workers build the Benchmark by registry name only (a name read from a record)
        self.policy_abi = policy_abi
        """The contract the Policy Programs are run under (``--policy-abi``)."""
        message: dict[str, Any] = {"ref": benchmark.model_dump(mode="json"), "allow_import": allow_import}
        if policy_abi != DEFAULT_POLICY_ABI:  # --policy-abi (abi/): refused here for a Benchmark without it
            check_policy_abi(policy_abi, benchmark.name)
            message["policy_abi"] = policy_abi
        self._benchmark_json = orjson.dumps(message)
        from evoledger.kernel.family_env.families import worker_python  # the registry only if a venv is installed

        self.python = worker_python(benchmark.name)
        """The interpreter the workers start from: a family venv's for a Benchmark whose family has its own
        environment and does not import in the main one (:mod:`evoledger.kernel.family_env`), else the main one."""
        self._startup_timeout = startup_timeout
        cpus = sorted(os.sched_getaffinity(0))
        self._cpus: list[int | None] = [cpus[i % len(cpus)] if pin_cpus else None for i in range(workers)]
        self._spare = tuple(c for c in cpus if c not in self._cpus) if pin_cpus else ()
        self._workers: list[_Worker] = []
        self._next_task_id = 0
        self._running = False
        self._pending: deque[int] = deque()
        self._closed = False
        self._next_check = 0.0
        try:
            self._workers = [
                _Worker(slot, cpu, self._benchmark_json, self._bwrap, self._spare, self.python)
                for slot, cpu in enumerate(self._cpus)
            ]
            if wait_until_ready:
                self._await_started()
        except BaseException:
            self.close()
            raise

    @property
    def worker_pids(self) -> tuple[int, ...]:
        """The current worker processes' pids, by slot (for diagnostics)."""
        return tuple(w.process.pid for w in self._workers)

    def _await_started(self) -> None:
        for worker in self._workers:
            if not worker.ready:
                self._await_ready(worker)

    def _await_ready(self, worker: _Worker) -> None:
        try:
            frame = worker.channel.receive(self._startup_timeout)
        except ChannelTimeout:
            raise InfraError(f"worker {worker.slot} did not start within {self._startup_timeout:g} s") from None
        except ChannelClosed:
            raise InfraError(f"worker {worker.slot} {worker.exit_description()} during start-up") from None
        self._handle_startup_frame(worker, frame)

    def _handle_startup_frame(self, worker: _Worker, frame: bytes) -> None:
        if frame and frame[0] == WORKER_HELLO:
            worker.ready = True
            return
        if frame and frame[0] == WORKER_ERROR:
            raise _startup_error(worker, frame)
        raise InfraError(f"worker {worker.slot} sent message kind {frame[:1]!r} during start-up")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (and with them their zygotes and Policy children). Idempotent."""
        if self._closed:
            return
        self._closed = True
        for worker in self._workers:
            worker.ask_to_stop()
        deadline = time.monotonic() + _STOP_GRACE_SECONDS
        for worker in self._workers:
            worker.wait_stopped(deadline)

    def run(self, tasks: Sequence[EpisodeTask]) -> Iterator[EpisodeOutcome]:
        """Run ``tasks``; yields their outcomes in task order. Tasks are checked before anything runs."""
        if self._closed:
            raise InputError("this LocalExecutor is closed; create a new one")
        if self._running:
            raise InputError("a run() of this LocalExecutor is still being iterated; finish or close it first")
        checked = list(tasks)
        for position, task in enumerate(checked):
            if not isinstance(task, EpisodeTask):
                raise ConfigError(f"task {position} is a {type(task).__name__}, not an EpisodeTask")
            if not (task.program_dir / "policy.py").is_file():
                raise ConfigError(
                    f"task {position}: {task.program_dir} has no policy.py; materialize the Program there first"
                )
        try:
            self._await_started()  # the workers of wait_until_ready=False
        except BaseException:
            self.close()
            raise
        self._running = True
        return self._outcomes(checked)

    def _outcomes(self, tasks: list[EpisodeTask]) -> Iterator[EpisodeOutcome]:
        positions: dict[int, int] = {}
        pending = self._pending = deque(range(len(tasks)))
        done: dict[int, EpisodeOutcome] = {}
        next_position = 0
        try:
            while next_position < len(tasks):
                self._dispatch(tasks, pending, positions)
                while next_position in done:
                    yield done.pop(next_position)
                    next_position += 1
                if next_position < len(tasks):
                    self._wait(tasks, positions, done)
        finally:
            self._running = False

    def _dispatch(self, tasks: list[EpisodeTask], pending: deque[int], positions: dict[int, int]) -> None:
        """Give every idle worker a task; then, while at least one task per worker waits, give each busy worker one
        more to queue behind its current one (so it starts without waiting for this process to read its outcome;
        near the end of the tasks nothing is queued, where it could wait behind a long Episode while a worker idles)."""
        for worker in self._workers:
            if not pending:
                return
            if worker.idle:
                position = pending.popleft()
                task_id = self._send_task(worker, tasks, position, positions)
                if task_id is None:  # it died while idle: the task never started, so it goes back in line
                    worker.dead = True
                    pending.appendleft(position)
                    continue
                worker.task_id = task_id
                worker.accepted = False
                worker.dispatched_at = time.perf_counter()
                worker.deadline = worker.dispatched_at + _watchdog_seconds(tasks[position], self._bwrap is not None)
        for worker in self._workers:
            if len(pending) < len(self._workers):
                return
            if worker.can_queue:
                position = pending.popleft()
                task_id = self._send_task(worker, tasks, position, positions)
                if task_id is None:  # it died: its channel's end is found (and it is replaced) while waiting
                    pending.appendleft(position)
                    continue
                worker.queued.append((task_id, _watchdog_seconds(tasks[position], self._bwrap is not None)))

    def _send_task(
        self, worker: _Worker, tasks: list[EpisodeTask], position: int, positions: dict[int, int]
    ) -> int | None:
        """Send the task at ``position`` to ``worker``; its task id, or None if the worker's channel is closed."""
        task_id = self._next_task_id
        self._next_task_id += 1
        try:
            worker.channel.send(TO_WORKER_TASK + task_to_json(tasks[position], task_id))
        except ChannelClosed:
            return None
        positions[task_id] = position
        return task_id

    def _wait(self, tasks: list[EpisodeTask], positions: dict[int, int], done: dict[int, EpisodeOutcome]) -> None:
        now = time.perf_counter()
        if now >= self._next_check:  # also while other workers keep sending: a stopped one must not wait for a lull
            self._next_check = now + _STATE_CHECK_SECONDS
            self._kill_stuck()
        ready = [w for w in self._workers if w.channel.pending()]
        if not ready:
            deadlines = [w.deadline for w in self._workers if w.task_id is not None]
            timeout = None
            if deadlines:  # wake up to look for stopped workers too
                timeout = min(max(0.0, min(deadlines) - time.perf_counter()), _STATE_CHECK_SECONDS)
            readable, _, _ = select.select([w.channel.fileno() for w in self._workers], [], [], timeout)
            ready = [w for w in self._workers if w.channel.fileno() in readable]
            if not ready:
                self._kill_stuck()
                return
        for worker in ready:
            try:
                frame = worker.channel.receive()
            except ChannelClosed:
                self._replace(worker, tasks, positions, done)
                continue
            if frame and frame[0] == WORKER_ACCEPTED:
                worker.accepted = True
            elif frame and frame[0] == WORKER_OUTCOME:
                task_id, outcome = outcome_from_frame(frame)
                worker.start_next(time.perf_counter())
                position = positions.pop(task_id, None)
                if position is not None:  # else a stale outcome of an abandoned run
                    done[position] = outcome
            else:
                self._handle_startup_frame(worker, frame)

    def _kill_stuck(self) -> None:
        """Kill the whole process group of a busy worker that is stuck; its channel then closes and it is replaced.

        A worker that is *stopped* (``SIGSTOP``, a tracer) is killed at once: during an accepted task only its
        Policy could have stopped it, so the Episode is the Policy's ``protocol_error``. A worker past its task's
        wall-clock deadline (an Environment that hangs) is killed then; its Episode is an infra fault. Not while
        frames from it wait unread: its task may have ended long ago (the caller held the outcomes' iterator) and the
        one it runs now, queued behind it, started later; the deadline is checked again once they are read."""
        now = time.perf_counter()
        for worker in self._workers:
            if worker.task_id is None or worker.overdue or worker.stopped:
                continue
            if is_stopped(worker.process.pid):
                worker.stopped = True
                worker.kill()
            elif now >= worker.deadline and not _unread(worker.channel):
                worker.overdue = True
                worker.kill()

    def _replace(
        self, worker: _Worker, tasks: list[EpisodeTask], positions: dict[int, int], done: dict[int, EpisodeOutcome]
    ) -> None:
        how = worker.exit_description()
        worker.discard_programs()
        if worker.overdue:
            how = f"exceeded its wall-clock deadline and was killed ({how})"
        policy_stopped_it = worker.stopped and worker.accepted
        worker.channel.close()
        if not worker.ready:
            raise InfraError(f"replacement worker {worker.slot} {how} during start-up")
        for task_id, _watchdog in reversed(worker.queued):  # never started: back in line, in their order
            queued_position = positions.pop(task_id, None)
            if queued_position is not None:  # else a task of an abandoned run
                self._pending.appendleft(queued_position)
        position = positions.pop(worker.task_id, None) if worker.task_id is not None else None
        if position is not None and not worker.accepted:
            # It died before acknowledging the task (a send into a dying worker can still succeed): the
            # task never started, so it goes back in line for another worker.
            self._pending.appendleft(position)
        elif position is not None:
            episode = tasks[position].episode
            what = f"the worker process (pid {worker.process.pid}) running this Episode"
            done[position] = EpisodeOutcome(
                split=episode.split,
                index=episode.index,
                status="protocol_error" if policy_stopped_it else "infra_fault",
                failure_message=(
                    f"{what} was stopped by a signal while the Policy ran (a Policy must not signal its worker); "
                    "it was killed and replaced"
                    if policy_stopped_it
                    else f"{what} {how}; it was replaced"
                ),
                wall_seconds=time.perf_counter() - worker.dispatched_at,
            )
        self._workers[worker.slot] = _Worker(
            worker.slot, worker.cpu, self._benchmark_json, self._bwrap, worker.spare, worker.python
        )
