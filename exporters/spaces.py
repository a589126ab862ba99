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
an image ``Box`` (below)                    ``datasets`` ``Image``: ``struct<bytes, path>`` of a PNG
``Text``                                    ``string``
``Dict``                                    a struct of one column per key, each by this table
anything else (``Tuple``, ...)              JSON text (sorted keys)
==========================================  ===========================================

An *image* is a uint8 ``Box`` of shape ``(H, W)``, ``(H, W, 1)``, ``(H, W, 3)`` or ``(H, W, 4)`` with ``H, W >= 32``
and bounds 0 and 255 (Minari's own rule: a 7x7 MiniGrid grid is a small integer array, not a picture). It is stored
as a lossless PNG, which ``datasets`` loads as a PIL image (``np.asarray(image)`` is the recorded array; an
``(H, W, 1)`` image loads as ``(H, W)``): a fraction of the bytes of fixed-size lists of int64, and shown as a
picture by the Hub's viewer.

Shaped columns are Arrow fixed-size lists, one level per dimension (``float32[4]`` is
``fixed_size_list<float>[4]``), which ``datasets`` loads as ``List(Value("float32"), length=4)``:
every row has the declared shape, so no consumer has to check lengths.

Values are checked against the declared shape and kind; a value that does not fit raises
:class:`SchemaError` (export with ``--json-spaces`` to store such values as JSON text instead).
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np
import orjson
import pyarrow as pa
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError, SchemaError
from evoledger.ledger.trajectories import stacked_values

__all__ = [
    "IMAGE_TYPE",
    "JSON_ENCODING",
    "ColumnChunk",
    "ValueEncoding",
    "chunk_rows",
    "concat_chunks",
    "encode_values",
    "encoding_for",
    "pad_chunk",
    "slice_chunk",
    "to_arrow",
]

EncodingKind = Literal["int", "float", "json", "text", "image", "struct"]
ColumnChunk = np.ndarray[Any, Any] | list[str | None] | dict[str, Any]
"""One Episode's encoded values: an array of shape ``(n, *shape)`` for typed and image columns, strings for JSON and
text columns, a dict of such chunks (one per field) for struct columns."""

IMAGE_TYPE: Final = pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])
"""The Arrow storage of a ``datasets`` ``Image`` feature."""
_IMAGE_CHANNELS: Final = (1, 3, 4)
_IMAGE_MIN_SIDE: Final = 32

_FLOAT_KINDS: Final = "fiu"


