"""A gymnasium Space for JSON-like values of variable shape, checked strictly against a small schema.

Contest Benchmarks (AtCoder, CodeChef) observe and act in JSON-like values: a dict whose lists have a length that
varies from step to step (a set of bonds, a list of placements), parts that are ``None`` except on the first step,
integers without a fixed bound. Gymnasium's ``Dict`` / ``Sequence`` spaces cannot say "this or ``None``" and
sample lists of unbounded length, so such a Benchmark declares a :class:`JsonSpace` instead. Its schema is a subset
of JSON Schema (plain JSON data, so ``describe_space`` records it verbatim and an Agent can read it), plus one
extension for numpy arrays (compact on the wire and in recorded trajectories):

==========================================================  ============================================================
schema                                                      values it contains
==========================================================  ============================================================
``{"type": "null"}``                                        ``None``
``{"type": "boolean"}``                                     ``bool`` (``numpy.bool_`` too)
``{"type": "integer", "minimum": a, "maximum": b}``         ``int`` or a numpy integer (never a bool) in ``[a, b]``;
                                                            either bound may be left out
``{"type": "number", "minimum": a, "maximum": b}``          a finite ``int`` or ``float`` (numpy too, never a bool) in
                                                            ``[a, b]``; either bound may be left out
``{"type": "string", "maxLength": n}``                      ``str`` of at most ``n`` characters
``{"type": "array", "items": S, "maxItems": n}``            a ``list`` or ``tuple`` of at most ``n`` values in ``S``
                                                            (``"minItems"``: at least that many)
``{"type": "array", "prefixItems": [S1, ..., Sk]}``         a ``list`` or ``tuple`` of exactly ``k`` values, the i-th
                                                            in ``Si``
``{"type": "object", "properties": {"k": S, ...}}``         a ``dict`` with exactly these ``str`` keys, each value in
                                                            its schema
``{"anyOf": [S1, ..., Sk]}``                                a value in any ``Si``
``{"type": "ndarray", "dtype": "float64", "shape": [...]}``  a ``numpy.ndarray`` of exactly that dtype and shape, every
                                                            value finite (``"minimum"`` / ``"maximum"``: bounds)
==========================================================  ============================================================

Nothing else is contained: no other types, no extra keys, no NaN or infinity, never an arbitrary object. A schema
with an unknown type or keyword is refused when the space is built. ``sample()`` draws a random value of the schema
(lists of at most :data:`MAX_SAMPLED_ITEMS` items); :meth:`JsonSpace.invalid_examples` gives values just outside it,
which ``check_benchmark`` sends to the Environment to see it reject them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from gymnasium import spaces

__all__ = ["MAX_SAMPLED_ITEMS", "JsonSpace"]

MAX_SAMPLED_ITEMS: Final = 8
"""``sample()`` draws lists of at most this many items beyond ``minItems`` (a schema may allow thousands)."""

_KEYWORDS: Final[Mapping[str, frozenset[str]]] = {
    "null": frozenset({"type"}),
    "boolean": frozenset({"type"}),
    "integer": frozenset({"type", "minimum", "maximum"}),
    "number": frozenset({"type", "minimum", "maximum"}),
    "string": frozenset({"type", "maxLength"}),
    "array": frozenset({"type", "items", "prefixItems", "minItems", "maxItems"}),
    "object": frozenset({"type", "properties"}),
    "ndarray": frozenset({"type", "dtype", "shape", "minimum", "maximum"}),
}
_DTYPES: Final = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"}
)
_SAMPLE_SPAN: Final = 1_000_000
"""An unbounded integer or number is sampled within this distance of its one bound (or of 0)."""


def _refuse(schema: Any, why: str) -> InputError:
    return InputError(f"JSON space schema {schema!r:.200} is not supported: {why}")


def _check_bound(schema: Mapping[str, Any], key: str, *, integer: bool) -> None:
    if key not in schema:
        return
    value = schema[key]
    wanted = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, wanted) or not math.isfinite(value):
        raise _refuse(schema, f"{key!r} must be a finite {'integer' if integer else 'number'}")


def _check_schema(schema: Any, depth: int = 0) -> None:
    """Refuse a schema outside the supported subset (:class:`InputError` naming the part)."""
    if depth > 32:
        raise _refuse(schema, "it nests deeper than 32 levels")
    if not isinstance(schema, Mapping):
        raise _refuse(schema, "a schema is a dict")
    if "anyOf" in schema:
        options = schema["anyOf"]
        if set(schema) != {"anyOf"} or not isinstance(options, list) or not options:
            raise _refuse(schema, "'anyOf' takes a non-empty list of schemas and no other keyword")
        for option in options:
            _check_schema(option, depth + 1)
        return
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _KEYWORDS:
        raise _refuse(schema, f"'type' must be one of {sorted(_KEYWORDS)} (or use 'anyOf')")
    unknown = set(schema) - _KEYWORDS[kind]
    if unknown:
        raise _refuse(schema, f"unknown keywords {sorted(unknown)} for type {kind!r}")
    if kind in ("integer", "number", "ndarray"):
        _check_bound(schema, "minimum", integer=kind == "integer")
        _check_bound(schema, "maximum", integer=kind == "integer")
    if kind == "string" or kind == "array":
        for key in ("maxLength", "minItems", "maxItems"):
            if key in schema and (type(schema[key]) is not int or schema[key] < 0):
                raise _refuse(schema, f"{key!r} must be a non-negative integer")
    if kind == "string" and "maxLength" not in schema:
        raise _refuse(schema, "a string needs 'maxLength'")
    if kind == "array":
        if ("items" in schema) == ("prefixItems" in schema):
            raise _refuse(schema, "an array takes exactly one of 'items' (with 'maxItems') and 'prefixItems'")
        if "items" in schema:
            if "maxItems" not in schema:
                raise _refuse(schema, "an array of 'items' needs 'maxItems'")
            _check_schema(schema["items"], depth + 1)
        else:
            if not isinstance(schema["prefixItems"], list) or {"minItems", "maxItems"} & set(schema):
                raise _refuse(schema, "'prefixItems' takes a list of schemas, without 'minItems' / 'maxItems'")
            for item in schema["prefixItems"]:
                _check_schema(item, depth + 1)
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not all(isinstance(k, str) for k in properties):
            raise _refuse(schema, "an object needs 'properties', a dict from str keys to schemas")
        for item in properties.values():
            _check_schema(item, depth + 1)
    if kind == "ndarray":
        shape = schema.get("shape")
        if schema.get("dtype") not in _DTYPES:
            raise _refuse(schema, f"'dtype' must be one of {sorted(_DTYPES)}")
        if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
            raise _refuse(schema, "'shape' must be a list of non-negative integers")


def _is_integer(value: Any) -> bool:
    return (type(value) is int) or isinstance(value, np.integer)


def _in_bounds(schema: Mapping[str, Any], value: Any) -> bool:
    low, high = schema.get("minimum"), schema.get("maximum")
    return (low is None or value >= low) and (high is None or value <= high)


def _contains(schema: Mapping[str, Any], value: Any) -> bool:
    options = schema.get("anyOf")
    if options is not None:
        return any(_contains(option, value) for option in options)
    kind = schema["type"]
    if kind == "null":
        return value is None
    if kind == "boolean":
        return type(value) is bool or isinstance(value, np.bool_)
    if kind == "integer":
        return _is_integer(value) and _in_bounds(schema, value)
    if kind == "number":
        if not (_is_integer(value) or type(value) is float or isinstance(value, np.floating)):
            return False
        return math.isfinite(value) and _in_bounds(schema, value)
    if kind == "string":
        return type(value) is str and len(value) <= schema["maxLength"]
    if kind == "array":
        if type(value) is not list and type(value) is not tuple:
            return False
        if "prefixItems" in schema:
            parts = schema["prefixItems"]
            return len(value) == len(parts) and all(_contains(s, v) for s, v in zip(parts, value, strict=True))
        if not schema.get("minItems", 0) <= len(value) <= schema["maxItems"]:
            return False
        item = schema["items"]
        return all(_contains(item, v) for v in value)
    if kind == "object":
        properties = schema["properties"]
        if type(value) is not dict or value.keys() != properties.keys():
            return False
        return all(_contains(properties[k], v) for k, v in value.items())
    return _contains_array(schema, value)


def _contains_array(schema: Mapping[str, Any], value: Any) -> bool:
    if type(value) is not np.ndarray or value.dtype != np.dtype(schema["dtype"]):
        return False
    if list(value.shape) != schema["shape"]:
        return False
    if value.size == 0 or value.dtype == np.bool_:
        return True
    if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
        return False
    low, high = schema.get("minimum"), schema.get("maximum")
    return (low is None or bool(value.min() >= low)) and (high is None or bool(value.max() <= high))


def _sample_range(schema: Mapping[str, Any]) -> tuple[float, float]:
    low: float | None = schema.get("minimum")
    high: float | None = schema.get("maximum")
    if low is None:
        return (-_SAMPLE_SPAN, _SAMPLE_SPAN) if high is None else (high - _SAMPLE_SPAN, high)
    return (low, low + _SAMPLE_SPAN) if high is None else (low, high)


def _sample(schema: Mapping[str, Any], rng: np.random.Generator) -> Any:
    options = schema.get("anyOf")
    if options is not None:
        return _sample(options[int(rng.integers(len(options)))], rng)
    kind = schema["type"]
    if kind == "null":
        return None
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "integer":
        low, high = _sample_range(schema)
        return int(rng.integers(int(low), int(high), endpoint=True))
    if kind == "number":
        low, high = _sample_range(schema)
        return float(min(max(rng.uniform(low, high), low), high))
    if kind == "string":
        length = int(rng.integers(min(schema["maxLength"], MAX_SAMPLED_ITEMS) + 1))
        return "".join(chr(int(c)) for c in rng.integers(ord("a"), ord("z") + 1, size=length))
    if kind == "array":
        if "prefixItems" in schema:
            return [_sample(s, rng) for s in schema["prefixItems"]]
        least = schema.get("minItems", 0)
        most = max(least, min(schema["maxItems"], least + MAX_SAMPLED_ITEMS))
        return [_sample(schema["items"], rng) for _ in range(int(rng.integers(least, most, endpoint=True)))]
    if kind == "object":
        return {k: _sample(s, rng) for k, s in schema["properties"].items()}
    dtype = np.dtype(schema["dtype"])
    shape = tuple(schema["shape"])
    if dtype == np.bool_:
        return rng.integers(2, size=shape).astype(np.bool_)
    low, high = _sample_range(schema)
    if dtype.kind == "f":
        return rng.uniform(low, high, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(int(low), info.min), min(int(high), info.max), size=shape, endpoint=True).astype(dtype)


def _out_of_schema(schema: Mapping[str, Any], rng: np.random.Generator) -> list[tuple[str, Any]]:
    """Values just outside ``schema`` where one part is wrong (callers confirm with ``contains``)."""
    kind = schema.get("type")
    found: list[tuple[str, Any]] = []
    if kind == "integer":
        if "maximum" in schema:
            found.append((f"the integer {schema['maximum'] + 1} (one above the maximum)", schema["maximum"] + 1))
        if "minimum" in schema:
            found.append((f"the integer {schema['minimum'] - 1} (one below the minimum)", schema["minimum"] - 1))
        found.append(("a float where an integer is expected", 0.5))
    elif kind == "object":
        valid = _sample(schema, rng)
        found.append(("an object with an extra key", {**valid, "unexpected": 0}))
        for key, part in schema["properties"].items():
            found.extend(
                (f"an object whose {key!r} is {what}", {**valid, key: bad}) for what, bad in _out_of_schema(part, rng)
            )
    elif kind == "array" and "items" in schema:
        found.append(
            (f"a list of {schema['maxItems'] + 1} items (one above maxItems)", [None] * (schema["maxItems"] + 1))
        )
        if schema["maxItems"] >= 1 and schema.get("minItems", 0) <= 1:
            found.extend((f"a list holding {what}", [bad]) for what, bad in _out_of_schema(schema["items"], rng))
    elif kind == "array":
        parts = schema["prefixItems"]
        found.append((f"a list of {len(parts) + 1} items instead of {len(parts)}", [None] * (len(parts) + 1)))
        if parts:
            rest = [_sample(s, rng) for s in parts[1:]]
            found.extend(
                (f"a list whose first item is {what}", [bad, *rest]) for what, bad in _out_of_schema(parts[0], rng)
            )
    elif "anyOf" in schema:
        for option in schema["anyOf"]:
            found.extend(_out_of_schema(option, rng))
    return found


class JsonSpace(spaces.Space[Any]):
    """JSON-like values checked against a schema (see the module docstring); build it with the schema dict."""

    def __init__(self, schema: Mapping[str, Any], seed: int | np.random.Generator | None = None) -> None:
        _check_schema(schema)
        canonical_json(dict(schema))  # refuses a schema that is not plain JSON data
        self.schema: Mapping[str, Any] = schema
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a value of the schema (exact types, lengths and ranges; never an arbitrary object)."""
        try:
            return _contains(self.schema, x)
        except (TypeError, ValueError, OverflowError):
            return False

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        """A random value of the schema (lists of at most :data:`MAX_SAMPLED_ITEMS` items beyond ``minItems``)."""
        if mask is not None or probability is not None:
            raise InputError("JsonSpace.sample() takes no mask or probability")
        return _sample(self.schema, self.np_random)

    def invalid_examples(self) -> list[tuple[str, Any]]:
        """``(description, value)`` pairs of values just outside the schema, plus a value of no JSON type."""
        rng = np.random.default_rng(0)
        found = [("a set, which is no JSON value", {1})]
        found.extend((d, v) for d, v in _out_of_schema(self.schema, rng) if not self.contains(v))
        return found

    def describe(self) -> dict[str, Any]:
        """The space as ``describe_space`` records it: ``{"type": "Json", "schema": ...}``."""
        return {"type": "Json", "schema": dict(self.schema)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonSpace) and canonical_json(dict(self.schema)) == canonical_json(dict(other.schema))

    def __hash__(self) -> int:
        return hash(canonical_json(dict(self.schema)))

    def __repr__(self) -> str:
        return f"JsonSpace({canonical_json(dict(self.schema)).decode()[:200]})"
