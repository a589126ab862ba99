"""What one Episode accumulates in its worker, and which Environment failures are infra faults.

:class:`EpisodeRecord` runs every Environment call (timing it as Environment time, and turning any exception into an
:class:`EnvironmentFault`, which ends the Episode as ``infra_fault``), checks each ``Step`` before it counts, and
records the trajectory. The blame rules are in :mod:`~.episode_runner`.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from evoledger.kernel.authoring import InvalidAction, Step
from evoledger.kernel.execution.tasks import EpisodeTask
from evoledger.kernel.execution.trajectory_recording import TrajectoryRecorder
from evoledger.kernel.execution.values import encode_wire, to_json_value
from evoledger.ledger.errors import EncodingError, EvoLedgerError

__all__ = ["EnvironmentFault", "EpisodeRecord", "describe_exception"]

_T = TypeVar("_T")


class EnvironmentFault(EvoLedgerError):
    """The Environment or Benchmark failed: the Episode ends as ``infra_fault`` (never the Policy's)."""


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (or only the type, for an empty message)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class EpisodeRecord:
    """What one Episode accumulates (actions, rewards, metrics, its trajectory), and the blame for Environment calls."""

    def __init__(self, task: EpisodeTask) -> None:
        self.recorder = TrajectoryRecorder() if task.record_trajectory else None
        self.actions: list[Any] = []
        self.rewards: list[float] = []
        self.last_metrics: dict[str, Any] = {}
        self.episode_return = 0.0
        self.terminated = False
        self.truncated = False
        self.environment_seconds = 0.0

    def environment(self, what: str, call: Callable[..., _T], *args: Any, may_reject: bool = False) -> _T:
        """Run ``call(*args)`` as Environment time; any exception is an infra fault, except InvalidAction if
        ``may_reject``."""
        began = time.perf_counter()
        try:
            return call(*args)
        except InvalidAction:
            if may_reject:
                raise
            print(f"evoledger worker: {what} raised:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            raise EnvironmentFault(
                f"{what} raised InvalidAction outside step(); only step() may reject an action"
            ) from None
        except Exception as exc:
            print(f"evoledger worker: {what} raised:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            raise EnvironmentFault(f"{what} raised {describe_exception(exc)}") from exc
        finally:
            self.environment_seconds += time.perf_counter() - began

    def observe(self, observation: Any) -> bytes:
        """Record ``observation`` (if recording) and return its wire encoding."""
        try:
            wire = encode_wire(observation)
            if self.recorder is not None:
                self.recorder.observe(observation, wire)
            return wire
        except EncodingError as exc:
            raise EnvironmentFault(
                f"the Environment produced an observation that cannot be sent or recorded: {exc}"
            ) from None

    def add_step(self, action_json: Any, step: Any) -> None:
        if not isinstance(step, Step):
            raise EnvironmentFault(f"Environment.step returned {type(step).__name__}, expected an evoledger Step")
        reward = step.reward
        if type(reward) is not float:
            if isinstance(reward, bool) or (not isinstance(reward, int | float) and not hasattr(reward, "__float__")):
                raise EnvironmentFault(f"Environment.step returned reward {reward!r:.60}, which is not a number")
            reward = float(reward)
        if not math.isfinite(reward) or not math.isfinite(self.episode_return + reward):
            raise EnvironmentFault(
                f"Environment.step returned a non-finite reward ({reward!r}) or the return overflowed"
            )
        given = step.metrics
        if type(given) is dict and not given:  # the usual case: no step metrics
            metrics: Any = {}
        elif not isinstance(given, Mapping):
            raise EnvironmentFault(f"Environment.step returned metrics of type {type(given).__name__}, not a mapping")
        else:
            try:
                metrics = to_json_value(dict(given))
            except EncodingError as exc:
                raise EnvironmentFault(f"Environment.step returned metrics that cannot be recorded: {exc}") from None
        self.episode_return += reward
        self.last_metrics = metrics
        self.terminated = bool(step.terminated)
        self.truncated = bool(step.truncated)
        self.actions.append(action_json)
        self.rewards.append(reward)
        if self.recorder is not None:
            self.recorder.add_metrics(metrics)

    @property
    def steps(self) -> int:
        return len(self.actions)

    def trajectory(self) -> bytes | None:
        if self.recorder is None:
            return None
        return self.recorder.encode(self.actions, self.rewards, terminated=self.terminated, truncated=self.truncated)
