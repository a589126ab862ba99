"""Episodes as the Host plans them, and the Environment an Episode runs in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from evoledger.ledger.errors import EvoLedgerError, InputError

__all__ = [
    "SPLITS",
    "Environment",
    "EpisodeSpec",
    "InvalidAction",
    "Split",
    "Step",
    "check_episode_request",
]

Split = Literal["train", "validation", "assessment"]
"""Train Episodes are the Agent's experiments; validation selects a Candidate; assessment is held out."""

SPLITS: tuple[Split, ...] = ("train", "validation", "assessment")


def check_episode_request(split: object, *, seed: object, count: object) -> None:
    """Refuse the arguments of ``Benchmark.episodes`` that no Benchmark can plan for (:class:`InputError`).

    ``split`` must be one of :data:`SPLITS`; ``seed`` and ``count`` non-negative ints (not bools).
    """
    if split not in SPLITS:
        raise InputError(f"split {split!r} is not one of {', '.join(SPLITS)}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InputError(f"episode count {count!r} must be a non-negative integer")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed {seed!r} must be a non-negative integer")


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """One planned Episode. Host-owned: its seed and scenario are never shown to the Policy or the Agent.

    ``index`` is the Episode's position in its split's pool (the only thing the Agent ever sees).
    ``scenario`` is optional JSON data a Benchmark may use to configure the Episode.
    """

    split: Split
    index: int
    seed: int
    scenario: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """What :meth:`Environment.step` returns."""

    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    metrics: Mapping[str, float] = field(default_factory=dict)


class InvalidAction(EvoLedgerError):
    """Raised by an Environment to reject an action. Actions are never repaired or clipped.

    The Episode ends with the Policy failure code ``invalid_action``.
    """


@runtime_checkable
class Environment(Protocol):
    """A fresh Environment per Episode. Any exception other than :class:`InvalidAction` is an infra fault.

    Optional: ``legal_action(rng: numpy.random.Generator)``, a random action legal in the current state, for an
    Environment whose rules reject most values of its action space (a contest's); ``check_benchmark`` then plays
    with it instead of ``action_space.sample()``. The kernel never calls it during a Run.
    """

    def reset(self) -> Any:
        """Start the Episode and return the first observation."""
        ...

    def step(self, action: Any) -> Step:
        """Apply ``action``; raise :class:`InvalidAction` to reject it."""
        ...

    def close(self) -> None:
        """Release resources. Must be safe to call more than once."""
        ...
