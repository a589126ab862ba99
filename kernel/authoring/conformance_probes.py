"""Probe values for the conformance checker: actions outside a space, and JSON forms of observations.

:func:`invalid_actions` constructs, where one can be constructed, actions that lie outside a gymnasium space
(one past a Discrete range, beyond a Box bound, NaN, the wrong shape, ...). :func:`jsonable` turns what an
Environment returns (numpy arrays and scalars, tuples) into the JSON values a trajectory holds.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["invalid_actions", "jsonable"]


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays/scalars and tuples turned into JSON lists and Python scalars.

    >>> jsonable((np.int64(3), np.array([0.5, 1.0])))
    [3, [0.5, 1.0]]
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def _box_candidates(space: spaces.Box) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    high = space.high.astype(np.float64)
    low = space.low.astype(np.float64)
    if np.any(np.isfinite(high)):
        beyond = np.where(np.isfinite(high), high + np.maximum(1.0, np.abs(high)), 0.0)
        found.append((f"a Box action above the upper bound ({beyond.tolist()!r:.60})", beyond.astype(space.dtype)))
    if np.any(np.isfinite(low)):
        below = np.where(np.isfinite(low), low - np.maximum(1.0, np.abs(low)), 0.0)
        found.append((f"a Box action below the lower bound ({below.tolist()!r:.60})", below.astype(space.dtype)))
    if np.issubdtype(space.dtype, np.floating):
        found.append(("a Box action full of NaN", np.full(space.shape, np.nan, dtype=space.dtype)))
    wrong_shape = (*space.shape, 2) if space.shape else (2,)
    found.append((f"a Box action of shape {wrong_shape} instead of {space.shape}", np.zeros(wrong_shape, space.dtype)))
    return found


def _valid_sample(space: spaces.Space[Any]) -> Any:
    """A valid value of ``space`` without touching the space's own random state."""
    sampler = copy.deepcopy(space)
    sampler.seed(0)
    return sampler.sample()


def invalid_actions(space: Any) -> list[tuple[str, Any]]:
    """``(description, action)`` pairs of actions outside ``space``; empty when none can be constructed.

    Callers should still confirm with ``space.contains`` before relying on a candidate being invalid.
    """
    if isinstance(space, spaces.Discrete):
        start, n = int(space.start), int(space.n)
        return [
            (f"Discrete action {start + n} (one past the last of Discrete({n}))", start + n),
            (f"Discrete action {start - 1} (one below the first of Discrete({n}))", start - 1),
        ]
    if isinstance(space, spaces.Box):
        return _box_candidates(space)
    if isinstance(space, spaces.MultiDiscrete):
        return [("a MultiDiscrete action at nvec (one past every range)", (space.nvec + space.start).copy())]
    if isinstance(space, spaces.MultiBinary):
        return [("a MultiBinary action of 2s", np.full(space.shape, 2, dtype=np.int8))]
    if isinstance(space, spaces.Tuple) and space.spaces:
        inner = invalid_actions(space.spaces[0])
        if not inner:
            return []
        description, bad = inner[0]
        rest = [_valid_sample(s) for s in space.spaces[1:]]
        return [(f"a Tuple action whose first entry is {description}", (bad, *rest))]
    if isinstance(space, spaces.Dict) and space.spaces:
        key = next(iter(space.spaces))
        inner = invalid_actions(space.spaces[key])
        if not inner:
            return []
        description, bad = inner[0]
        action = {k: (bad if k == key else _valid_sample(s)) for k, s in space.spaces.items()}
        return [(f"a Dict action whose {key!r} entry is {description}", action)]
    return []
