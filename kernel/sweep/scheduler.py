"""Running a sweep's cells: each Run in its own process, at most N at a time, watched through its own ledger.

Each cell's process is a command line (``evoledger run ...`` or ``evoledger resume ...``, built by the caller) started
in its own session, so that a Ctrl-C in the terminal reaches the sweep alone and the sweep decides how its children
stop. Each child also asks the kernel for ``SIGTERM`` should the sweep die without stopping it (``PR_SET_PDEATHSIG``),
so that even a sweep ended by ``SIGKILL`` leaves no Run running unwatched: each stops as on ``SIGTERM`` and stays
resumable. What a child prints goes to the cell's log (``logs/<cell>.log``); its progress is read from its Run's
ledger (read-only), every ``poll_seconds``. Given a :class:`~.ray_placement.RunPlacer` (``evoledger sweep --backend
ray``), each cell's process is started by a Ray task on whichever node takes it instead (:mod:`~.ray_placement`); the
sweep records the node (``sweep-cell-placed``) and stays the only writer of its ledger.

On Ctrl-C or ``SIGTERM`` (:class:`KeyboardInterrupt`) the sweep sends ``SIGTERM`` to every running child (which stops
its Agent and workers and keeps its Run, as ``evoledger run`` does), waits for them, kills what is left after
``grace_seconds``, records each as ``interrupted`` and lets the interrupt go on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Literal

from evoledger.kernel.sweep.ray_placement import PlacedRun, RunPlacer, SharedStorageError
from evoledger.kernel.sweep.record import RunSnapshot, RunWatcher, SweepRecord
from evoledger.ledger.events import SweepCell, SweepCellOutcome, SweepCellPlaced

__all__ = ["CellJob", "CellView", "run_cells"]

_PR_SET_PDEATHSIG: Final = 1
_LOG_TAIL_BYTES: Final = 4096

CellState = Literal["waiting", "running", "resuming", "finished", "ended", "failed", "interrupted"]


@dataclass(frozen=True, slots=True)
class CellJob:
    """One cell to run: a new Run (``run``) or a resumed one (``resume``), and the command line that does it."""

    cell: SweepCell
    mode: Literal["run", "resume"]
    argv: Sequence[str]
    workers: int | None = None


@dataclass(slots=True)
class CellView:
    """What the sweep shows of one cell: its state, its Run's budget and scores, and how its last process ended."""

    name: str
    state: CellState | Literal["done earlier"] = "waiting"
    budget_used: int = 0
    budget_total: int = 0
    best_public: float | None = None
    assessment: float | None = None
    reason: str | None = None
    selected: str | None = None
    exit_code: int | None = None
    message: str = ""
    started: float | None = None
    seconds: float | None = None
    node: str | None = None
    """The host name of the Ray node running (or that ran) its last placed process."""
    extra: dict[str, object] = field(default_factory=dict)

    def absorb(self, run: RunSnapshot) -> None:
        """Take the Run's budget, best public score, Assessment score and end from ``run``."""
        state = run.state
        if state is None:
            return
        self.budget_total = state.episode_budget
        self.budget_used = state.charged - state.refunded
        scores = [s.score for s in state.submissions.values() if s.score is not None]
        if scores:
            minimize = state.score_direction == "minimize"
            self.best_public = min(scores) if minimize else max(scores)
        self.assessment = state.assessment_score
        self.reason = state.ended_reason
        self.selected = state.selected


def outcome_of(run: RunSnapshot, exit_code: int | None, *, stopping: bool) -> SweepCellOutcome:
    """How a cell's process ended, judged from its Run's ledger first, then from how the process ended."""
    if run.ended:
        return "finished" if run.reason == "finished" and run.state is not None and run.state.selected else "ended"
    return "interrupted" if stopping else "failed"


def _die_with_sweep() -> None:  # in the child, between fork and exec
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


@dataclass(slots=True)
class _Live:
    job: CellJob
    process: subprocess.Popen[bytes] | PlacedRun
    log: IO[bytes] | None
    watcher: RunWatcher
    attempt: int = 1
    placed: bool = False


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as log:
            size = os.fstat(log.fileno()).st_size
            log.seek(max(0, size - _LOG_TAIL_BYTES))
            data = log.read(_LOG_TAIL_BYTES)
    except OSError:
        return ""
    lines = [line for line in data.decode("utf-8", "backslashreplace").splitlines() if line.strip()]
    return "\n".join(lines[-12:])


