"""Episodes on a Ray cluster: :class:`RayExecutor`, the distributed backend behind the :class:`Executor` seam.

The executor keeps a pool of ``workers`` Ray actors (one CPU each, spread over the cluster's nodes), with up to
two Episodes queued on each, so the next one is already there when one ends. Each actor (:mod:`~.ray_actor`)
hosts a one-worker :class:`LocalExecutor`, so an Episode runs exactly as it does locally: a pre-warmed worker
process (a fresh interpreter, never a fork of Ray's multi-threaded worker) forks a fresh Policy process per
Episode under the same limits and the same isolation. Actors rather than one Ray task per Episode: a task would
have to start that worker (a fresh interpreter with numpy and gymnasium) for every Episode, seconds against a few
milliseconds of actor call (``bench/ray_bench.py`` measures both).

* **Programs ship by digest.** :meth:`RayExecutor.run` snapshots each task's Program folder (the manifest digest
  the ledger names it by) and puts its Objects into Ray's object store once per digest. An actor writes a private
  copy per :meth:`~RayExecutor.run` call (one execution) from those Objects, checking every digest, and removes
  it when the next execution starts or the actor closes: a Policy can never reach a later execution's copy.
* **Outcomes** come back in task order, as the worker's own outcome frames; trajectories are byte-identical to
  the local backend's (an Episode depends only on its task). Only the caller (the Host) appends to any ledger.
* **A lost actor** (its Ray worker process killed, its node lost) is an infra fault, never the Policy's: the
  Episode is retried on the actors left or a new one, up to ``max_attempts`` runs in all; after that its outcome is
  ``infra_fault``, which the Host refunds. Faults inside the actor's worker are reported as locally. The lost
  actor's slot gets a new actor (any node) but no Episode until it has started: after a node is lost the cluster
  may have no free CPU for it, and the Episodes go on on the actors left. Should no actor be left for
  ``startup_timeout`` seconds, the Episodes still waiting end as ``infra_fault``.
* **Ray itself** (:mod:`~.ray_connection`). ``address`` None starts a private local Ray instance (no dashboard, no
  logs on stdout, its files in a fresh ``/tmp/evoledger-ray-*`` folder, removed with what is left of it even when
  this process is killed) that :meth:`~RayExecutor.close` stops and removes; ``auto``,
  ``ray://HOST:PORT`` or ``HOST:PORT`` connect to an existing cluster, whose nodes must have evoledger (and the
  Benchmark's packages) installed. Executors of one process share the connection the first one made (the last to
  close stops it); Ray initialised by the caller (tests, a sweep) is used as it is and left running.
  ``ray`` is imported only here, and this module only when the ``ray`` backend is chosen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from evoledger.kernel.execution.abi import DEFAULT_POLICY_ABI, check_policy_abi
from evoledger.kernel.execution.executor import _watchdog_seconds
from evoledger.kernel.execution.isolation import IsolationChoice, resolve_isolation
from evoledger.kernel.execution.messages import outcome_from_frame, task_to_json
from evoledger.kernel.execution.ray_actor import EpisodeActor
from evoledger.kernel.execution.ray_connection import connect, disconnect
from evoledger.kernel.execution.tasks import EpisodeOutcome, EpisodeTask
from evoledger.kernel.registry import BenchmarkRef, UntrustedRecordError
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import ConfigError, InfraError, InputError, MissingExtraError
from evoledger.ledger.snapshots import snapshot_program

__all__ = ["RayExecutor"]

_RAY_SLACK_SECONDS: Final = 60.0
"""Wall-clock time an actor gets beyond its own worker's watchdog before it is presumed lost and killed."""
_WAIT_SECONDS: Final = 1.0
_CLOSE_SECONDS: Final = 10.0
_QUEUE_DEPTH: Final = 2
"""Episodes queued on each actor: the next one is there when one ends (no round trip to the Host in between)."""
_SHIPPED_PROGRAMS: Final = 32
"""Program digests whose Objects stay referenced in Ray's object store between runs (the most recent ones)."""


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtraError("--backend ray", "ray", "ray") from None


class _Objects(dict[str, bytes]):
    """An in-memory Object sink and source (a Program's files and manifest by digest)."""

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        self[digest] = data
        return digest


