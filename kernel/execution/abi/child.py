"""The Policy side of ``--policy-abi evopolicygym``: its module on ``sys.path``, its context, its conversions.

A :class:`ChildAbi` is made by the worker (:mod:`~.plan`), travels to the zygote with the Policy template and is used
in each Policy child only. Nothing here runs with the default ABI.

* :meth:`ChildAbi.context` puts ``site/`` (this folder's ``evopolicygym`` package) first on ``sys.path``, imports
  ``evopolicygym.policy`` and builds its ``PolicyContext``: the plain-data space descriptions, the metadata and
  environment parameters (non-finite floats as ``None``) and the ``policy_seed``.
* :meth:`ChildAbi.wrap` puts the conversions around the Program's ``act``: each observation (as the Environment
  produced it) into the Benchmark's EvoPolicyGym encoding (:mod:`~.names`; numpy arrays become ``TensorValue``), and
  the returned action into the kernel's form: a ``TensorValue`` becomes a numpy array (an int for a Discrete action
  when it holds one integer), a bare number a one-item list for a one-dimensional Box, and lists, tuples, dicts, ints,
  floats, bools, strings and ``None`` pass as they are. Anything else (numpy values, ``bytes``, a non-finite float, a
  ``TensorValue`` whose fields were forged) raises :class:`InvalidActionValue`, which the Policy process reports as
  ``invalid_action``. Nothing is clipped: the Environment judges the converted action as it judges any other.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Literal

import numpy as np
from evoledger.kernel.execution.abi.names import ObservationEncoding
from evoledger.kernel.execution.action_wire import InvalidActionValue

__all__ = ["SITE", "ActionKind", "ChildAbi"]

SITE: Final = str(Path(__file__).resolve().parent / "site")
"""The folder holding the ``evopolicygym`` package; on ``sys.path`` in Policy processes of that ABI only."""

ActionKind = Literal["int", "float", "array", "native"]
"""Discrete (an int), a Box of one item (a float), another Box (a list or tensor), anything else (as it is)."""

_MAX_DEPTH: Final = 32
_ACCEPTED: Final = "int, float, bool, str, None, list, tuple, dict with str keys or evopolicygym.policy.TensorValue"


def _plain(value: Any) -> Any:
    """Metadata as PolicyValues: containers copied, tuples as lists, non-finite floats as None."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _refuse(value: Any, why: str) -> InvalidActionValue:
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return InvalidActionValue(f"act() returned {name}, which is not an action under --policy-abi evopolicygym: {why}")


