"""Gymnasium values at a Benchmark's edge: observations in the form the space defines, actions checked strictly.

:func:`plain_observation` gives the Policy exactly the types the Gymnasium space defines, whatever the environment
produced: an ``int`` for ``Discrete``, a numpy array of the space's dtype for ``Box``, ``MultiDiscrete`` and
``MultiBinary``, a ``str`` for ``Text``, a ``tuple`` for ``Tuple`` and a ``dict`` with the space's keys in the
space's order for ``Dict``, nested as the space nests.

:func:`check_action` returns an action in the form the environment expects, or raises
:class:`~evoledger.kernel.authoring.InvalidAction` with a message naming where in the action the problem is, what
was found and what the space needs. Nothing is ever clipped, rounded or repaired; a value is accepted in another
form only where that is unambiguous (a list for an array, a numpy integer for an ``int``, ``numpy.str_`` for a
``str``, bools for ``MultiBinary``). Bools are never integers elsewhere, floats never integers, and NaN or infinity
is never a valid action.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from evoledger.kernel.authoring import InvalidAction
from gymnasium import spaces

__all__ = ["check_action", "plain_observation"]


def plain_observation(space: spaces.Space[Any], observation: Any) -> Any:
    """``observation`` as the Policy receives it: the types ``space`` defines (see the module docstring)."""
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return np.asarray(observation, dtype=space.dtype)
    if isinstance(space, spaces.Discrete):
        return int(observation)
    if isinstance(space, spaces.Dict):
        return {key: plain_observation(part, observation[key]) for key, part in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(plain_observation(s, o) for s, o in zip(space.spaces, observation, strict=True))
    if isinstance(space, spaces.Text):
        return str(observation)
    return observation


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int | np.integer):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu"


def _array(space: spaces.Space[Any], action: Any, where: str, example: str) -> np.ndarray[Any, Any]:
    """``action`` as a numpy array of exactly ``space.shape`` (not yet of the space's dtype)."""
    if isinstance(action, str | bytes | Mapping):
        raise InvalidAction(f"{where} {action!r:.80} is a {type(action).__name__}; {space} needs {example}")
    try:
        raw = np.asarray(action)
    except (TypeError, ValueError) as exc:
        raise InvalidAction(f"{where} {action!r:.80} is not a numeric array ({exc}); {space} needs {example}") from None
    if raw.shape != space.shape:
        raise InvalidAction(
            f"{where} {action!r:.80} has shape {raw.shape}; {space} needs shape {space.shape}: {example}"
        )
    return raw


def _check_discrete(space: spaces.Discrete, action: Any, where: str) -> int:
    start, n = int(space.start), int(space.n)
    if type(action) is int and start <= action < start + n:  # the usual case: a plain int in range
        return action
    if not _is_integer(action):
        raise InvalidAction(
            f"{where} {action!r} ({type(action).__name__}) is not an integer; this Benchmark's action space is "
            f"Discrete({n}) and needs an int in [{start}, {start + n - 1}]"
        )
    value = int(action)
    if not start <= value < start + n:
        raise InvalidAction(f"{where} {value} is outside Discrete({n}); use an int in [{start}, {start + n - 1}]")
    return value


def _check_float_box(space: spaces.Box, action: Any, where: str) -> np.ndarray[Any, Any]:
    try:
        raw = np.asarray(action)
    except (TypeError, ValueError) as exc:
        raise InvalidAction(f"{where} {action!r:.80} is not a numeric array: {exc}") from None
    if raw.dtype.kind not in "iuf":
        raise InvalidAction(
            f"{where} {action!r:.80} has element type {raw.dtype}; a Box action needs numbers, "
            f"e.g. a list of {space.shape[0] if space.shape else 1} floats"
        )
    if raw.shape != space.shape:
        raise InvalidAction(
            f"{where} {action!r:.80} has shape {raw.shape}; the action space needs shape {space.shape} "
            f"(e.g. [0.5] rather than 0.5 for shape (1,))"
        )
    values = raw.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise InvalidAction(f"{where} {values.tolist()!r:.80} contains NaN or infinity; actions must be finite")
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    if np.any(values < low) or np.any(values > high):
        raise InvalidAction(
            f"{where} {values.tolist()!r:.120} is outside the bounds low={low.tolist()!r:.200} "
            f"high={high.tolist()!r:.200}; actions are never clipped, so clip in the Policy"
        )
    return values.astype(space.dtype)


def _check_integer_box(space: spaces.Box, action: Any, where: str) -> np.ndarray[Any, Any]:
    example = f"integers of shape {space.shape} within its bounds (dtype {space.dtype})"
    raw = _array(space, action, where, example)
    if raw.dtype.kind not in "iu":
        raise InvalidAction(
            f"{where} {action!r:.80} has element type {raw.dtype}; {space} needs {example}; floats and bools are "
            "never rounded or converted"
        )
    if np.any(raw < space.low) or np.any(raw > space.high):
        raise InvalidAction(
            f"{where} {raw.tolist()!r:.120} is outside the bounds low={space.low.tolist()!r:.200} "
            f"high={space.high.tolist()!r:.200}; actions are never clipped, so clip in the Policy"
        )
    return raw.astype(space.dtype)


def _check_bool_box(space: spaces.Box, action: Any, where: str) -> np.ndarray[Any, Any]:
    example = f"bools of shape {space.shape}"
    raw = _array(space, action, where, example)
    if raw.dtype.kind != "b":
        raise InvalidAction(f"{where} {action!r:.80} has element type {raw.dtype}; {space} needs {example}")
    return raw


def _check_multi_discrete(space: spaces.MultiDiscrete, action: Any, where: str) -> np.ndarray[Any, Any]:
    start, stop = space.start, space.start + space.nvec
    example = (
        f"integers of shape {space.shape}, element i in [start[i], start[i] + nvec[i] - 1] "
        f"(nvec={space.nvec.tolist()!r:.120}, start={start.tolist()!r:.120})"
    )
    raw = _array(space, action, where, example)
    if raw.dtype.kind not in "iu":
        raise InvalidAction(
            f"{where} {action!r:.80} has element type {raw.dtype}; MultiDiscrete needs {example}; floats and bools "
            "are never converted"
        )
    bad = (raw < start) | (raw >= stop)
    if np.any(bad):
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidAction(
            f"{where} {raw.tolist()!r:.120} is out of range at index {position}: MultiDiscrete needs {example}"
        )
    return raw.astype(space.dtype)


def _check_multi_binary(space: spaces.MultiBinary, action: Any, where: str) -> np.ndarray[Any, Any]:
    example = f"0/1 integers or bools of shape {space.shape}"
    raw = _array(space, action, where, example)
    if raw.dtype.kind not in "biu":
        raise InvalidAction(f"{where} {action!r:.80} has element type {raw.dtype}; MultiBinary needs {example}")
    if raw.dtype.kind != "b" and np.any((raw != 0) & (raw != 1)):
        raise InvalidAction(
            f"{where} {raw.tolist()!r:.120} holds values other than 0 and 1; MultiBinary needs {example}"
        )
    return raw.astype(space.dtype)


def _check_text(space: spaces.Text, action: Any, where: str) -> str:
    charset = "".join(sorted(space.character_set))
    needs = f"a str of {space.min_length} to {space.max_length} characters from {charset!r:.120}"
    if not isinstance(action, str):
        raise InvalidAction(f"{where} {action!r:.80} ({type(action).__name__}) is not a str; Text needs {needs}")
    text = str.__str__(action)
    if not space.min_length <= len(text) <= space.max_length:
        raise InvalidAction(f"{where} {text!r:.80} has {len(text)} characters; Text needs {needs}")
    outside = sorted(set(text) - space.character_set)
    if outside:
        raise InvalidAction(
            f"{where} {text!r:.80} uses characters {''.join(outside)!r:.40} not allowed; Text needs {needs}"
        )
    return text


def _check_tuple(space: spaces.Tuple[Any], action: Any, where: str) -> tuple[Any, ...]:
    if type(action) is not tuple and type(action) is not list:
        raise InvalidAction(
            f"{where} {action!r:.80} ({type(action).__name__}) is not a tuple; Tuple needs a tuple (or list) of "
            f"{len(space.spaces)} items"
        )
    if len(action) != len(space.spaces):
        raise InvalidAction(f"{where} has {len(action)} items; Tuple needs {len(space.spaces)}")
    return tuple(_check(s, a, f"{where}[{i}]") for i, (s, a) in enumerate(zip(space.spaces, action, strict=True)))


def _check_dict(space: spaces.Dict, action: Any, where: str) -> dict[str, Any]:
    keys = list(space.spaces)
    if not isinstance(action, Mapping):
        raise InvalidAction(f"{where} {action!r:.80} ({type(action).__name__}) is not a dict; Dict needs keys {keys}")
    missing = [k for k in keys if k not in action]
    extra = [k for k in action if k not in space.spaces]
    if missing or extra:
        raise InvalidAction(
            f"{where} has keys {list(action)!r:.120}: missing {missing!r:.120}, unexpected {extra!r:.120}; "
            f"Dict needs exactly the keys {keys}"
        )
    return {key: _check(part, action[key], f"{where}[{key!r}]") for key, part in space.spaces.items()}


def _check(space: spaces.Space[Any], action: Any, where: str) -> Any:
    if isinstance(space, spaces.Discrete):
        return _check_discrete(space, action, where)
    if isinstance(space, spaces.Box):
        if space.dtype.kind in "iu":
            return _check_integer_box(space, action, where)
        if space.dtype.kind == "b":
            return _check_bool_box(space, action, where)
        return _check_float_box(space, action, where)
    if isinstance(space, spaces.MultiDiscrete):
        return _check_multi_discrete(space, action, where)
    if isinstance(space, spaces.MultiBinary):
        return _check_multi_binary(space, action, where)
    if isinstance(space, spaces.Dict):
        return _check_dict(space, action, where)
    if isinstance(space, spaces.Tuple):
        return _check_tuple(space, action, where)
    if isinstance(space, spaces.Text):
        return _check_text(space, action, where)
    if not space.contains(action):
        raise InvalidAction(f"{where} {action!r:.80} is not in the action space {space}")
    return action


def check_action(space: spaces.Space[Any], action: Any) -> Any:
    """Return ``action`` in the form the gymnasium environment expects, or raise InvalidAction.

    Discrete actions must be integers (not bools, not floats) in range. Box actions may be any array-like (a list
    arrives when the action crossed a JSON channel) of exactly the space's shape within the bounds: numbers for a
    float Box (finite; converted to the space's dtype), integers for an integer Box. MultiDiscrete needs integers
    in range, MultiBinary 0/1 or bools, Text a str of allowed length and characters, Tuple a tuple or list of the
    right length, Dict a dict with exactly the space's keys; parts are checked the same way, recursively.

    >>> check_action(spaces.Dict({"move": spaces.Discrete(3), "say": spaces.Text(4)}), {"say": "hi", "move": 2})
    {'move': 2, 'say': 'hi'}
    """
    return _check(space, action, "action")