@dataclasses.dataclass(slots=True)
class _InFlight:
    """One Episode sent to an actor: its slot, that actor, its task's position, its deadline, when it was sent."""

    slot: int
    actor: Any
    position: int
    deadline: float
    started: float


def _start_error(report: dict[str, Any]) -> Exception:
    name, message = str(report.get("error")), str(report.get("message"))
    if name == "UntrustedRecordError":
        return UntrustedRecordError(message)
    if name in ("ConfigError", "MissingExtraError", "InputError"):
        return ConfigError(f"a Ray node could not start an Episode worker: {message}")
    return InfraError(f"a Ray node could not start an Episode worker: {name}: {message}")


class RayExecutor:
    """Runs Episodes on ``workers`` Ray actors (see the module docstring); the settings mean what they mean for
    :class:`LocalExecutor`. ``address``: None (a private local Ray instance), ``auto``, ``ray://HOST:PORT`` or
    ``HOST:PORT``. ``max_attempts``: how often an Episode is run when its actor is lost (then ``infra_fault``)."""

    def __init__(
        self,
        benchmark: BenchmarkRef,
        *,
        workers: int = 1,
        isolation: str = "local",
        allow_import: bool = True,
        wait_until_ready: bool = True,
        policy_abi: str = DEFAULT_POLICY_ABI,
        address: str | None = None,
        startup_timeout: float = 300.0,
        max_attempts: int = 3,
    ) -> None:
        if not isinstance(benchmark, BenchmarkRef):
            raise ConfigError(f"benchmark must be a BenchmarkRef, got {type(benchmark).__name__}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a positive integer, got {workers!r}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        self.isolation: IsolationChoice = resolve_isolation(isolation)
        """The isolation every node uses (resolved here, so that ``auto`` means the same on every node)."""
        self.policy_abi = policy_abi
        if policy_abi != DEFAULT_POLICY_ABI:
            check_policy_abi(policy_abi, benchmark.name)
        self._ray = _import_ray()
        self._settings = (benchmark.model_dump(mode="json"), self.isolation.isolation, allow_import, policy_abi)
        self._startup_timeout = startup_timeout
        self._max_attempts = max_attempts
        self._sandboxed = self.isolation.isolation == "bwrap"
        self._connected = False
        self._closed = False
        self._running = False
        self._execution = 0
        self._shipped: dict[str, Any] = {}
        self._actors: list[Any] = []
        self._queued: list[list[Any]] = []
        """Per slot: the refs of the Episodes sent to its actor and not yet received, in the order they run."""
        self._starting: list[Any] = []
        self._down: dict[int, Any] = {}
        """Slots given no Episode: the start reference of their lost actor's replacement (None: it cannot start)."""
        self._stalled_since: float | None = None
        try:
            self._connect(address, workers)
            self._actor_class = self._ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(EpisodeActor)
            self._actors = [self._new_actor() for _ in range(workers)]
            self._queued = [[] for _ in range(workers)]
            self._starting = [a.start.remote() for a in self._actors]
            if wait_until_ready:
                self._await_started()
        except BaseException:
            self.close()
            raise

    def _connect(self, address: str | None, workers: int) -> None:
        self._connected = connect(self._ray, address, workers)

    def _disconnect(self) -> None:
        if self._connected:
            self._connected = False
            disconnect(self._ray)

    def _new_actor(self) -> Any:
        return self._actor_class.options(scheduling_strategy="SPREAD").remote(*self._settings)

    def _await_started(self) -> None:
        if not self._starting:
            return
        ray = self._ray
        try:
            reports = ray.get(self._starting, timeout=self._startup_timeout)
        except ray.exceptions.GetTimeoutError:
            raise InfraError(
                f"the Ray cluster did not start {len(self._actors)} Episode actors within {self._startup_timeout:g} s; "
                "does it have that many free CPUs (--workers)?"
            ) from None
        except ray.exceptions.RayError as exc:
            raise InfraError(
                f"a Ray node could not start an Episode actor ({type(exc).__name__}); every node needs evoledger "
                f"and the Benchmark's packages installed: {str(exc).splitlines()[0] if str(exc) else exc!r}"
            ) from None
        self._starting = []
        for report in reports:
            if "error" in report:
                raise _start_error(report)
        self.nodes: tuple[str, ...] = tuple(sorted({str(r["node"]) for r in reports}))
        """The nodes the actors started on (for diagnostics)."""

    @property
    def actor_pids(self) -> tuple[int, ...]:
        """The actors' process ids (Ray worker processes), by slot, once each has started: for diagnostics and tests."""
        reports = self._ray.get([a.start.remote() for a in self._actors])
        return tuple(int(r["pid"]) for r in reports)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the actors (and their workers); stop the Ray instance this executor started. Idempotent."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray if hasattr(self, "_ray") else None
        if ray is not None and self._actors:
            closing = [a.close.remote() for slot, a in enumerate(self._actors) if slot not in self._down]
            with contextlib.suppress(Exception):
                ray.wait(closing, num_returns=len(closing), timeout=_CLOSE_SECONDS)
            for actor in self._actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
        self._actors, self._shipped = [], {}
        self._disconnect()

    def run(self, tasks: Sequence[EpisodeTask]) -> Iterator[EpisodeOutcome]:
        """Run ``tasks``; yields their outcomes in task order. Tasks are checked before anything runs."""
        if self._closed:
            raise InputError("this RayExecutor is closed; create a new one")
        if self._running:
            raise InputError("a run() of this RayExecutor is still being iterated; finish or close it first")
        checked = list(tasks)
        for position, task in enumerate(checked):
            if not isinstance(task, EpisodeTask):
                raise ConfigError(f"task {position} is a {type(task).__name__}, not an EpisodeTask")
            if not (task.program_dir / "policy.py").is_file():
                raise ConfigError(
                    f"task {position}: {task.program_dir} has no policy.py; materialize the Program there first"
                )
        try:
            self._await_started()
        except BaseException:
            self.close()
            raise
        programs = self._ship(checked)
        self._execution += 1
        self._running = True
        return self._outcomes(checked, programs, self._execution)

    def _ship(self, tasks: list[EpisodeTask]) -> list[tuple[str, Any]]:
        """Each task's Program digest and the object-store reference of its Objects (put once per digest)."""
        by_folder: dict[Path, tuple[str, Any]] = {}
        for task in tasks:
            if task.program_dir in by_folder:
                continue
            objects = _Objects()
            digest = snapshot_program(task.program_dir, objects).digest
            if digest not in self._shipped:
                self._shipped[digest] = self._ray.put(dict(objects))
                while len(self._shipped) > _SHIPPED_PROGRAMS:
                    self._shipped.pop(next(iter(self._shipped)))
            by_folder[task.program_dir] = (digest, self._shipped[digest])
        return [by_folder[task.program_dir] for task in tasks]

    def _outcomes(
        self, tasks: list[EpisodeTask], programs: list[tuple[str, Any]], execution: int
    ) -> Iterator[EpisodeOutcome]:
        pending = deque(range(len(tasks)))
        attempts = [0] * len(tasks)
        in_flight: dict[Any, _InFlight] = {}
        done: dict[int, EpisodeOutcome] = {}
        next_position = 0
        try:
            while next_position < len(tasks):
                for slot, queued in enumerate(self._queued):
                    while pending and len(queued) < _QUEUE_DEPTH and slot not in self._down:
                        position = pending.popleft()
                        digest, objects = programs[position]
                        actor = self._actors[slot]
                        ref = actor.run.remote(execution, task_to_json(tasks[position], 0), digest, objects)
                        attempts[position] += 1
                        now = time.perf_counter()
                        limit = _watchdog_seconds(tasks[position], self._sandboxed) + _RAY_SLACK_SECONDS
                        queued.append(ref)  # it may wait behind the ones queued before it: so may its deadline
                        in_flight[ref] = _InFlight(slot, actor, position, now + limit * len(queued), now)
                while next_position in done:
                    yield done.pop(next_position)
                    next_position += 1
                if next_position < len(tasks):
                    self._wait(tasks, in_flight, pending, attempts, done)
        finally:
            self._running = False
            self._queued = [[] for _ in self._actors]  # an abandoned run's Episodes: their outcomes are dropped

    def _wait(
        self,
        tasks: list[EpisodeTask],
        in_flight: dict[Any, _InFlight],
        pending: deque[int],
        attempts: list[int],
        done: dict[int, EpisodeOutcome],
    ) -> None:
        ray = self._ray
        now = time.perf_counter()
        for flight in in_flight.values():
            if now >= flight.deadline and self._actors[flight.slot] is flight.actor:  # unresponsive: kill it
                with contextlib.suppress(Exception):
                    ray.kill(flight.actor)  # its refs then fail as lost
        if self._stalled(now, in_flight, pending, tasks, done):
            return
        starting = {ref: slot for slot, ref in self._down.items() if ref is not None}
        if not in_flight and not starting:  # every slot down for good: wait out the stall
            time.sleep(_WAIT_SECONDS)
            return
        ready, _ = ray.wait([*in_flight, *starting], num_returns=1, timeout=_WAIT_SECONDS)
        for ref in ready:
            if ref in starting:
                self._started(starting[ref], ref)
                continue
            flight = in_flight.pop(ref)
            position = flight.position
            with contextlib.suppress(ValueError):
                self._queued[flight.slot].remove(ref)
            episode = tasks[position].episode
            try:
                _, outcome = outcome_from_frame(ray.get(ref))
            except ray.exceptions.RayTaskError as exc:  # raised by our code inside the actor: not the Policy's
                outcome = self._fault(tasks[position], flight.started, f"the Episode actor failed: {_first_line(exc)}")
            except ray.exceptions.RayError as exc:  # the actor, its Ray worker or its node is gone
                if self._actors[flight.slot] is flight.actor:  # replaced once, whatever was queued on it
                    self._replace(flight.slot)
                if attempts[position] < self._max_attempts:
                    pending.appendleft(position)
                    continue
                outcome = self._fault(
                    tasks[position],
                    flight.started,
                    f"the Ray actor running this Episode was lost {attempts[position]} times "
                    f"({type(exc).__name__}: {_first_line(exc)}); {episode.split} Episode {episode.index} was not run",
                )
            done[position] = outcome

    def _replace(self, slot: int) -> None:
        """A new actor for ``slot``, given no Episode until it has started (the lost one is killed, in case it is
        only unreachable)."""
        with contextlib.suppress(Exception):
            self._ray.kill(self._actors[slot])
        self._actors[slot] = self._new_actor()
        self._down[slot] = self._actors[slot].start.remote()

    def _started(self, slot: int, ref: Any) -> None:
        """The start report of ``slot``'s new actor: the slot takes Episodes again, or stays down."""
        try:
            report = self._ray.get(ref)
        except self._ray.exceptions.RayError:  # lost while starting: another one
            self._replace(slot)
            return
        if "error" in report:  # its node cannot run this Benchmark: the slot stays down
            with contextlib.suppress(Exception):
                self._ray.kill(self._actors[slot])
            self._down[slot] = None
            return
        del self._down[slot]
        self._stalled_since = None

    def _stalled(
        self,
        now: float,
        in_flight: dict[Any, _InFlight],
        pending: deque[int],
        tasks: list[EpisodeTask],
        done: dict[int, EpisodeOutcome],
    ) -> bool:
        """Whether no actor has been left to run the waiting Episodes for ``startup_timeout`` seconds: they end as
        infra faults."""
        if in_flight or not pending or len(self._down) < len(self._actors):
            self._stalled_since = None
            return False
        if self._stalled_since is None:
            self._stalled_since = now
        if now - self._stalled_since < self._startup_timeout:
            return False
        message = (
            f"no Ray actor was left to run it: {len(self._actors)} were lost and none could start again within "
            f"{self._startup_timeout:g} s (no free CPU on the cluster's nodes?)"
        )
        while pending:
            position = pending.popleft()
            done[position] = self._fault(tasks[position], now, message)
        return True

    @staticmethod
    def _fault(task: EpisodeTask, started: float, message: str) -> EpisodeOutcome:
        return EpisodeOutcome(
            split=task.episode.split,
            index=task.episode.index,
            status="infra_fault",
            failure_message=message,
            wall_seconds=time.perf_counter() - started,
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__
