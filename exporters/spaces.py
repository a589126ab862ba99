"""How observations and actions become Arrow columns, decided from the Benchmark's space descriptions.

A space description is the JSON the Benchmark spec shows the Agent (``{"type": "Box", "shape": [4],
"dtype": "float32", ...}``, ``{"type": "Discrete", "n": 2, "start": 0}``, ...). When the space allows
it the column is typed:

==========================================  ===========================================
space                                       column
==========================================  ===========================================
``Discrete``                                ``int64``
``Box`` of floats, shape ``()``             ``float32`` (``float64`` for a float64 Box)
``Box`` of floats, shape ``(a, b, ...)``    fixed-size lists of ``float32`` (or ``float64``)
``Box`` of integers, ``MultiDiscrete``,     fixed-size lists of ``int64`` (scalar for shape ``()``)
``MultiBinary``
anything else (``Tuple``, ``Dict``, ...)    JSON text (sorted keys)
==========================================  ===========================================

Shaped columns are Arrow fixed-size lists, one level per dimension (``float32[4]`` is
``fixed_size_list<float>[4]``), which ``datasets`` loads as ``List(Value("float32"), length=4)``:
every row has the declared shape, so no consumer has to check lengths.

Values are checked against the declared shape and kind; a value that does not fit raises
:class:`SchemaError` (export with ``--json-spaces`` to store such values as JSON text instead).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import orjson
import pyarrow as pa
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError, SchemaError

__all__ = ["JSON_ENCODING", "ColumnChunk", "ValueEncoding", "encode_values", "encoding_for", "to_arrow"]

EncodingKind = Literal["int", "float", "json"]
ColumnChunk = np.ndarray[Any, Any] | list[str | None]
"""One Episode's encoded values: an array of shape ``(n, *shape)`` for typed columns, else JSON strings."""

_FLOAT_KINDS: Final = "fiu"


@dataclass(frozen=True, slots=True)
class ValueEncoding:
    """How one kind of value (observations or actions) is stored."""

    kind: EncodingKind
    shape: tuple[int, ...] = ()
    float_bits: int = 32
    reason: str = ""
    """Why the values are JSON text (empty for typed columns)."""

    @property
    def typed(self) -> bool:
        return self.kind != "json"

    @property
    def element_type(self) -> pa.DataType:
        if self.kind == "int":
            return pa.int64()
        if self.kind == "float":
            return pa.float32() if self.float_bits == 32 else pa.float64()
        return pa.string()

    @property
    def arrow_type(self) -> pa.DataType:
        """The column type: the element type wrapped in one fixed-size list per dimension."""
        result = self.element_type
        if self.kind == "json":
            return result
        for dim in reversed(self.shape):
            result = pa.list_(result, dim)
        return result

    @property
    def values_per_row(self) -> int:
        return math.prod(self.shape) if self.typed else 1

    def label(self) -> str:
        """A short human description, e.g. ``float32[4]``, ``int64`` or ``json``."""
        if self.kind == "json":
            return "json"
        name = "int64" if self.kind == "int" else f"float{self.float_bits}"
        return name + "".join(f"[{d}]" for d in self.shape)


JSON_ENCODING: Final = ValueEncoding("json", reason="stored as JSON text on request")


def _shape(raw: object) -> tuple[int, ...] | None:
    if not isinstance(raw, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in raw):
        return None
    return tuple(raw)


def encoding_for(space: Mapping[str, Any] | None) -> ValueEncoding:
    """The column encoding for a space description (JSON text when the space is unknown or structured)."""
    if space is None:
        return ValueEncoding("json", reason="the record describes no spaces")
    kind = space.get("type")
    if kind == "Discrete":
        return ValueEncoding("int")
    if kind == "Box":
        shape, dtype = _shape(space.get("shape")), str(space.get("dtype", ""))
        if shape is None and space.get("shape") == []:
            shape = ()
        if shape is not None and dtype.startswith("float"):
            return ValueEncoding("float", shape, 64 if dtype == "float64" else 32)
        if shape is not None and dtype.startswith(("int", "uint")):
            return ValueEncoding("int", shape)
        return ValueEncoding("json", reason=f"Box of dtype {dtype!r} and shape {space.get('shape')!r}")
    if kind == "MultiDiscrete":
        shape = _shape(space.get("shape")) or _shape([len(space.get("nvec") or [])])
        if shape is not None:
            return ValueEncoding("int", shape)
    if kind == "MultiBinary":
        shape = _shape(space.get("n"))
        if shape is not None:
            return ValueEncoding("int", shape)
    return ValueEncoding("json", reason=f"{kind} spaces have no fixed column type")


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # integers beyond 64 bits (or nesting orjson refuses): the canonical encoder decides
        try:
            return canonical_json(value).decode("utf-8")
        except EncodingError as exc:
            raise SchemaError(f"a value cannot be stored as JSON text: {exc}") from None


def encode_values(values: Sequence[Any], encoding: ValueEncoding) -> ColumnChunk:
    """``values`` (one per row) as a :data:`ColumnChunk`; :class:`SchemaError` if they do not fit."""
    if encoding.kind == "json":
        return [_json_text(v) for v in values]
    n = len(values)
    expected = (n, *encoding.shape)
    if n == 0:
        return np.zeros(expected, dtype=np.int64 if encoding.kind == "int" else np.float64)
    try:
        array = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise SchemaError(f"values of uneven shape (expected {encoding.label()}): {exc}") from None
    if array.shape != expected:
        raise SchemaError(f"values of shape {list(array.shape[1:])}, but the space declares {list(encoding.shape)}")
    if encoding.kind == "int":
        if array.dtype.kind not in "iu" or (array.dtype.kind == "u" and array.size and int(array.max()) >= 2**63):
            raise SchemaError(f"values of type {array.dtype} where the space declares integers")
        return array.astype(np.int64, copy=False)
    if array.dtype.kind not in _FLOAT_KINDS:
        raise SchemaError(f"values of type {array.dtype} where the space declares numbers")
    return array.astype(np.float32 if encoding.float_bits == 32 else np.float64, copy=False)


def to_arrow(chunk: ColumnChunk, encoding: ValueEncoding, mask: np.ndarray[Any, Any] | None = None) -> pa.Array:
    """The Arrow column for ``chunk`` (``mask`` marks null rows of a typed column)."""
    if isinstance(chunk, list):
        return pa.array(chunk, type=pa.string())
    rows = chunk.shape[0]
    if not encoding.shape:
        return pa.array(chunk, type=encoding.element_type, mask=mask)
    values: pa.Array = pa.array(chunk.reshape(-1), type=encoding.element_type)
    dims = list(encoding.shape)
    for depth, dim in enumerate(reversed(dims)):
        outermost = depth == len(dims) - 1
        values = pa.FixedSizeListArray.from_arrays(
            values, dim, mask=pa.array(mask) if outermost and mask is not None else None
        )
    if len(values) != rows:  # pragma: no cover - arithmetic guard
        raise SchemaError(f"built {len(values)} rows from {rows}")
    return values
