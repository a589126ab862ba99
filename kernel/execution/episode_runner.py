"""Run one Episode inside a worker: a fresh Environment, a fresh Policy child, and the loop between them.

Who is blamed for what:

* Anything raised by ``make_environment``, ``reset``, ``close``, or by ``step`` other than
  :class:`InvalidAction`, and any malformed ``Step`` (not a Step, a non-finite reward, an observation
  that cannot be sent or recorded) is an **infra fault** — never the Policy's. One exception to that:
  if ``step`` crashes on an action that is *outside the action space*, the Policy sent an invalid
  action and the Environment merely failed to say so politely; that is ``invalid_action`` (otherwise a
  Policy could turn any bad Episode into a refunded infra fault by sending garbage).
* :class:`InvalidAction` from ``step``: ``invalid_action``.
* What the Policy returned is the Policy's: the Policy process refuses any action off the allow-list of
  :mod:`~evoledger.kernel.execution.action_wire` itself (``invalid_action``), the worker re-checks what
  arrives (``protocol_error``), and any failure to conform or record a decoded action is ``invalid_action``,
  so no action value can turn an Episode into a refunded infra fault.
* The Policy's own failures come from :mod:`evoledger.kernel.execution.policy_process`; a Policy
  process that died without replying is ``timeout`` if it was killed for exceeding ``RLIMIT_CPU``
  (``SIGXCPU``), else ``protocol_error``.
* In a bubblewrap sandbox (``--isolation bwrap``) only Policy code runs beside the zygote, and every Episode ends
  with a sandbox cleared of everything the previous one left; so a sandbox that dies or stops answering while a
  Policy holds it is that Policy's doing: ``protocol_error``. The worker then launches a fresh sandbox.

An Environment that has not ended the Episode after the Benchmark's ``max_episode_steps`` steps is
truncated there (as gymnasium's ``TimeLimit`` would). The Environment is created and reset *before*
the Policy child is started, so a Benchmark fault never consumes a child: the unused child (which
holds nothing of any Episode) serves the next Episode.

When the task queued behind this one runs the same Program, its child may load the Program while this Episode runs
(:meth:`EpisodeRunner._start_ahead`), on a CPU no worker uses. It is blamed for nothing before its own Episode: a
failure it reports while loading is that Episode's, a child found stopped or ended when its Episode begins is replaced
by a fresh one (this Episode's Policy could have signalled it), and its ``make_policy`` gets at least its whole timeout
from its own Episode's start.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.authoring import Benchmark, Environment, InvalidAction
from evoledger.kernel.execution.actions import conform_action
from evoledger.kernel.execution.capture import bound_text
from evoledger.kernel.execution.episode_record import EnvironmentFault, EpisodeRecord, describe_exception
from evoledger.kernel.execution.isolation import SANDBOX_PROGRAMS
from evoledger.kernel.execution.policy_process import PolicyFailed, PolicyProcess, describe_wait_status
from evoledger.kernel.execution.process_guard import broken_state
from evoledger.kernel.execution.tasks import EpisodeOutcome, EpisodeTask
from evoledger.kernel.execution.values import to_json_value
from evoledger.kernel.execution.zygote import SpareChild, Zygote, ZygoteBroken
from evoledger.ledger.errors import InfraError

__all__ = ["EpisodeRunner"]

_MAX_MESSAGE_CHARS: Final = 2000
_AHEAD_STEP: Final = 16
"""The first step at which the next Episode's child may start loading its Program (:meth:`EpisodeRunner._start_ahead`;
tried again at 4x, 16x, ... that step while nothing was ready to start)."""


def _in_space(space: Any, action: Any) -> bool:
    try:
        return bool(space.contains(action))
    except Exception:
        return False


class EpisodeRunner:
    """Runs Episodes one after another for a worker; :meth:`prefork` keeps one Policy child forked ahead."""

    def __init__(
        self,
        benchmark: Benchmark,
        zygote: Zygote,
        *,
        relaunch: Callable[[], Zygote] | None = None,
        programs: Path | None = None,
    ) -> None:
        """``relaunch`` and ``programs`` (the folder the sandbox sees at ``/program``) come with a sandboxed zygote."""
        self._benchmark = benchmark
        self._action_space = benchmark.action_space
        self._max_steps = benchmark.spec.max_episode_steps
        self._zygote = zygote
        self._relaunch = relaunch
        self._programs = programs
        self._copies = itertools.count()
        self._broken = False
        self._unused: SpareChild | None = None
        self._ahead: tuple[EpisodeTask, PolicyProcess] | None = None
        """The next Episode's Policy child, started ahead (:meth:`_start_ahead`), with the task it was started for."""

    def warm_up(self) -> None:
        """Fork the first Policy child and wait for it (so start-up problems surface before any task)."""
        if self._unused is None:
            self._unused = self._zygote.take_child()

    def prefork(self) -> None:
        """Have the next Episode's Policy child forked now (call while idle, e.g. right after an outcome is sent).

        Forking between Episodes hides its latency without ever counting it as Policy time. A sandbox broken by the
        last Episode's Policy is replaced here, also outside any Episode's time.
        """
        self._mend()
        if self._unused is None and not self._zygote.child_coming:
            self._zygote.request_child()

    @property
    def retired(self) -> bool:
        """Whether this runner can run no more Episodes: a Policy broke its local zygote, which only a new worker
        can replace (forking a zygote now would copy this worker's Host data into it). The worker then exits."""
        return self._broken and self._relaunch is None

    def _fork_ahead(self) -> None:
        """Have the next Episode's child forked now, while this Episode runs (the zygote may use another CPU).

        Not in a sandbox: there the end of every Episode clears the sandbox of all processes, a spare one included."""
        if not self._zygote.sandboxed and not self._zygote.child_coming:
            with contextlib.suppress(InfraError):  # a zygote gone wrong is found (and blamed) when this Episode ends
                self._zygote.request_child()

    def _mend(self) -> None:
        if self._broken and self._relaunch is not None:
            self._zygote.close()
            self._zygote = self._relaunch()
            self._broken = False

    def _stage(self, program_dir: Path) -> tuple[Path, Path | None]:
        """Where the Policy finds the Program: a private copy the sandbox sees read-only, or ``program_dir`` itself."""
        if self._programs is None:
            return program_dir, None
        name = f"episode-{next(self._copies)}"
        copy = self._programs / name
        _copy_program(program_dir, copy)
        return Path(SANDBOX_PROGRAMS) / name, copy

    def _close_policy(self, process: PolicyProcess, *, want_status: bool) -> tuple[int | None, str | None]:
        """Close the Policy child; the wait status, and what broke if its sandbox broke (then mended later)."""
        try:
            return process.close(self._zygote, want_status=want_status), None
        except ZygoteBroken as broken:
            self._broken = True
            return None, str(broken)

    def _start_ahead(self, current: EpisodeTask, upcoming: Callable[[], EpisodeTask | None] | None) -> None:
        """Have the next Episode's Policy child load its Program now, on a spare CPU, while this Episode runs.

        Only for the same Program (whatever its Policy could do to this Episode's, it does to its own Program), with
        a local zygote that sets children up on spare CPUs, and a child already forked: nothing here ever waits."""
        if self._ahead is not None or upcoming is None or not self._zygote.sets_up_elsewhere:
            return
        task = upcoming()
        if task is None or task.program_dir != current.program_dir:
            return
        child, self._unused = self._unused, None
        if child is None:
            child = self._zygote.ready_child()
        if child is None:
            return
        process = PolicyProcess(child, task.limits)
        try:
            process.start(task.program_dir, task.policy_seed, ahead=True)
        except PolicyFailed:  # gone already (signalled by this Episode's Policy): its own Episode forks anew
            self._close_policy(process, want_status=False)
            return
        self._ahead = (task, process)

    def _started_ahead(self, task: EpisodeTask) -> PolicyProcess | None:
        """The child started ahead for ``task``, if there is one that can still serve (else it is closed)."""
        if self._ahead is None:
            return None
        (planned, process), self._ahead = self._ahead, None
        if planned is task and broken_state(process.pid) is None:
            process.begin()
            return process
        # Signalled by the Episode before (stopped, killed), or ended by itself (a failure it reported while
        # loading): never blamed on this Episode from that; a fresh child repeats the load in this Episode's time.
        self._close_policy(process, want_status=False)
        return None

    def _take_child(self) -> SpareChild:
        child, self._unused = self._unused, None
        if child is None:
            child = self._zygote.take_child()
        if not self._zygote.sandboxed and broken_state(child.pid) is not None:
            # Forked ahead while the last Episode ran, whose Policy could signal it (stop or kill it): never hand such
            # a child on (its failure would be blamed on this Episode's Policy). The Policy is gone now: fork anew.
            self._zygote.discard(child)
            child = self._zygote.take_child()
        return child

    def run(self, task: EpisodeTask, upcoming: Callable[[], EpisodeTask | None] | None = None) -> EpisodeOutcome:
        """Run ``task`` to its end and describe how it ended (never raises for Policy or Environment faults).

        ``upcoming``: the task that will run next, if known yet without waiting (None otherwise); a child for it may
        then load its Program while this Episode runs (:meth:`_start_ahead`)."""
        began = time.perf_counter()
        episode = EpisodeRecord(task)
        env: Environment | None = None
        process: PolicyProcess | None = None
        status, message, trace = "ok", None, None
        broken: str | None = None
        copy: Path | None = None
        self._mend()
        try:
            env = episode.environment(
                "Benchmark.make_environment", lambda: self._benchmark.make_environment(task.episode)
            )
            wire = episode.observe(episode.environment("Environment.reset", env.reset))
            process = self._started_ahead(task)
            if process is None:
                program_dir, copy = self._stage(task.program_dir)
                process = PolicyProcess(self._take_child(), task.limits)
                self._fork_ahead()
                process.start(program_dir, task.policy_seed, wire)
            else:
                self._fork_ahead()
            process.wait_ready()
            self._loop(episode, env, process, wire, lambda: self._start_ahead(task, upcoming))
        except PolicyFailed as failure:
            status, message, trace = failure.code, failure.message, failure.trace
            if failure.died and process is not None:
                wait_status, broken = self._close_policy(process, want_status=True)
                status, message = self._classify_death(failure, wait_status, task)
        except EnvironmentFault as fault:
            status, message = "infra_fault", str(fault)
        except ZygoteBroken as gone:  # found while taking this Episode's child: an earlier Episode's Policy did it
            self._broken = True
            status, message = "infra_fault", f"{gone} before this Episode's Policy started (not its doing)"
        finally:
            if process is not None:
                _status, broken_now = self._close_policy(process, want_status=False)
                broken = broken or broken_now
            if copy is not None:
                shutil.rmtree(copy, ignore_errors=True)
        if broken is not None and status != "infra_fault":
            status = "protocol_error"
            where = "its sandbox" if self._zygote.sandboxed else "the zygote it was forked from"
            message = f"the Policy broke {where} ({broken}); only Policy code runs there" + (
                "" if message is None else f"; before that: {message}"
            )
        if env is not None:
            try:
                episode.environment("Environment.close", env.close)
            except EnvironmentFault as fault:
                if status == "ok":
                    status, message = "infra_fault", str(fault)
        trajectory = episode.trajectory()
        return EpisodeOutcome(
            split=task.episode.split,
            index=task.episode.index,
            status=status,  # type: ignore[arg-type]
            episode_return=episode.episode_return,
            steps=episode.steps,
            terminated=episode.terminated,
            truncated=episode.truncated,
            metrics=episode.last_metrics,
            failure_message=None if message is None else bound_text(message, _MAX_MESSAGE_CHARS),
            traceback=trace,
            policy_log=b"" if process is None else process.log.getvalue(),
            trajectory=trajectory,
            policy_seconds=0.0 if process is None else process.seconds,
            environment_seconds=episode.environment_seconds,
            wall_seconds=time.perf_counter() - began,
        )

    def _loop(
        self, episode: EpisodeRecord, env: Environment, process: PolicyProcess, wire: bytes, ahead: Callable[[], None]
    ) -> None:
        """Step until the Episode ends; ``ahead`` is called at step :data:`_AHEAD_STEP` and at every fourfold of it
        (by then the next task has usually arrived, and the child forked for it is set up). Not in shorter Episodes:
        there it would hide little and cost more (the child would load on one CPU and then move, just before its
        Episode begins)."""
        space = self._action_space
        max_steps = self._max_steps
        probe = _AHEAD_STEP
        while True:
            decoded = process.act(wire)
            try:  # the action is the Policy's: failing to conform or record it is never an infra fault
                action = conform_action(decoded, space)
                action_json = to_json_value(action)
            except Exception as exc:
                raise PolicyFailed(
                    "invalid_action", f"act() returned an action that cannot be recorded: {describe_exception(exc)}"
                ) from None
            try:
                step = episode.environment("Environment.step", env.step, action, may_reject=True)
            except InvalidAction as exc:
                raise PolicyFailed(
                    "invalid_action", f"the Environment rejected the action {action!r:.200}: {exc}"
                ) from None
            except EnvironmentFault as fault:
                if not _in_space(space, action):
                    raise PolicyFailed(
                        "invalid_action", f"the action {action!r:.200} is outside the action space ({fault})"
                    ) from None
                raise
            episode.add_step(action_json, step)
            wire = episode.observe(step.observation)
            steps = episode.steps
            ended = episode.terminated or episode.truncated
            if not ended and steps >= max_steps:
                episode.truncated = ended = True
            if ended:
                return
            if steps == probe:
                ahead()
                probe *= 4

    @staticmethod
    def _classify_death(failure: PolicyFailed, wait_status: int | None, task: EpisodeTask) -> tuple[str, str]:
        words = "ended with an unknown status" if wait_status is None else describe_wait_status(wait_status)
        if wait_status is not None and wait_status >= 0 and _signalled(wait_status, signal.SIGXCPU):
            limit = task.limits.effective_cpu_seconds
            return "timeout", f"the Policy process exceeded its CPU time limit of {limit} s and {words}"
        return failure.code, f"{failure.message} (it {words})"


def _signalled(status: int, sig: signal.Signals) -> bool:
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == sig


def _copy_program(source: Path, target: Path) -> None:
    """Copy a Program's regular files and folders (symbolic links as links; nothing else), without following links."""
    target.mkdir()
    for entry in os.scandir(source):
        destination = target / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), destination)
        elif entry.is_dir(follow_symlinks=False):
            _copy_program(Path(entry.path), destination)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, destination, follow_symlinks=False)
