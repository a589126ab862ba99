"""What an executor is asked to run (:class:`EpisodeTask`) and what it reports (:class:`EpisodeOutcome`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.authoring import EpisodeRecord, EpisodeSpec, EpisodeStatus, Split
from evoledger.ledger.errors import ConfigError
from evoledger.ledger.trajectories import decode_trajectory
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["UINT64_MAX", "EpisodeOutcome", "EpisodeTask", "PolicyLimits"]

UINT64_MAX: Final = 2**64 - 1


class PolicyLimits(BaseModel):
    """Resource limits for one Policy runtime (one Episode).

    Wall-clock limits count only time spent waiting for the Policy, never Environment time:

    * ``act_timeout_seconds``: one ``act`` call (from sending the observation to receiving the action);
    * ``make_policy_timeout_seconds``: loading ``policy.py`` and calling ``make_policy``;
    * ``episode_policy_seconds``: the sum of all ``act`` waits of the Episode.

    ``memory_bytes`` caps the Policy process's address space (``RLIMIT_AS``; None: no cap). It is an
    absolute size, and a forked Python with numpy already maps a few hundred MiB, so keep it >= 1 GiB.
    ``cpu_seconds`` is a CPU-time backstop (``RLIMIT_CPU``) in case every wall-clock check were missed;
    None derives it from the wall limits. ``log_bytes`` is how much of the Policy's stdout/stderr is
    kept (the tail); ``traceback_chars`` bounds a failure's traceback.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    act_timeout_seconds: float = Field(default=2.0, gt=0, le=86_400, description="Seconds per act() call.")
    make_policy_timeout_seconds: float = Field(
        default=30.0, gt=0, le=86_400, description="Seconds to load policy.py and call make_policy()."
    )
    episode_policy_seconds: float = Field(
        default=600.0, gt=0, le=7 * 86_400, description="Seconds of all act() calls of one Episode together."
    )
    memory_bytes: int | None = Field(
        default=4 * 1024**3, ge=64 * 1024**2, description="Address-space cap of a Policy process (keep >= 1 GiB)."
    )
    cpu_seconds: int | None = Field(
        default=None, ge=1, description="CPU-time backstop per Episode (default: the time limits plus a margin)."
    )
    log_bytes: int = Field(
        default=64 * 1024, ge=1024, le=64 * 1024**2, description="Bytes of a Policy's stdout/stderr kept (the tail)."
    )
    traceback_chars: int = Field(
        default=16_000, ge=200, le=1_000_000, description="Characters of a failed Policy's traceback kept."
    )

    @property
    def effective_cpu_seconds(self) -> int:
        """The RLIMIT_CPU applied: ``cpu_seconds``, or the wall limits plus a margin."""
        if self.cpu_seconds is not None:
            return self.cpu_seconds
        return math.ceil(self.make_policy_timeout_seconds + self.episode_policy_seconds) + 5


@dataclass(frozen=True, slots=True)
class EpisodeTask:
    """One Episode to run: the Host's Episode, a materialized Program directory, and the Policy's seed.

    ``episode`` (with its Host seed and scenario) is only ever seen by the Environment side; the Policy
    sees ``policy_seed`` and the Benchmark's public description.
    """

    episode: EpisodeSpec
    program_dir: Path
    policy_seed: int
    limits: PolicyLimits = field(default_factory=PolicyLimits)
    record_trajectory: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.program_dir, Path):
            if not isinstance(self.program_dir, str):
                raise ConfigError(f"program_dir must be a path, got {type(self.program_dir).__name__}")
            object.__setattr__(self, "program_dir", Path(self.program_dir))
        seed = self.policy_seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= UINT64_MAX:
            raise ConfigError(
                f"policy_seed must be an integer in [0, 2**64 - 1], got {seed!r}; derive it with derive_seed"
            )
        if not isinstance(self.episode, EpisodeSpec):
            raise ConfigError(f"episode must be an EpisodeSpec, got {type(self.episode).__name__}")
        if not isinstance(self.limits, PolicyLimits):
            raise ConfigError(f"limits must be PolicyLimits, got {type(self.limits).__name__}")


@dataclass(frozen=True, slots=True)
class EpisodeOutcome:
    """How one Episode ended, as the coordinator receives it.

    ``status`` is ``"ok"``, a Policy failure code (``exception``, ``timeout``, ``invalid_action``,
    ``protocol_error``, ``memory``) or ``"infra_fault"`` (an Environment, Benchmark or worker fault:
    never the Policy's; ``failure_message`` says why). ``metrics`` are the last step's metrics.
    ``policy_log`` is the tail of the Policy's stdout and stderr; ``traceback`` is the bounded traceback
    of a Policy failure. ``trajectory`` is canonical trajectory JSON (``encode_trajectory``) or None when
    recording was off. ``policy_seconds`` is time spent waiting for the Policy (``make_policy`` and every
    ``act``; of a Program loaded while the Episode before ran, only what was left when this one began),
    ``environment_seconds`` time inside the Environment, ``wall_seconds`` the whole Episode.
    """

    split: Split
    index: int
    status: EpisodeStatus
    episode_return: float = 0.0
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    metrics: Mapping[str, Any] = field(default_factory=dict)
    failure_message: str | None = None
    traceback: str | None = None
    policy_log: bytes = b""
    trajectory: bytes | None = None
    policy_seconds: float = 0.0
    environment_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Whether the Policy failed this Episode (an infra fault is not a Policy failure)."""
        return self.status not in ("ok", "infra_fault")

    def to_record(self, with_trajectory: bool) -> EpisodeRecord:
        """The record a Benchmark's ``feedback()`` sees; the trajectory is decoded only if asked for."""
        trajectory = decode_trajectory(self.trajectory) if with_trajectory and self.trajectory is not None else None
        return EpisodeRecord(
            split=self.split,
            index=self.index,
            status=self.status,
            episode_return=self.episode_return,
            steps=self.steps,
            terminated=self.terminated,
            truncated=self.truncated,
            metrics=dict(self.metrics),
            failure_message=self.failure_message,
            trajectory=trajectory,
        )
