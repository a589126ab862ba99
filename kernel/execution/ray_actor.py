"""The Ray actor of :class:`~.ray_executor.RayExecutor`: what runs on a node, one Episode at a time.

:class:`EpisodeActor` hosts a one-worker :class:`LocalExecutor`, so an Episode on a node runs exactly as it runs
locally: a pre-warmed worker process (a fresh interpreter, never a fork of Ray's multi-threaded worker process)
forks a fresh Policy process per Episode, under the same limits and the same isolation. Programs arrive as their
Objects by digest; the actor writes a private copy per execution (one ``RayExecutor.run`` call), checking every
digest, and removes it when the next execution starts or the actor closes, so a Policy can never reach a later
execution's copy. An actor killed outright cannot clean up: the next actor started on that node removes its
folder. Ray is never imported here: the executor wraps this class with ``ray.remote``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.execution.executor import LocalExecutor
from evoledger.kernel.execution.messages import outcome_to_frame, task_from_json
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import EvoLedgerError, InfraError
from evoledger.ledger.snapshots import materialize_program

__all__ = ["EpisodeActor"]

_ROOT_PREFIX: Final = "evoledger-ray-programs-"
"""An actor's folder of Program copies is ``<tmp>/evoledger-ray-programs-<pid>-*``: the next actor on the node
removes it if that process was killed."""


class _ObjectSource:
    def __init__(self, objects: dict[str, bytes]) -> None:
        self._objects = objects

    def get(self, digest: str) -> bytes:
        try:
            return self._objects[digest]
        except KeyError:
            raise InfraError(f"the shipped Program lacks Object {digest}; this is a bug in evoledger") from None


class EpisodeActor:
    """The body of one Ray actor: a one-worker :class:`LocalExecutor` and this execution's Program copies."""

    def __init__(self, benchmark: dict[str, Any], isolation: str, allow_import: bool, policy_abi: str) -> None:
        self._settings = (BenchmarkRef.model_validate(benchmark), isolation, allow_import, policy_abi)
        self._executor: LocalExecutor | None = None
        _remove_orphaned_roots()
        self._root = Path(tempfile.mkdtemp(prefix=f"{_ROOT_PREFIX}{os.getpid()}-"))
        self._execution: int | None = None
        self._programs: dict[str, Path] = {}

    def start(self) -> dict[str, Any]:
        """Start the worker; where this actor runs, or the start-up error's class name and message."""
        if self._executor is None:
            ref, isolation, allow_import, policy_abi = self._settings
            try:
                self._executor = LocalExecutor(
                    ref,
                    workers=1,
                    pin_cpus=False,  # Ray places actors; several on one node must not share one pinned CPU
                    isolation=isolation,
                    allow_import=allow_import,
                    policy_abi=policy_abi,
                )
            except EvoLedgerError as exc:
                return {"error": type(exc).__name__, "message": str(exc)}
        return {"pid": os.getpid(), "node": os.uname().nodename}

    def run(self, execution: int, task_json: bytes, program_digest: str, objects: dict[str, bytes]) -> bytes:
        """Run one Episode; its outcome frame (the worker's own wire format)."""
        started = self.start()
        if "error" in started:
            raise InfraError(f"the Episode actor could not start its worker: {started['message']}")
        assert self._executor is not None  # start() succeeded
        _, task = task_from_json(task_json)
        task = dataclasses.replace(task, program_dir=self._program(execution, program_digest, objects))
        (outcome,) = self._executor.run([task])
        return outcome_to_frame(outcome, 0)

    def _program(self, execution: int, digest: str, objects: dict[str, bytes]) -> Path:
        if execution != self._execution:  # a new execution: no Policy may see an earlier execution's copy
            for old in self._programs.values():
                shutil.rmtree(old.parent, ignore_errors=True)
            self._programs = {}
            self._execution = execution
        if digest not in self._programs:
            holder = Path(tempfile.mkdtemp(dir=self._root))
            materialize_program(digest, _ObjectSource(objects), holder / "program")
            self._programs[digest] = holder / "program"
        return self._programs[digest]

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
        shutil.rmtree(self._root, ignore_errors=True)


def _remove_orphaned_roots() -> None:
    """Remove the Program folders of actors on this node whose process is gone (killed: they could not clean up)."""
    with contextlib.suppress(OSError):
        for entry in Path(tempfile.gettempdir()).glob(f"{_ROOT_PREFIX}*-*"):
            pid = entry.name.removeprefix(_ROOT_PREFIX).partition("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
