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

An Episode whose observations hold a large array (an image: any array with two or more dimensions or more than 64
values) is stored in format 2 instead (:mod:`~evoledger.ledger.trajectory_columns`): its arrays raw and stacked per
Episode, everything else JSON. :func:`encode_trajectory` chooses the format from the observations (so every
Episode without such an array keeps format 1 byte for byte); :func:`decode_trajectory` reads both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json, parse_canonical
from evoledger.ledger.errors import SchemaError
from evoledger.ledger.trajectory_columns import (
    COLUMNS_FORMAT,
    COLUMNS_MAGIC,
    StepValues,
    decode_columns,
    encode_columns,
    holds_large_array,
)

__all__ = [
    "TRAJECTORY_FORMAT",
    "TRAJECTORY_FORMAT_2",
    "StepValues",
    "Trajectory",
    "decode_trajectory",
    "encode_trajectory",
    "stacked_values",
]

TRAJECTORY_FORMAT_2: Final = COLUMNS_FORMAT

TRAJECTORY_FORMAT: Final = "evoledger.trajectory/1"


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One Episode's full trajectory in JSON form.

    ``observations`` has ``steps + 1`` entries (the reset observation first) unless the Episode ended early
    with a Policy failure; ``actions``, ``rewards`` and ``metrics`` have ``steps`` entries. Decoded from format 2,
    ``observations`` (and array actions) are a :class:`StepValues`: per-step numpy arrays (read-only) and dicts or
    tuples of them; :func:`stacked_values` gives their stacked columns.
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


def stacked_values(values: Sequence[Any]) -> Any:
    """The stacked columns of ``values`` (``Trajectory.observations`` or ``.actions``) when they were decoded from
    format 2 and all steps share one structure (see :meth:`StepValues.stacked`), else None."""
    return values.stacked() if isinstance(values, StepValues) else None


def encode_trajectory(trajectory: Trajectory) -> bytes:
    """The trajectory Object's bytes: format 2 when the observations hold a large numpy array, else canonical JSON
    (raises EncodingError on values that cannot be recorded, e.g. NaN outside an array in format 1)."""
    metrics = list(trajectory.metrics) or [{} for _ in trajectory.actions]
    if holds_large_array(trajectory.observations):
        return encode_columns(
            trajectory.observations,
            trajectory.actions,
            trajectory.rewards,
            metrics,
            terminated=trajectory.terminated,
            truncated=trajectory.truncated,
        )
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
    """Parse a trajectory Object of either format; raises SchemaError if it is not one."""
    if data.startswith(COLUMNS_MAGIC):
        columns = decode_columns(data)
        return Trajectory(
            observations=columns.observations,
            actions=columns.actions,
            rewards=columns.rewards,
            terminated=columns.terminated,
            truncated=columns.truncated,
            metrics=columns.metrics,
        )
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
