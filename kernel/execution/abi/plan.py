"""The worker's side of ``--policy-abi``: the :class:`~.child.ChildAbi` its Policy children use, in plain data.

Spaces are described to an EvoPolicyGym Program as plain data (``PolicyValue``), as the values it receives and
returns look, not as gymnasium objects. EvoPolicyGym's catalogue pins the values, not this description, so the form
is ours (``docs/architecture.md``, "Policy ABIs"):

* ``{"type": "int", "low": a, "high": b}``: an int in ``[a, b]`` (a Discrete; a grid state, row or column);
* ``{"type": "float", "low": a, "high": b}``: a float; a bound that is infinite is ``None``;
* ``{"type": "bool"}``, ``{"type": "str", "max_length": n}`` (``values``: the possible strings, when few);
* ``{"type": "tensor", "dtype": "uint8", "shape": [7, 7, 3], "low": 0, "high": 255}``: a ``TensorValue`` (bounds
  as one number when every item has the same, else lists; ``None`` where infinite);
* ``{"type": "list", "names": [...], "items": [...]}``: a list, item ``i`` described by ``items[i]``;
* ``{"type": "dict", "fields": {name: description}}``: a dict with exactly those keys.

A :class:`~evoledger.kernel.authoring.JsonSpace` (the ``json`` encoding) is described in the same words, plus
``{"type": "none"}``, ``{"type": "list", "item": description, "max_length": n}`` (a list of varying length, also
``"min_length"``), ``{"type": "list", "shape": [...], "item": description}`` (nested lists of that shape: a numpy
array of the Environment's) and ``{"type": "any_of", "options": [...]}``.

An action space that is a Box is described as a ``float`` when it has one item (a bare float is accepted), else as a
``list`` of floats (a list or a ``TensorValue`` of that shape is accepted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from evoledger.kernel.authoring.json_space import JsonSpace
from evoledger.kernel.execution.abi.child import ActionKind, ChildAbi
from evoledger.kernel.execution.abi.names import (
    DEFAULT_POLICY_ABI,
    ObservationEncoding,
    check_policy_abi,
    evopolicygym_encoding,
)
from evoledger.ledger.errors import ConfigError
from gymnasium import spaces

__all__ = ["child_abi_for", "describe_for_abi"]


def _bound(value: Any) -> float | int | None:
    number = value.item() if isinstance(value, np.generic) else value
    if isinstance(number, float) and not math.isfinite(number):
        return None
    return number  # type: ignore[no-any-return]


def _bounds(array: np.ndarray[Any, Any]) -> Any:
    flat = array.reshape(-1)
    if flat.size and bool(np.all(flat == flat[0])):
        return _bound(flat[0])
    return [_bound(item) for item in flat.tolist()]


def _float(low: Any, high: Any) -> dict[str, Any]:
    return {"type": "float", "low": _bound(low), "high": _bound(high)}


def _bounded(kind: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": kind, "low": schema.get("minimum"), "high": schema.get("maximum")}


def _describe_json(schema: Mapping[str, Any]) -> Any:
    """A JsonSpace schema in the words of the module docstring."""
    if "anyOf" in schema:
        return {"type": "any_of", "options": [_describe_json(option) for option in schema["anyOf"]]}
    kind = schema["type"]
    if kind in ("null", "boolean"):
        return {"type": "none" if kind == "null" else "bool"}
    if kind in ("integer", "number"):
        return _bounded("int" if kind == "integer" else "float", schema)
    if kind == "string":
        return {"type": "str", "max_length": schema["maxLength"]}
    if kind == "object":
        return {"type": "dict", "fields": {key: _describe_json(sub) for key, sub in schema["properties"].items()}}
    if kind == "ndarray":
        item = {"bool": "bool"}.get(schema["dtype"], "float" if schema["dtype"].startswith("float") else "int")
        element = {"type": "bool"} if item == "bool" else _bounded(item, schema)
        return {"type": "list", "shape": list(schema["shape"]), "item": element}
    if "prefixItems" in schema:
        return {"type": "list", "items": [_describe_json(sub) for sub in schema["prefixItems"]]}
    described = {"type": "list", "item": _describe_json(schema["items"]), "max_length": schema["maxItems"]}
    if schema.get("minItems"):
        described["min_length"] = schema["minItems"]
    return described


def describe_for_abi(space: spaces.Space[Any]) -> Any:
    """``space`` as the ``tensors`` encoding presents its values (see the module docstring)."""
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return {"type": "int", "low": start, "high": start + int(space.n) - 1}
    if isinstance(space, spaces.Box):
        return {
            "type": "tensor",
            "dtype": space.dtype.name,
            "shape": list(space.shape),
            "low": _bounds(space.low),
            "high": _bounds(space.high),
        }
    if isinstance(space, spaces.Text):
        return {"type": "str", "max_length": int(space.max_length)}
    if isinstance(space, spaces.Dict):
        return {"type": "dict", "fields": {str(key): describe_for_abi(sub) for key, sub in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "list", "items": [describe_for_abi(sub) for sub in space.spaces]}
    if isinstance(space, JsonSpace):
        return _describe_json(space.schema)
    raise ConfigError(f"--policy-abi evopolicygym cannot describe the space {space}")


def _describe_observation(
    encoding: ObservationEncoding, space: spaces.Space[Any], grid_map: tuple[str, ...]
) -> dict[str, Any]:
    if encoding.kind in ("list", "named") and isinstance(space, spaces.Box):
        items = [_float(low, high) for low, high in zip(space.low.tolist(), space.high.tolist(), strict=True)]
        if encoding.kind == "list":
            return {"type": "list", "names": list(encoding.names), "items": items}
        return {"type": "dict", "fields": dict(zip(encoding.names, items, strict=True))}
    if encoding.kind == "tuple-named" and isinstance(space, spaces.Tuple):
        fields = {}
        for name, kind, sub in zip(encoding.names, encoding.kinds, space.spaces, strict=True):
            fields[name] = {"type": "bool"} if kind == "bool" else describe_for_abi(sub)
        return {"type": "dict", "fields": fields}
    if encoding.kind == "grid" and isinstance(space, spaces.Discrete) and grid_map:
        tiles = sorted({tile for row in grid_map for tile in row})
        return {
            "type": "dict",
            "fields": {
                "state": describe_for_abi(space),
                "row": {"type": "int", "low": 0, "high": len(grid_map) - 1},
                "column": {"type": "int", "low": 0, "high": len(grid_map[0]) - 1},
                "tile": {"type": "str", "max_length": 1, "values": tiles},
            },
        }
    if encoding.kind == "tensors" or (encoding.kind == "json" and isinstance(space, JsonSpace)):
        return describe_for_abi(space)  # type: ignore[no-any-return]
    raise ConfigError(f"--policy-abi evopolicygym: the {encoding.kind} encoding does not fit the space {space}")


def _action(space: spaces.Space[Any]) -> tuple[ActionKind, tuple[int, ...], Any]:
    if isinstance(space, spaces.Discrete):
        return "int", (), describe_for_abi(space)
    if isinstance(space, spaces.Box) and space.dtype.kind == "f":
        low, high = space.low.reshape(-1).tolist(), space.high.reshape(-1).tolist()
        if space.shape == (1,):
            return "float", (1,), _float(low[0], high[0])
        items = [_float(a, b) for a, b in zip(low, high, strict=True)]
        return "array", tuple(space.shape), {"type": "list", "shape": list(space.shape), "items": items}
    return "native", (), describe_for_abi(space)


def child_abi_for(policy_abi: str | None, benchmark_name: str, benchmark: Any) -> ChildAbi | None:
    """The Policy children's ABI for ``benchmark`` (built from ``benchmark_name``); None for the default ABI.

    Raises :class:`~evoledger.ledger.errors.ConfigError` when that Benchmark has no encoding for ``policy_abi``."""
    if policy_abi is None or policy_abi == DEFAULT_POLICY_ABI:
        return None
    check_policy_abi(policy_abi, benchmark_name)
    from evoledger.kernel.registry import default_registry

    encoding = evopolicygym_encoding(default_registry().canonical(benchmark_name))
    if encoding is None:  # check_policy_abi refused it already
        raise ConfigError(f"--policy-abi {policy_abi}: Benchmark {benchmark_name!r} has no encoding for it")
    parameters: Mapping[str, Any] = benchmark.spec.environment_parameters
    raw_map = parameters.get("map") if encoding.kind == "grid" else None
    grid_map = tuple(str(row) for row in raw_map) if isinstance(raw_map, list | tuple) and raw_map else ()
    if encoding.kind == "grid" and not grid_map:
        raise ConfigError(f"--policy-abi {policy_abi}: Benchmark {benchmark_name!r} does not publish its map")
    kind, shape, action_description = _action(benchmark.action_space)
    return ChildAbi(
        encoding=encoding,
        observation_space=_describe_observation(encoding, benchmark.observation_space, grid_map),
        action_space=action_description,
        action_kind=kind,
        action_shape=shape,
        grid_map=grid_map,
    )
