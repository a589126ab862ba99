"""JSON descriptions of gymnasium spaces, for Benchmark specs and the Agent's task text."""

from __future__ import annotations

from typing import Any

import numpy as np
from evoledger.ledger.errors import InputError
from gymnasium import spaces

__all__ = ["describe_space"]


def _finite_list(values: np.ndarray[Any, Any]) -> list[Any]:
    """Bounds as JSON: infinities become None (canonical JSON has no infinity)."""
    out: list[Any] = []
    for v in values.reshape(-1).tolist():
        out.append(None if isinstance(v, float) and not np.isfinite(v) else v)
    return out


def describe_space(space: spaces.Space[Any]) -> dict[str, Any]:
    """Describe ``space`` as canonical-JSON-safe data.

    >>> describe_space(spaces.Discrete(3))
    {'type': 'Discrete', 'n': 3, 'start': 0}
    """
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": _finite_list(space.low),
            "high": _finite_list(space.high),
        }
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.reshape(-1).tolist(), "shape": list(space.shape)}
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
    raise InputError(
        f"cannot describe space {space!r}; supported: Discrete, Box, MultiDiscrete, MultiBinary, Tuple, Dict, Text"
    )