@dataclass(frozen=True, slots=True)
class ChildAbi:
    """What a Policy child of the ``evopolicygym`` ABI needs (plain data, pickled into the zygote's template)."""

    encoding: ObservationEncoding
    observation_space: Any
    """The observation as the Program sees it, described in plain data (:mod:`~.plan`)."""
    action_space: Any
    """The action the Program returns, described in plain data."""
    action_kind: ActionKind
    action_shape: tuple[int, ...] = ()
    grid_map: tuple[str, ...] = ()
    """``grid``: the map's rows, one character per tile."""

    def prepare(self) -> None:
        """In the zygote, before it forks: put ``site/`` on ``sys.path`` and import ``evopolicygym.policy`` once (an
        import per Episode cost milliseconds: the package's namespace lookup walks all of ``sys.path``)."""
        _policy_module()

    def context(self, template: Any, policy_seed: int) -> Any:
        """The ``evopolicygym.policy.PolicyContext`` for ``make_policy`` (imports that module first)."""
        module = _policy_module()
        return module.PolicyContext(
            observation_space=self.observation_space,
            action_space=self.action_space,
            metadata=_plain(template.metadata),
            environment_parameters=_plain(template.environment_parameters),
            policy_seed=policy_seed,
        )

    def wrap(self, act: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``act`` with the conversions around it (see the module docstring)."""
        tensor_type = _policy_module().TensorValue
        observe = _observer(self.encoding, self.grid_map, tensor_type)
        convert = _action_converter(self.action_kind, self.action_shape, tensor_type)

        def act_evopolicygym(observation: Any) -> Any:
            return convert(act(observe(observation)))

        return act_evopolicygym


def _policy_module() -> ModuleType:
    if SITE not in sys.path:
        sys.path.insert(0, SITE)
    return importlib.import_module("evopolicygym.policy")


def _tensor(array: np.ndarray[Any, Any], tensor_type: type) -> Any:
    little = array.astype(array.dtype.newbyteorder("<"), copy=False) if array.dtype.byteorder == ">" else array
    return tensor_type(dtype=array.dtype.name, shape=tuple(int(n) for n in array.shape), data=little.tobytes())


def _native(value: Any, tensor_type: type, depth: int = 0) -> Any:
    """The ``tensors`` encoding: arrays as TensorValue, numpy scalars as Python ones, containers converted."""
    if isinstance(value, np.ndarray):
        return _tensor(value, tensor_type)
    if isinstance(value, np.generic):
        return value.item()
    if depth < _MAX_DEPTH:
        if isinstance(value, dict):
            return {str(key): _native(item, tensor_type, depth + 1) for key, item in value.items()}
        if isinstance(value, tuple):
            return tuple(_native(item, tensor_type, depth + 1) for item in value)
        if isinstance(value, list):
            return [_native(item, tensor_type, depth + 1) for item in value]
    return value


def _json(value: Any, depth: int = 0) -> Any:
    """The ``json`` encoding: arrays as nested lists, numpy scalars as Python ones, containers converted."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if depth < _MAX_DEPTH:
        if isinstance(value, dict):
            return {str(key): _json(item, depth + 1) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [_json(item, depth + 1) for item in value]
    return value


def _observer(encoding: ObservationEncoding, grid_map: tuple[str, ...], tensor_type: type) -> Callable[[Any], Any]:
    names = encoding.names
    if encoding.kind == "json":
        return _json
    if encoding.kind == "list":
        return lambda observation: np.asarray(observation).tolist()
    if encoding.kind == "named":
        return lambda observation: dict(zip(names, np.asarray(observation).tolist(), strict=True))
    if encoding.kind == "tuple-named":
        casts = [bool if kind == "bool" else int for kind in encoding.kinds]
        return lambda observation: {
            name: cast(part) for name, cast, part in zip(names, casts, observation, strict=True)
        }
    if encoding.kind == "grid":
        columns = len(grid_map[0])

        def grid(observation: Any) -> dict[str, Any]:
            state = int(observation)
            row, column = divmod(state, columns)
            return {"state": state, "row": row, "column": column, "tile": grid_map[row][column]}

        return grid
    return lambda observation: _native(observation, tensor_type)


def _array_of(value: Any) -> np.ndarray[Any, Any]:
    """A TensorValue's items as a (writable, native-order) numpy array; refused if its fields were forged."""
    problem = _policy_module().tensor_problem(value.dtype, value.shape, value.data)
    if problem is not None:
        raise _refuse(value, f"an invalid TensorValue ({problem})")
    little = np.dtype(value.dtype).newbyteorder("<")
    return np.frombuffer(value.data, dtype=little).reshape(value.shape).astype(little.newbyteorder("="))


def _checked(value: Any, tensor_type: type, depth: int = 0) -> Any:
    """A PolicyValue as the kernel's action form (TensorValue items as arrays); refuses anything else."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _refuse(value, f"the float {value} is not finite")
        return value
    if kind is tensor_type:
        return _array_of(value)
    if depth >= _MAX_DEPTH:
        raise _refuse(value, f"it nests deeper than {_MAX_DEPTH} levels")
    if kind is list:
        return [_checked(item, tensor_type, depth + 1) for item in value]
    if kind is tuple:
        return tuple(_checked(item, tensor_type, depth + 1) for item in value)
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise _refuse(value, f"a dict key of type {type(key).__name__} (keys must be str)")
        return {key: _checked(item, tensor_type, depth + 1) for key, item in value.items()}
    if kind is bytes:
        raise _refuse(value, "bytes are a PolicyValue but no Benchmark of this ABI takes them as an action")
    raise _refuse(value, f"return {_ACCEPTED}")


def _action_converter(kind: ActionKind, shape: tuple[int, ...], tensor_type: type) -> Callable[[Any], Any]:
    if kind == "int":

        def to_int(action: Any) -> Any:
            if type(action) is int:
                return action
            converted = _checked(action, tensor_type)
            if isinstance(converted, np.ndarray) and converted.shape == () and converted.dtype.kind in "iu":
                return int(converted)
            return converted

        return to_int
    if kind == "float" and shape == (1,):

        def to_box(action: Any) -> Any:
            if type(action) is float or type(action) is int:
                return [_checked(action, tensor_type)]
            return _checked(action, tensor_type)

        return to_box
    return lambda action: _checked(action, tensor_type)
