"""The trajectory Object format: one Episode's observations, actions, rewards and step metrics.

A trajectory is stored as canonical JSON (so its digest is stable and auditable) of::

    {"format": "evoledger.trajectory/1",
     "observations": [o0, o1, ...],      # steps + 1 entries; o0 is the reset observation
     "actions": [a0, ...],               # steps entries
     "rewards": [r0, ...],               # steps entries
     "metrics": [{...}, ...],            # steps entries (may be empty dicts)
     "terminated": bool, "truncated": bool}

Values are already JSON (numpy arrays converted to nested lists by the execution layer). Exporters
and replay decode trajectories through this module only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json, parse_canonical
from evoledger.ledger.errors import SchemaError

__all__ = ["TRAJECTORY_FORMAT", "Trajectory", "decode_trajectory", "encode_trajectory"]

TRAJECTORY_FORMAT: Final = "evoledger.trajectory/1"


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One Episode's full trajectory in JSON form.

    ``observations`` has ``steps + 1`` entries (the reset observation first) unless the Episode ended early
    with a Policy failure; ``actions``, ``rewards`` and ``metrics`` have ``steps`` entries.
    """

    observations: Sequence[Any]
    actions: Sequence[Any]
    rewards: Sequence[float]
    terminated: bool
    truncated: bool
    metrics: Sequence[Mapping[str, Any]] = ()

    @property
    def steps(self) -> int:
        """Number of Environment steps taken."""
        return len(self.actions)


def encode_trajectory(trajectory: Trajectory) -> bytes:
    """Canonical JSON bytes of ``trajectory`` (raises EncodingError on non-JSON values or NaN)."""
    metrics = list(trajectory.metrics) or [{} for _ in trajectory.actions]
    return canonical_json(
        {
            "format": TRAJECTORY_FORMAT,
            "observations": list(trajectory.observations),
            "actions": list(trajectory.actions),
            "rewards": list(trajectory.rewards),
            "metrics": [dict(m) for m in metrics],
            "terminated": trajectory.terminated,
            "truncated": trajectory.truncated,
        }
    )


def decode_trajectory(data: bytes) -> Trajectory:
    """Parse a trajectory Object; raises SchemaError if it is not one."""
    raw = parse_canonical(data)
    if not isinstance(raw, dict) or raw.get("format") != TRAJECTORY_FORMAT:
        got = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise SchemaError(f"not a trajectory Object (format {got!r}, expected {TRAJECTORY_FORMAT!r})")
    try:
        steps = len(raw["actions"])
        if len(raw["rewards"]) != steps or len(raw["metrics"]) != steps:
            raise SchemaError(f"trajectory lengths disagree: {steps} actions, {len(raw['rewards'])} rewards")
        return Trajectory(
            observations=raw["observations"],
            actions=raw["actions"],
            rewards=raw["rewards"],
            terminated=bool(raw["terminated"]),
            truncated=bool(raw["truncated"]),
            metrics=raw["metrics"],
        )
    except (KeyError, TypeError) as exc:
        raise SchemaError(f"malformed trajectory Object: missing or invalid field {exc}") from None