def run_cells(
    record: SweepRecord,
    jobs: Sequence[CellJob],
    views: Mapping[str, CellView],
    *,
    parallel: int,
    on_tick: Callable[[], None] = lambda: None,
    poll_seconds: float = 0.5,
    grace_seconds: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
    env: Mapping[str, str] | None = None,
    placer: RunPlacer | None = None,
) -> None:
    """Run ``jobs`` in order, at most ``parallel`` at once, recording each start and end in ``record`` and keeping
    ``views`` current (``on_tick`` after each change and each poll); with ``placer``, each on a Ray node.

    A placed cell whose node cannot reach the sweep's folder ends as ``failed`` and its :class:`SharedStorageError`
    stops the sweep as an interrupt does (the other cells stopped, resumable)."""
    waiting = list(jobs)
    live: dict[str, _Live] = {}
    try:
        while waiting or live:
            while waiting and len(live) < parallel:
                job = waiting.pop(0)
                live[job.cell.name] = _start(record, job, views[job.cell.name], clock, env, placer)
                on_tick()
            for name, item in list(live.items()):
                view = views[name]
                view.absorb(item.watcher.look())
                ended = _done(item.process)
                _note_placement(record, item, view)
                if ended:
                    del live[name]
                    _finish(record, item, view, clock, stopping=False)
                    if isinstance(item.process, PlacedRun) and item.process.storage_error is not None:
                        raise item.process.storage_error
                if view.started is not None and view.seconds is None:
                    view.extra["elapsed"] = clock() - view.started
            on_tick()
            if live and not (waiting and len(live) < parallel):
                _wait_any(live, poll_seconds)
    except (KeyboardInterrupt, SharedStorageError):
        _stop(record, live, views, clock, grace_seconds)
        on_tick()
        raise


def _done(process: subprocess.Popen[bytes] | PlacedRun) -> bool:
    return process.done() if isinstance(process, PlacedRun) else process.poll() is not None


def _note_placement(record: SweepRecord, item: _Live, view: CellView) -> None:
    """Record where a placed cell's process runs, once, as soon as its task reports it."""
    where = item.process.placement if isinstance(item.process, PlacedRun) else None
    if where is None or item.placed:
        return
    item.placed = True
    view.node = where.hostname
    record.placed(
        SweepCellPlaced(
            cell=item.job.cell.name,
            attempt=item.attempt,
            node_id=where.node_id,
            hostname=where.hostname,
            address=where.address,
            pid=where.pid,
        )
    )


def _start(
    record: SweepRecord,
    job: CellJob,
    view: CellView,
    clock: Callable[[], float],
    env: Mapping[str, str] | None,
    placer: RunPlacer | None = None,
) -> _Live:
    name = job.cell.name
    attempt = record.started(name, job.mode, job.workers)
    path = record.log_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    log = open(path, "ab")  # noqa: SIM115 - closed when the process ends
    log.write(f"--- attempt {attempt}: {job.mode}: {' '.join(job.argv)}\n".encode())
    log.flush()
    if placer is not None:  # the task on the node appends to the log itself
        log.close()
        run_dir = record.run_dir(name)
        placed = placer.place(job.argv, path, cpus=placer.cpus_of(job.workers, run_dir))
        view.state = "running" if job.mode == "run" else "resuming"
        view.started, view.seconds, view.exit_code, view.message, view.node = clock(), None, None, "", None
        return _Live(job, placed, None, RunWatcher(run_dir), attempt)
    try:
        process = subprocess.Popen(
            list(job.argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_sweep,  # the sweep starts every child from its main thread
            env=None if env is None else dict(env),
        )
    except BaseException:
        log.close()
        raise
    view.state = "running" if job.mode == "run" else "resuming"
    view.started, view.seconds, view.exit_code, view.message = clock(), None, None, ""
    return _Live(job, process, log, RunWatcher(record.run_dir(name)), attempt)


def _finish(record: SweepRecord, item: _Live, view: CellView, clock: Callable[[], float], *, stopping: bool) -> None:
    if item.log is not None:
        item.log.close()
    code = item.process.returncode
    run = item.watcher.look()
    view.absorb(run)
    outcome = outcome_of(run, code, stopping=stopping)
    message = "" if outcome in ("finished", "ended", "interrupted") else _tail(record.log_path(item.job.cell.name))
    failure = item.process.failure if isinstance(item.process, PlacedRun) else ""
    if failure and outcome == "failed":
        message = f"{message}\n{failure}".strip()
    record.ended(item.job.cell.name, outcome, run, exit_code=code, message=message)
    view.state = outcome
    view.exit_code = code
    view.message = message
    if view.started is not None:
        view.seconds = clock() - view.started


def _wait_any(live: Mapping[str, _Live], timeout: float) -> None:
    """Sleep until a child ends or ``timeout`` passes (whichever comes first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(_done(item.process) for item in live.values()):
            return
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))


def _stop(
    record: SweepRecord,
    live: dict[str, _Live],
    views: Mapping[str, CellView],
    clock: Callable[[], float],
    grace_seconds: float,
) -> None:
    for item in live.values():
        with contextlib.suppress(ProcessLookupError):
            item.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    for item in live.values():
        try:
            item.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            if isinstance(item.process, PlacedRun):
                item.process.kill()
            else:
                for kill in (os.killpg, os.kill):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        kill(item.process.pid, signal.SIGKILL)
            item.process.wait()
    for name, item in live.items():
        _note_placement(record, item, views[name])  # a placement reported after the last poll
        _finish(record, item, views[name], clock, stopping=True)
    live.clear()
