"""The messages of the execution layer: coordinator <-> worker and worker <-> Policy child.

Every message is one frame (:mod:`evoledger.kernel.execution.channel`) whose first byte is its kind.

Worker <-> Policy child (the child is untrusted: nothing it sends is ever unpickled or evaluated)::

    worker -> child   S  start: JSON {program_dir, policy_seed, memory_bytes, cpu_seconds, traceback_chars}
                      O  observation: wire bytes (values.encode_wire)
    child -> worker   R  ready (make_policy returned an object with a callable act)
                      A  action: wire bytes
                      E  failure: JSON {code, message, traceback}; code is a Policy failure code

Coordinator <-> worker (both are ours)::

    coordinator -> worker   B  JSON {ref: the BenchmarkRef, allow_import[, policy_abi]} (first frame)
                            T  a task: JSON (task_to_json)
                            Q  quit
    worker -> coordinator   H  hello: JSON {pid} once the Benchmark is resolved and a Policy child is ready
                            X  startup error: JSON {error, message}
                            O  an outcome: outcome_to_frame
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Final

import orjson
from evoledger.ledger.errors import InfraError

if TYPE_CHECKING:  # imported by the two decoders only: a sandboxed zygote imports this module, never pydantic
    from evoledger.kernel.execution.tasks import EpisodeOutcome, EpisodeTask, PolicyLimits

__all__ = [
    "CHILD_ACTION",
    "CHILD_FAILURE",
    "CHILD_READY",
    "COORDINATOR_MAX_FRAME",
    "TO_CHILD_OBSERVATION",
    "TO_CHILD_START",
    "TO_WORKER_BENCHMARK",
    "TO_WORKER_QUIT",
    "TO_WORKER_TASK",
    "WORKER_ACCEPTED",
    "WORKER_ERROR",
    "WORKER_HELLO",
    "WORKER_OUTCOME",
    "outcome_from_frame",
    "outcome_to_frame",
    "task_from_json",
    "task_to_json",
]

TO_CHILD_START: Final = b"S"
TO_CHILD_OBSERVATION: Final = b"O"
CHILD_READY: Final = ord("R")
CHILD_ACTION: Final = ord("A")
CHILD_FAILURE: Final = ord("E")

TO_WORKER_BENCHMARK: Final = b"B"
TO_WORKER_TASK: Final = b"T"
TO_WORKER_QUIT: Final = b"Q"
WORKER_HELLO: Final = ord("H")
WORKER_ERROR: Final = ord("X")
WORKER_OUTCOME: Final = ord("O")
WORKER_ACCEPTED: Final = ord("A")
"""The worker has received a task: from now on its death is an infra fault of that Episode."""

COORDINATOR_MAX_FRAME: Final = 2**31
"""Outcome frames carry whole trajectories; both ends are ours, so the bound is generous."""

_U32: Final = struct.Struct("<I")
_NO_TRAJECTORY: Final = 0xFFFFFFFF


_LIMITS_CACHE: dict[Any, Any] = {}
"""PolicyLimits seen recently, both ways (a Run uses one or two): validating or dumping them per task costs more than
the rest of the task message."""
_MAX_CACHED_LIMITS: Final = 64


def _cached(key: Any, make: Any) -> Any:
    found = _LIMITS_CACHE.get(key)
    if found is None:
        found = make()
        if len(_LIMITS_CACHE) < _MAX_CACHED_LIMITS:
            _LIMITS_CACHE[key] = found
    return found


def _limits_json(limits: PolicyLimits) -> dict[str, Any]:
    return dict(_cached(("dump", limits), lambda: tuple(limits.model_dump().items())))


def _limits(raw: dict[str, Any]) -> PolicyLimits:
    from evoledger.kernel.execution.tasks import PolicyLimits  # pydantic: never in a sandboxed zygote

    try:
        key = ("load", tuple(sorted(raw.items())))
        hash(key)
    except TypeError:
        return PolicyLimits(**raw)
    limits: PolicyLimits = _cached(key, lambda: PolicyLimits(**raw))
    return limits


def task_to_json(task: EpisodeTask, task_id: int) -> bytes:
    """A task as the coordinator sends it to a worker (``task_id`` ties the outcome back to it)."""
    episode = task.episode
    return orjson.dumps(
        {
            "id": task_id,
            "split": episode.split,
            "index": episode.index,
            "seed": episode.seed,
            "scenario": None if episode.scenario is None else dict(episode.scenario),
            "program_dir": str(task.program_dir),
            "policy_seed": task.policy_seed,
            "limits": _limits_json(task.limits),
            "record_trajectory": task.record_trajectory,
        }
    )


def task_from_json(data: bytes) -> tuple[int, EpisodeTask]:
    """The inverse of :func:`task_to_json`."""
    from evoledger.kernel.authoring import EpisodeSpec
    from evoledger.kernel.execution.tasks import EpisodeTask

    raw: dict[str, Any] = orjson.loads(data)
    episode = EpisodeSpec(split=raw["split"], index=raw["index"], seed=raw["seed"], scenario=raw["scenario"])
    task = EpisodeTask(
        episode=episode,
        program_dir=raw["program_dir"],
        policy_seed=raw["policy_seed"],
        limits=_limits(raw["limits"]),
        record_trajectory=raw["record_trajectory"],
    )
    return int(raw["id"]), task


def outcome_to_frame(outcome: EpisodeOutcome, task_id: int) -> bytes:
    """An outcome as a worker frame: kind, JSON header, then the log and trajectory bytes."""
    header = orjson.dumps(
        {
            "id": task_id,
            "split": outcome.split,
            "index": outcome.index,
            "status": outcome.status,
            "episode_return": outcome.episode_return,
            "steps": outcome.steps,
            "terminated": outcome.terminated,
            "truncated": outcome.truncated,
            "metrics": dict(outcome.metrics),
            "failure_message": outcome.failure_message,
            "traceback": outcome.traceback,
            "policy_seconds": outcome.policy_seconds,
            "environment_seconds": outcome.environment_seconds,
            "wall_seconds": outcome.wall_seconds,
        }
    )
    trajectory = outcome.trajectory
    parts = [bytes((WORKER_OUTCOME,)), _U32.pack(len(header)), header, _U32.pack(len(outcome.policy_log))]
    parts.append(outcome.policy_log)
    parts.append(_U32.pack(_NO_TRAJECTORY if trajectory is None else len(trajectory)))
    if trajectory is not None:
        parts.append(trajectory)
    return b"".join(parts)


def outcome_from_frame(frame: bytes) -> tuple[int, EpisodeOutcome]:
    """The inverse of :func:`outcome_to_frame` (the frame includes its kind byte)."""
    from evoledger.kernel.execution.tasks import EpisodeOutcome

    try:
        view = memoryview(frame)
        pos = 1
        (size,) = _U32.unpack_from(view, pos)
        header: dict[str, Any] = orjson.loads(view[pos + 4 : pos + 4 + size])
        pos += 4 + size
        (size,) = _U32.unpack_from(view, pos)
        log = bytes(view[pos + 4 : pos + 4 + size])
        pos += 4 + size
        (size,) = _U32.unpack_from(view, pos)
        trajectory = None if size == _NO_TRAJECTORY else bytes(view[pos + 4 : pos + 4 + size])
        task_id = int(header.pop("id"))
        return task_id, EpisodeOutcome(policy_log=log, trajectory=trajectory, **header)
    except (struct.error, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise InfraError(f"a worker sent a malformed outcome frame ({exc}); this is a bug in evoledger") from None
