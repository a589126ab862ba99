"""JSON descriptions of gymnasium spaces, for Benchmark specs and the Agent's task text.

A Box lists its ``low`` and ``high`` bounds element by element (``null`` for an infinite bound), except a Box of
more than :data:`COMPACT_BOX_SIZE` elements whose bounds are each one value throughout (an image: ``0`` and ``255``
for every pixel): its ``low`` / ``high`` is then that one value, a number or ``null``, meaning the same bound for
every element, as ``gymnasium.spaces.Box(low=0, high=255, shape=...)`` reads a scalar. A large Box with bounds that
vary still lists them all. Consumers read a bound as a list or as one value for all elements.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
from evoledger.kernel.authoring.json_space import JsonSpace
from evoledger.ledger.errors import InputError
from gymnasium import spaces

__all__ = ["COMPACT_BOX_SIZE", "describe_space"]

COMPACT_BOX_SIZE: Final = 64
"""Boxes of more elements than this describe a bound that is the same for every element by that one value.

Every Benchmark described before compact bounds existed has smaller Boxes, so its description (and spec digest) is
unchanged."""


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _finite_list(values: np.ndarray[Any, Any]) -> list[Any]:
    """Bounds as JSON: infinities become None (canonical JSON has no infinity)."""
    return [_finite(v) for v in values.reshape(-1).tolist()]


def _bound(values: np.ndarray[Any, Any]) -> Any:
    """One value for a large Box whose bound is uniform, else the list of every element's bound."""
    if values.size > COMPACT_BOX_SIZE:
        flat = values.reshape(-1)
        if np.all(flat == flat[0]):
            return _finite(flat[0].item())
    return _finite_list(values)


def describe_space(space: spaces.Space[Any]) -> dict[str, Any]:
    """Describe ``space`` as canonical-JSON-safe data.

    >>> describe_space(spaces.Discrete(3))
    {'type': 'Discrete', 'n': 3, 'start': 0}
    >>> describe_space(spaces.Box(0, 255, (96, 96, 3), dtype=np.uint8))
    {'type': 'Box', 'shape': [96, 96, 3], 'dtype': 'uint8', 'low': 0, 'high': 255}
    """
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": _bound(space.low),
            "high": _bound(space.high),
        }
    if isinstance(space, spaces.MultiDiscrete):
        described: dict[str, Any] = {
            "type": "MultiDiscrete",
            "nvec": space.nvec.reshape(-1).tolist(),
            "shape": list(space.shape),
        }
        if np.any(space.start != 0):  # only then: descriptions without a start are unchanged
            described["start"] = space.start.reshape(-1).tolist()
        return described
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": list(np.atleast_1d(space.n).tolist())}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe_space(s) for s in space.spaces]}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: describe_space(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": int(space.min_length),
            "max_length": int(space.max_length),
            "charset": "".join(sorted(space.character_set)),
        }
    if isinstance(space, JsonSpace):
        return space.describe()
    raise InputError(
        f"cannot describe space {space!r}; supported: Discrete, Box, MultiDiscrete, MultiBinary, Tuple, Dict, Text, "
        "JsonSpace"
    )
