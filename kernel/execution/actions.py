"""Bring a Policy's action to the action space's natural type, without ever repairing it.

A Policy may return numpy or plain Python values (``np.int64(1)`` or ``1``; ``np.array([0.5],
dtype=np.float32)`` or ``[0.5]``). Before ``env.step`` the worker converts the action to the form the
space naturally holds, so both spellings reach the Environment (and the trajectory) identically:

* ``Discrete``: a Python ``int`` (from any integer, or a float/0-d array with an integral value);
* ``Box`` / ``MultiDiscrete`` / ``MultiBinary``: ``np.asarray(action, dtype=space.dtype)``, except bools for an
  integer dtype (the Environment decides: a MultiBinary takes them, a MultiDiscrete or integer Box does not);
* ``Tuple`` / ``Dict``: converted element-wise when the structure matches.

A conversion that would change a value (1.5 to an integer, an out-of-range integer wrapping around) is
not made; neither is one that fails (a ragged list). In those cases the action is handed to the
Environment exactly as decoded, and the Environment decides — a conforming Environment raises
:class:`~evoledger.kernel.authoring.InvalidAction`. Nothing is clipped: ``2.0`` for a Box bounded at
``1.0`` stays ``2.0``. Non-finite values pass through unchanged for the Environment to reject.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["conform_action"]


def _as_int(action: Any) -> int | None:
    """``action`` as a Python int when that is exact, else None."""
    if isinstance(action, bool | np.bool_):
        return None
    if isinstance(action, int | np.integer):
        return int(action)
    if isinstance(action, float | np.floating):
        value = float(action)
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iuf":
        return _as_int(action[()])
    return None


def _as_array(action: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any] | None:
    """``action`` as an array of ``dtype`` when the conversion keeps every value, else None."""
    try:
        raw = np.asarray(action)
    except (TypeError, ValueError):
        return None
    if raw.dtype.kind not in "biuf":
        return None
    if raw.dtype.kind == "b" and dtype.kind in "iu":
        return None  # a bool is not a number: True for a MultiDiscrete or integer Box (or MultiBinary) is not 1
    if raw.dtype == dtype:
        return raw
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = np.asarray(raw, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return None
    if dtype.kind in "iub" and raw.dtype.kind != dtype.kind:
        # Integer/bool targets: refuse anything the cast would change (1.5 -> 1, NaN, 300 -> uint8 44, 2 -> True).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same = np.array_equal(converted.astype(np.float64), raw.astype(np.float64))
        if not same:
            return None
    elif dtype.kind in "iu" and raw.dtype.kind in "iu" and not np.array_equal(converted, raw):
        return None  # an integer that does not fit (300 into uint8) would wrap around
    return converted


def conform_action(action: Any, space: Any) -> Any:
    """``action`` in the natural type of ``space`` (a gymnasium Space), or unchanged if that would alter it.

    >>> conform_action(np.int64(2), spaces.Discrete(3))
    2
    >>> conform_action([0.5], spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)).dtype
    dtype('float32')
    >>> conform_action(1.5, spaces.Discrete(3))
    1.5
    """
    if type(action) is int and type(space) is spaces.Discrete:  # the usual case, already natural
        return action
    if isinstance(space, spaces.Discrete):
        as_int = _as_int(action)
        return action if as_int is None else as_int
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        converted = _as_array(action, space.dtype)
        return action if converted is None else converted
    if isinstance(space, spaces.Tuple):
        if isinstance(action, tuple | list) and len(action) == len(space.spaces):
            return tuple(conform_action(a, s) for a, s in zip(action, space.spaces, strict=True))
        return action
    if isinstance(space, spaces.Dict):
        if isinstance(action, dict) and set(action) == set(space.spaces):
            return {key: conform_action(action[key], sub) for key, sub in space.spaces.items()}
        return action
    return action