@dataclass(frozen=True, slots=True)
class ValueEncoding:
    """How one kind of value (observations or actions) is stored."""

    kind: EncodingKind
    shape: tuple[int, ...] = ()
    float_bits: int = 32
    reason: str = ""
    """Why the values are JSON text (empty for typed columns)."""
    fields: tuple[tuple[str, ValueEncoding], ...] = ()
    """A struct's fields, in the space's key order."""

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
        if self.kind == "image":
            return IMAGE_TYPE
        if self.kind == "struct":
            return pa.struct([pa.field(name, encoding.arrow_type) for name, encoding in self.fields])
        result = self.element_type
        if self.kind in ("json", "text"):
            return result
        for dim in reversed(self.shape):
            result = pa.list_(result, dim)
        return result

    @property
    def values_per_row(self) -> int:
        if self.kind == "struct":
            return sum(encoding.values_per_row for _, encoding in self.fields)
        if self.kind == "image":  # bytes of pixels, counted in 8-byte values (a PNG is smaller)
            return max(1, math.prod(self.shape) // 8)
        return math.prod(self.shape) if self.kind in ("int", "float") else 1

    def label(self) -> str:
        """A short human description, e.g. ``float32[4]``, ``int64``, ``image[64][64][3]``, ``{a: int64}`` or
        ``json``."""
        if self.kind == "struct":
            return "{" + ", ".join(f"{name}: {encoding.label()}" for name, encoding in self.fields) + "}"
        if self.kind == "image":
            return "image" + "".join(f"[{d}]" for d in self.shape)
        if self.kind in ("json", "text"):
            return "json" if self.kind == "json" else "string"
        name = "int64" if self.kind == "int" else f"float{self.float_bits}"
        return name + "".join(f"[{d}]" for d in self.shape)


JSON_ENCODING: Final = ValueEncoding("json", reason="stored as JSON text on request")


def _shape(raw: object) -> tuple[int, ...] | None:
    if not isinstance(raw, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in raw):
        return None
    return tuple(raw)


def _bounds(raw: Any, wanted: int) -> bool:
    """Whether a described bound (nested lists) is ``wanted`` everywhere."""
    if isinstance(raw, list):
        return all(_bounds(item, wanted) for item in raw)
    return type(raw) is int and raw == wanted


def _is_image(space: Mapping[str, Any], shape: tuple[int, ...] | None) -> bool:
    return bool(
        shape is not None
        and space.get("dtype") == "uint8"
        and (len(shape) == 2 or (len(shape) == 3 and shape[2] in _IMAGE_CHANNELS))
        and min(shape[:2]) >= _IMAGE_MIN_SIDE
        and _bounds(space.get("low"), 0)
        and _bounds(space.get("high"), 255)
    )


def _struct(space: Mapping[str, Any], depth: int) -> ValueEncoding:
    parts = space.get("spaces")
    if not isinstance(parts, Mapping) or not parts:
        return ValueEncoding("json", reason="Dict spaces of no keys have no fixed column type")
    fields = []
    for name, part in parts.items():
        if not isinstance(name, str) or not name or not isinstance(part, Mapping):
            return ValueEncoding("json", reason=f"a Dict space's key {name!r:.40} has no column")
        fields.append((name, encoding_for(part, depth + 1)))
    return ValueEncoding("struct", fields=tuple(fields))


_MAX_DEPTH: Final = 16


def encoding_for(space: Mapping[str, Any] | None, depth: int = 0) -> ValueEncoding:
    """The column encoding for a space description (JSON text when the space is unknown or has no fixed type)."""
    if space is None:
        return ValueEncoding("json", reason="the record describes no spaces")
    if depth > _MAX_DEPTH:
        return ValueEncoding("json", reason=f"spaces nested deeper than {_MAX_DEPTH} levels")
    kind = space.get("type")
    if kind == "Discrete":
        return ValueEncoding("int")
    if kind == "Dict":
        return _struct(space, depth)
    if kind == "Text" and isinstance(space.get("max_length"), int):
        return ValueEncoding("text")
    if kind == "Box":
        shape, dtype = _shape(space.get("shape")), str(space.get("dtype", ""))
        if shape is None and space.get("shape") == []:
            shape = ()
        if _is_image(space, shape):
            return ValueEncoding("image", shape or ())
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


def _plain(value: Any) -> Any:
    """orjson's fallback for what format 2 trajectories hold: arrays (of any layout) and numpy scalars."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, default=_plain, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:  # integers beyond 64 bits (or nesting orjson refuses): the canonical encoder decides
        try:
            return canonical_json(value).decode("utf-8")
        except EncodingError as exc:
            raise SchemaError(f"a value cannot be stored as JSON text: {exc}") from None


def _field(values: Any, name: str) -> Any:
    """The values of one field of a struct column: its stacked column, or one value per row."""
    if isinstance(values, dict):
        if name not in values:
            raise SchemaError(f"values without the key {name!r} the space declares")
        return values[name]
    try:
        return [value[name] for value in values]
    except (KeyError, TypeError, IndexError):
        raise SchemaError(f"values without the key {name!r} the space declares") from None


def _text(values: Sequence[Any]) -> list[str | None]:
    if not all(isinstance(v, str) for v in values):
        raise SchemaError("values that are not text where the space declares Text")
    return list(values)


def _image(values: Any, encoding: ValueEncoding) -> np.ndarray[Any, Any]:
    array = np.asarray(values)
    if array.shape[1:] != encoding.shape:
        raise SchemaError(f"values of shape {list(array.shape[1:])}, but the space declares {list(encoding.shape)}")
    if array.dtype != np.uint8:
        if array.dtype.kind not in "iu" or (array.size and (int(array.min()) < 0 or int(array.max()) > 255)):
            raise SchemaError(f"values of type {array.dtype} where the space declares a uint8 image")
        array = array.astype(np.uint8)
    return array


def encode_values(values: Sequence[Any], encoding: ValueEncoding) -> ColumnChunk:
    """``values`` (one per row) as a :data:`ColumnChunk`; :class:`SchemaError` if they do not fit.

    Values decoded from a format 2 trajectory are taken as their stacked columns (no per-row objects)."""
    if encoding.kind == "json":
        return [_json_text(v) for v in values]
    stacked = stacked_values(values)
    return _encode(values if stacked is None else stacked, encoding)


def _encode(values: Any, encoding: ValueEncoding) -> ColumnChunk:
    if encoding.kind == "json":
        return [_json_text(v) for v in values]
    if encoding.kind == "struct":
        return {name: _encode(_field(values, name), part) for name, part in encoding.fields}
    if encoding.kind == "text":
        return _text(values)
    if encoding.kind == "image":
        if len(values) == 0:
            return np.zeros((0, *encoding.shape), dtype=np.uint8)
        return _image(values, encoding)
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


def concat_chunks(chunks: Sequence[ColumnChunk]) -> ColumnChunk:
    """Several Episodes' chunks of one column as one chunk."""
    if chunks and isinstance(chunks[0], dict):
        parts: list[dict[str, Any]] = [c for c in chunks if isinstance(c, dict)]
        return {name: concat_chunks([c[name] for c in parts]) for name in chunks[0]}
    if chunks and isinstance(chunks[0], list):
        out: list[str | None] = []
        for chunk in chunks:
            out.extend(chunk)
        return out
    return np.concatenate(chunks)  # type: ignore[arg-type]


def chunk_rows(chunk: ColumnChunk) -> int:
    """How many rows ``chunk`` holds."""
    if isinstance(chunk, dict):
        return chunk_rows(next(iter(chunk.values()))) if chunk else 0
    return len(chunk)


def slice_chunk(chunk: ColumnChunk, start: int, stop: int) -> ColumnChunk:
    """Rows ``start:stop`` of ``chunk``."""
    if isinstance(chunk, dict):
        return {name: slice_chunk(part, start, stop) for name, part in chunk.items()}
    return chunk[start:stop]


def pad_chunk(chunk: ColumnChunk) -> ColumnChunk:
    """``chunk`` with one more row (a placeholder to mark null: an Episode without a final observation)."""
    if isinstance(chunk, dict):
        return {name: pad_chunk(part) for name, part in chunk.items()}
    if isinstance(chunk, list):
        return [*chunk, None]
    return np.concatenate([chunk, np.zeros((1, *chunk.shape[1:]), dtype=chunk.dtype)])


def _png(image: np.ndarray[Any, Any]) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image[..., 0] if image.ndim == 3 and image.shape[2] == 1 else image).save(buffer, format="PNG")
    return buffer.getvalue()


def to_arrow(chunk: ColumnChunk, encoding: ValueEncoding, mask: np.ndarray[Any, Any] | None = None) -> pa.Array:
    """The Arrow column for ``chunk`` (``mask`` marks null rows)."""
    if isinstance(chunk, dict):
        children = [to_arrow(chunk[name], part) for name, part in encoding.fields]
        return pa.StructArray.from_arrays(
            children,
            fields=[pa.field(name, part.arrow_type) for name, part in encoding.fields],
            mask=None if mask is None else pa.array(mask, type=pa.bool_()),
        )
    if isinstance(chunk, list):
        if mask is not None:
            chunk = [None if null else value for value, null in zip(chunk, mask.tolist(), strict=True)]
        return pa.array(chunk, type=pa.string())
    if encoding.kind == "image":
        nulls = [False] * len(chunk) if mask is None else mask.tolist()
        rows = [
            None if null else {"bytes": _png(image), "path": None} for image, null in zip(chunk, nulls, strict=True)
        ]
        return pa.array(rows, type=IMAGE_TYPE)
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
