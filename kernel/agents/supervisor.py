"""Run one Agent process: minimal environment, own process group, capped output, a watchdog deadline, a clean stop.

The Agent runs with ``start_new_session=True``, so it leads a new process group and everything it spawns (unless
that calls ``setsid`` itself) belongs to the group. Ending the Agent means ending the *group*: SIGTERM, a grace
period, then SIGKILL; and then every process still carrying the Agent's ``marker`` environment entry, which finds
the children that left the group with ``setsid`` (``kernel.agents.marked``). That is how the Host withdraws the
Agent's authority after ``finish`` even from children that outlive the Agent itself.

The deadline is enforced by a watchdog thread, not by whoever calls :meth:`AgentSupervisor.poll`: a Host busy
deciding a long request still ends the Agent on time. Output goes through pipes into capped logs
(``kernel.agents.log_capture``): the head and a ring buffer of the tail, with a note of what was dropped.

The environment is built from scratch: a handful of basic variables (:data:`BASE_ENV_VARS`), the adapter's
``env_allowlist`` taken from the parent environment, the adapter's own extra variables and the ``EVOLEDGER_*``
variables the Host passes. Nothing else of the parent environment reaches the Agent.

With a ``sandbox`` (:class:`~evoledger.kernel.agents.sandbox.AgentSandbox`) the Agent runs as ``bwrap ... -- argv``:
bwrap leads the process group, and the Agent's whole tree lives in bwrap's pid namespace, so ending the group ends
every process the Agent started, ``setsid`` children included. The adapter's ``needs_network`` and ``state_paths``
(read with defaults ``False`` and ``()``) decide whether the sandbox keeps the network and which folders stay writable.

``wait()`` and ``stop()`` may be called from different threads (a Host thread waits while the coordinator
stops the Agent after ``finish``); both return the same :class:`AgentExit`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from evoledger.kernel.agents.base import AgentCommand, AgentTask, CodingAgent
from evoledger.kernel.agents.log_capture import TRANSCRIPT_HEAD_BYTES, CappedLog, StreamCapture
from evoledger.kernel.agents.marked import end_marked_processes
from evoledger.kernel.agents.sandbox import AgentSandbox, expand_state_paths
from evoledger.ledger.errors import ConfigError, InfraError

__all__ = ["BASE_ENV_VARS", "HOST_ENV_PREFIX", "AgentExit", "AgentSupervisor", "build_agent_env"]

BASE_ENV_VARS: Final = ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR")
"""Parent variables every Agent inherits (when set)."""

HOST_ENV_PREFIX: Final = "EVOLEDGER_"
"""Variables the Host passes to the Agent must carry this prefix."""

_POLL_SECONDS: Final = 0.02
_WATCHDOG_SECONDS: Final = 0.05
_LOG_DRAIN_SECONDS: Final = 1.0


@dataclass(frozen=True, slots=True)
class AgentExit:
    """How an Agent process ended.

    ``exit_code`` is the process's own exit status (``None`` when a signal ended it, then ``signal`` names it);
    ``duration`` is measured with the supervisor's clock from start to the moment the exit was observed;
    ``timed_out`` says the supervisor ended it at its deadline, ``stopped`` that ``stop()`` was called while it
    was still running. The captured output lives at ``stdout_path`` / ``stderr_path``, capped
    (``kernel.agents.log_capture``: head, tail, and a line saying what was dropped).
    """

    exit_code: int | None
    signal: int | None
    duration: float
    timed_out: bool
    stopped: bool
    stdout_path: Path
    stderr_path: Path

    @property
    def ok(self) -> bool:
        """Whether the Agent exited on its own with status 0."""
        return self.exit_code == 0 and not self.timed_out


def build_agent_env(
    agent: CodingAgent,
    command: AgentCommand,
    parent_env: Mapping[str, str],
    host_env: Mapping[str, str],
    *,
    path_first: Sequence[Path] = (),
) -> dict[str, str]:
    """The Agent's whole environment: allow-listed parent variables, then the adapter's, then the Host's.

    ``path_first`` are folders put at the front of ``PATH`` (before whatever the parent or the adapter set; with
    neither, before :data:`os.defpath`): the Host's ``evoledger-session`` launcher is found before any other.
    """
    for key in host_env:
        if not key.startswith(HOST_ENV_PREFIX):
            raise ConfigError(
                f"the Host may only pass {HOST_ENV_PREFIX}* variables to an Agent, got {key!r}; "
                "add other variables to the adapter's env_allowlist instead"
            )
    allowed = set(BASE_ENV_VARS) | set(agent.env_allowlist)
    env = {key: value for key, value in parent_env.items() if key in allowed}
    env.update(command.env)
    env.update(host_env)
    if path_first:
        rest = env.get("PATH") or os.defpath
        env["PATH"] = os.pathsep.join([*(str(folder) for folder in path_first), rest])
    return env


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (zombies do not count)."""
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] != "Z":
                return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class AgentSupervisor:
    """Starts one Agent for one task and supervises it until it exits, times out or is stopped.

    ``log_dir`` receives ``stdout.log``, ``stderr.log`` (the Host stores them as Objects), ``stdin.bin`` when the
    adapter sends stdin, and ``task.md`` when ``task.task_file`` is not set. ``parent_env`` defaults to
    ``os.environ``; ``host_env`` holds the ``EVOLEDGER_*`` variables (session socket, workspace, ...);
    ``path_first`` folders go first on the Agent's ``PATH`` (the Host's ``evoledger-session`` launcher).
    ``clock`` is a monotonic seconds counter; ``kill_grace`` the seconds between SIGTERM and SIGKILL on timeout
    and when ending orphans. With ``reap_orphans`` (the default) the processes an Agent leaves behind in its group
    are ended as soon as the Agent's own process exits, so no background job keeps running (or keeps calling the
    session) after the Agent is gone; ``stop()`` ends them in any case. ``marker`` (``NAME=value``, an entry of
    ``host_env`` no other Agent shares) extends both to every process whose environment carries it.

    The log files are complete (capped) once the exit is returned by :meth:`poll`, :meth:`wait` or :meth:`stop`.
    """

    def __init__(
        self,
        agent: CodingAgent,
        task: AgentTask,
        *,
        log_dir: Path,
        host_env: Mapping[str, str] | None = None,
        parent_env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        kill_grace: float = 5.0,
        reap_orphans: bool = True,
        marker: str | None = None,
        sandbox: AgentSandbox | None = None,
        path_first: Sequence[Path] = (),
    ) -> None:
        if kill_grace < 0:
            raise ConfigError(f"kill_grace must be >= 0 seconds, got {kill_grace!r}")
        if marker is not None and marker.partition("=")[::2] not in set((host_env or {}).items()):
            raise ConfigError(f"the marker {marker!r} must be one NAME=value entry of host_env; pass one of them")
        if task.task_file is None:
            task = dataclasses.replace(task, task_file=Path(log_dir) / "task.md")
        self._agent = agent
        self._task = task
        self._log_dir = Path(log_dir)
        self._host_env = dict(host_env or {})
        self._parent_env = dict(os.environ if parent_env is None else parent_env)
        self._clock = clock
        self._kill_grace = kill_grace
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._started_at = 0.0
        self._deadline: float | None = None
        self._reap_orphans = reap_orphans
        self._exit: AgentExit | None = None
        self._marker = marker
        self._captures: list[StreamCapture] = []
        self._logs_done = False
        self._exited = threading.Event()
        self._timed_out = False
        self._stopped = False
        self.command: AgentCommand = agent.command(task)
        self.env: dict[str, str] = build_agent_env(
            agent, self.command, self._parent_env, self._host_env, path_first=path_first
        )
        self._sandbox = sandbox
        self.argv: list[str] = list(self.command.argv)
        """What is started: the adapter's argv, or (from :meth:`start` on) ``bwrap ... -- argv`` with a sandbox."""

    @property
    def task(self) -> AgentTask:
        """The task as launched (with ``task_file`` filled in)."""
        return self._task

    @property
    def stdout_path(self) -> Path:
        return self._log_dir / "stdout.log"

    @property
    def stderr_path(self) -> Path:
        return self._log_dir / "stderr.log"

    @property
    def pid(self) -> int | None:
        """The Agent's pid (also its process-group id) once started."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> int:
        """Write the task file, start the Agent in the workspace and return its pid."""
        with self._lock:
            if self._proc is not None:
                raise ConfigError("this AgentSupervisor has already started its Agent; create a new one per launch")
            workspace = self._task.workspace
            if not workspace.is_dir():
                raise ConfigError(f"the Agent workspace {str(workspace)!r} is not a directory; create it first")
            self._log_dir.mkdir(parents=True, exist_ok=True)
            task_file = self._task.task_file
            assert task_file is not None  # filled in by __init__
            task_file.parent.mkdir(parents=True, exist_ok=True)
            task_file.write_text(self._task.task_text, encoding="utf-8")
            if self.command.home is not None:  # the CLI's own configuration folder (kernel.agents.homes)
                self.command.home.prepare(self._parent_env)
            if self._sandbox is not None:  # built now: the task file it binds exists from here on
                network = bool(getattr(self._agent, "needs_network", False))
                state = expand_state_paths(getattr(self._agent, "state_paths", ()), self.env)
                self.argv = self._sandbox.command(
                    self.command.argv, network=network, state_paths=state, search_path=self.env.get("PATH", "")
                )
            stdin: IO[bytes] | int = subprocess.DEVNULL
            stdin_file: IO[bytes] | None = None
            if self.command.stdin is not None:
                stdin_path = self._log_dir / "stdin.bin"
                stdin_path.write_bytes(self.command.stdin)
                stdin_file = stdin = stdin_path.open("rb")
            out_read, out_write = os.pipe()
            err_read, err_write = os.pipe()
            try:
                self._proc = subprocess.Popen(
                    self.argv,
                    cwd=workspace,
                    env=self.env,
                    stdin=stdin,
                    stdout=out_write,
                    stderr=err_write,
                    start_new_session=True,
                    close_fds=True,
                )
            except (FileNotFoundError, PermissionError) as exc:
                raise ConfigError(
                    f"cannot start Agent {self._agent.name!r}: {self.command.argv[0]!r} is not installed or not "
                    f"executable ({exc.strerror}); install it, or name the program yourself with "
                    "--agent 'command:/path/to/program ARGS...'"
                ) from exc
            except OSError as exc:
                raise InfraError(
                    f"cannot start Agent {self._agent.name!r} with {self.command.argv[0]!r}: {exc}"
                ) from exc
            finally:
                if stdin_file is not None:
                    stdin_file.close()
                os.close(out_write)
                os.close(err_write)
                if self._proc is None:
                    os.close(out_read)
                    os.close(err_read)
                    if self.command.home is not None:
                        self.command.home.remove()
            transcript = None  # a transcript on stdout: a larger head, and when each line arrived
            if self.command.transcript is not None:
                transcript = CappedLog(head_bytes=TRANSCRIPT_HEAD_BYTES, arrivals=True)
            self._captures = [
                StreamCapture(out_read, self.stdout_path, transcript),
                StreamCapture(err_read, self.stderr_path),
            ]
            self._started_at = self._clock()
            if self._task.timeout is not None:
                self._deadline = self._started_at + self._task.timeout
                threading.Thread(target=self._watchdog, name="agent-watchdog", daemon=True).start()
            return self._proc.pid

    def _watchdog(self) -> None:
        """End the Agent at its deadline, whatever the thread that polls it is doing."""
        deadline = self._deadline
        assert deadline is not None
        while not self._exited.wait(_WATCHDOG_SECONDS):
            if self._clock() >= deadline:
                with self._lock:
                    proc = self._require_started()
                    if self._exit is None and proc.poll() is None:
                        self._timed_out = True
                        self._end_group(proc, self._kill_grace)
                        self._finish_logs()
                return

    def _require_started(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            raise ConfigError("the Agent has not been started; call start() first")
        return self._proc

    def poll(self) -> AgentExit | None:
        """The exit if the Agent has ended, else ``None``. Also enforces the deadline and reaps orphans.

        Past the task's deadline it ends the whole group (``timed_out=True``). When the Agent has exited and
        ``reap_orphans`` is set, it ends the group members the Agent left behind. Either may take up to
        ``kill_grace`` seconds; otherwise it never blocks.
        """
        with self._lock:
            proc = self._require_started()
            if self._exit is None:
                if proc.poll() is not None:
                    self._record_exit(proc)
                    if self._reap_orphans:
                        self._end_group(proc, self._kill_grace)
                    self._finish_logs()
                elif self._deadline is not None and self._clock() >= self._deadline:
                    self._timed_out = True
                    self._end_group(proc, self._kill_grace)
                    self._finish_logs()
            return self._exit

    def wait(self) -> AgentExit:
        """Block until the Agent exits or its deadline passes (then its whole group is ended, ``timed_out=True``)."""
        proc = self._require_started()
        while (done := self.poll()) is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_POLL_SECONDS)
        return done

    def stop(self, grace_seconds: float = 5.0) -> AgentExit:
        """End the Agent's authority: SIGTERM its group, SIGKILL after ``grace_seconds``, reap, return the exit.

        Also ends group members that outlived the Agent when it has already exited. Safe to call repeatedly.
        """
        if grace_seconds < 0:
            raise ConfigError(f"grace_seconds must be >= 0, got {grace_seconds!r}")
        with self._lock:
            proc = self._require_started()
            if self._exit is None and proc.poll() is None:
                self._stopped = True
            self._end_group(proc, grace_seconds)
            self._finish_logs()
            assert self._exit is not None
            return self._exit

    def _end_group(self, proc: subprocess.Popen[bytes], grace: float) -> None:
        pgid = proc.pid
        if proc.poll() is None or _group_alive(pgid):
            _signal_group(pgid, signal.SIGTERM)
            deadline = self._clock() + grace
            while self._clock() < deadline:
                if proc.poll() is not None and self._exit is None:
                    self._record_exit(proc)
                if proc.poll() is not None and not _group_alive(pgid):
                    break
                time.sleep(_POLL_SECONDS)
            _signal_group(pgid, signal.SIGKILL)
        if self._marker is not None:
            end_marked_processes(self._marker)  # children that left the group with setsid()
        proc.wait()
        if self._exit is None:
            self._record_exit(proc)

    def _finish_logs(self) -> None:
        """Drain what the Agent's processes wrote (briefly) and write the capped logs, once."""
        if self._logs_done:
            return
        self._logs_done = True
        for capture in self._captures:
            capture.finish(_LOG_DRAIN_SECONDS)
        if self.command.home is not None:
            self.command.home.remove()

    def _record_exit(self, proc: subprocess.Popen[bytes]) -> None:
        code = proc.returncode
        assert code is not None
        self._exited.set()
        self._exit = AgentExit(
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            duration=max(0.0, self._clock() - self._started_at),
            timed_out=self._timed_out,
            stopped=self._stopped,
            stdout_path=self.stdout_path,
            stderr_path=self.stderr_path,
        )
