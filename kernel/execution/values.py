"""Observation and action values: the wire encoding between processes, and the canonical JSON form.

Two encodings live here:

* **Wire** (:func:`encode_wire` / :func:`decode_wire`): a compact, self-describing, tagged binary
  encoding that round-trips exactly what an Environment produces or a Policy returns: numpy arrays
  keep dtype and shape (their raw bytes are sent, never pickled), numpy scalars stay numpy scalars,
  tuples stay tuples, dicts stay dicts. It is used in both directions between a worker and its Policy
  child, so the decoder treats its input as hostile: it never evaluates anything, only accepts
  bool, integer and float dtypes of at most 64 bits (no ``np.longdouble``), bounds nesting depth,
  and checks every length against the bytes present before allocating. Actions are further held to
  the allow-list of :mod:`~evoledger.kernel.execution.action_wire` on both sides.
* **JSON** (:func:`to_json_value`): the canonical form recorded in trajectories. Arrays become
  nested lists, numpy scalars become Python numbers, tuples become lists, and non-finite floats
  become ``null`` (canonical JSON has no NaN or infinity; the same convention ``describe_space``
  uses for unbounded limits).

Wire tags (one byte each, little-endian lengths)::

    n None   t True   f False   i int64   I big int (u32 length + decimal)   d float64
    s str (u32 length + UTF-8)   b bytes (u32 length + data)
    a ndarray (u8 dtype-length + dtype str + u8 ndim + ndim x u64 shape + C-order data)
    g numpy scalar (u8 dtype-length + dtype str + itemsize data)
    l list / u tuple (u32 count + items)   m dict (u32 count + key, value pairs; keys str or int)
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
from evoledger.ledger.errors import EncodingError

__all__ = ["MAX_WIRE_DEPTH", "array_layout", "decode_wire", "encode_wire", "to_json_value"]

MAX_WIRE_DEPTH: Final = 32
"""How deeply containers may nest on the wire (and in recorded JSON)."""

_U32: Final = struct.Struct("<I")
_I64: Final = struct.Struct("<q")
_F64: Final = struct.Struct("<d")
_U64: Final = struct.Struct("<Q")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_DTYPE_PATTERN: Final = re.compile(r"^[<>|=](b1|[iu][1248]|f[248])$")
_DTYPES: dict[str, np.dtype[Any]] = {}
_ALLOWED_KINDS: Final = frozenset("biuf")
_ARRAY_HEADS: dict[tuple[np.dtype[Any], tuple[int, ...]], bytes] = {}
"""The wire head (tag, dtype, shape) of arrays already sent: an Environment sends one shape step after step."""
_MAX_CACHED_HEADS: Final = 256
_SHAPES: Final = [struct.Struct(f"<{n}Q") for n in range(MAX_WIRE_DEPTH + 1)]


def _wire_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether values of ``dtype`` travel and are recorded: bool, integer and float of at most 64 bits."""
    return dtype.kind in _ALLOWED_KINDS and dtype.itemsize <= 8


def _dtype_tag(dtype: np.dtype[Any]) -> bytes:
    if not _wire_dtype(dtype):
        raise EncodingError(
            f"numpy dtype {dtype} cannot be sent: only bool, integer and float dtypes of at most 64 bits are "
            "supported; "
            "convert the value with np.asarray(value, dtype=np.float64) or similar"
        )
    text = dtype.str.encode("ascii")
    return bytes((len(text),)) + text


def _parse_dtype(text: str) -> np.dtype[Any]:
    cached = _DTYPES.get(text)
    if cached is not None:
        return cached
    if not _DTYPE_PATTERN.match(text):
        raise EncodingError(f"wire value names dtype {text!r}, which is not a bool/integer/float dtype")
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise EncodingError(f"wire value names an unknown dtype {text!r}") from None
    if dtype.kind not in _ALLOWED_KINDS:
        raise EncodingError(f"wire value names dtype {text!r}, which is not a bool/integer/float dtype")
    _DTYPES[text] = dtype
    return dtype


def _array_head(array: np.ndarray[Any, Any]) -> bytes:
    key = (array.dtype, array.shape)
    head = _ARRAY_HEADS.get(key)
    if head is None:
        shape = array.shape
        head = b"a" + _dtype_tag(array.dtype) + bytes((len(shape),)) + b"".join(_U64.pack(n) for n in shape)
        if len(_ARRAY_HEADS) < _MAX_CACHED_HEADS:
            _ARRAY_HEADS[key] = head
    return head


def _encode(value: Any, out: list[bytes], depth: int) -> None:
    if depth > MAX_WIRE_DEPTH:
        raise EncodingError(f"value nests deeper than {MAX_WIRE_DEPTH} levels; flatten it")
    # Exact type checks first: they are the hot path (one array or one int per step).
    kind = type(value)
    if kind is np.ndarray:
        array: np.ndarray[Any, Any] = value
        out.append(_array_head(array))
        out.append(array.tobytes(order="C"))
    elif kind is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            out.append(b"i" + _I64.pack(value))
        else:
            text = str(value).encode("ascii")
            out.append(b"I" + _U32.pack(len(text)) + text)
    elif kind is float:
        out.append(b"d" + _F64.pack(value))
    elif kind is bool:
        out.append(b"t" if value else b"f")
    elif value is None:
        out.append(b"n")
    elif isinstance(value, np.generic):
        dtype = value.dtype
        out.append(b"g" + _dtype_tag(dtype) + value.tobytes())
    elif isinstance(value, str):
        data = value.encode("utf-8", errors="surrogatepass")
        out.append(b"s" + _U32.pack(len(data)) + data)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        out.append(b"b" + _U32.pack(len(data)) + data)
    elif isinstance(value, bool):  # bool subclasses are rare but possible
        out.append(b"t" if value else b"f")
    elif isinstance(value, int):
        _encode(int(value), out, depth)
    elif isinstance(value, float):
        out.append(b"d" + _F64.pack(float(value)))
    elif isinstance(value, (list, tuple)):
        out.append((b"u" if isinstance(value, tuple) else b"l") + _U32.pack(len(value)))
        for item in value:
            _encode(item, out, depth + 1)
    elif isinstance(value, Mapping):
        out.append(b"m" + _U32.pack(len(value)))
        for key, item in value.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise EncodingError(f"dict key {key!r:.60} cannot be sent: only str and int keys are supported")
            _encode(key, out, depth + 1)
            _encode(item, out, depth + 1)
    elif isinstance(value, np.ndarray) or hasattr(value, "__array__"):
        try:
            converted = np.asarray(value)
        except Exception as exc:
            raise EncodingError(
                f"value of type {type(value).__name__} cannot be converted to an array: {exc}"
            ) from None
        if type(converted) is not np.ndarray:
            converted = np.array(converted)
        _encode(converted, out, depth)
    else:
        raise EncodingError(
            f"a value of type {type(value).__name__} ({value!r:.60}) cannot be sent; use numpy arrays, numbers, "
            "bools, str, None, lists, tuples or dicts"
        )


def encode_wire(value: Any) -> bytes:
    """Encode ``value`` for the wire; raises EncodingError for values it cannot carry.

    >>> decode_wire(encode_wire((1, np.float32(2.5), {"a": [None, True]})))
    (1, np.float32(2.5), {'a': [None, True]})
    """
    if type(value) is np.ndarray:  # the usual observation: one array
        return _array_head(value) + value.tobytes(order="C")
    out: list[bytes] = []
    _encode(value, out, 0)
    return b"".join(out)


class _Reader:
    """A cursor over wire bytes that refuses to read past the end."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def take(self, n: int) -> memoryview:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise EncodingError(f"wire value is truncated: wanted {n} bytes at offset {self.pos} of {len(self.data)}")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise EncodingError(f"wire value is truncated at offset {self.pos}")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def remaining(self) -> int:
        return len(self.data) - self.pos


def _read_dtype(reader: _Reader) -> np.dtype[Any]:
    size = reader.byte()
    try:
        text = bytes(reader.take(size)).decode("ascii")
    except UnicodeDecodeError:
        raise EncodingError("wire value has a dtype name that is not ASCII") from None
    return _parse_dtype(text)


def _decode(reader: _Reader, depth: int) -> Any:
    if depth > MAX_WIRE_DEPTH:
        raise EncodingError(f"wire value nests deeper than {MAX_WIRE_DEPTH} levels")
    tag = reader.byte()
    if tag == 0x61:  # a: ndarray
        dtype = _read_dtype(reader)
        ndim = reader.byte()
        if ndim > MAX_WIRE_DEPTH:
            raise EncodingError(f"wire array has {ndim} dimensions; at most {MAX_WIRE_DEPTH} are accepted")
        shape = tuple(int(_U64.unpack(reader.take(8))[0]) for _ in range(ndim))
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > reader.remaining():
            raise EncodingError(f"wire array of shape {shape} needs {nbytes} bytes; only {reader.remaining()} remain")
        raw = bytearray(reader.take(nbytes))  # a writable copy: Policies may modify observations in place
        try:
            return np.frombuffer(raw, dtype=dtype).reshape(shape)
        except ValueError as exc:
            raise EncodingError(f"wire array of shape {shape} and dtype {dtype} is malformed: {exc}") from None
    if tag == 0x69:  # i
        return int(_I64.unpack(reader.take(8))[0])
    if tag == 0x64:  # d
        return float(_F64.unpack(reader.take(8))[0])
    if tag == 0x6E:  # n
        return None
    if tag == 0x74:  # t
        return True
    if tag == 0x66:  # f
        return False
    if tag == 0x67:  # g: numpy scalar
        dtype = _read_dtype(reader)
        return np.frombuffer(bytes(reader.take(dtype.itemsize)), dtype=dtype)[0]
    if tag == 0x73:  # s
        try:
            return bytes(reader.take(reader.u32())).decode("utf-8", errors="surrogatepass")
        except UnicodeDecodeError:
            raise EncodingError("wire string is not valid UTF-8") from None
    if tag == 0x62:  # b
        return bytes(reader.take(reader.u32()))
    if tag == 0x49:  # I: big int
        text = bytes(reader.take(reader.u32()))
        if not re.fullmatch(rb"-?[0-9]{1,4300}", text):
            raise EncodingError("wire big integer is not a decimal number")
        return int(text)
    if tag in (0x6C, 0x75):  # l / u
        count = reader.u32()
        if count > reader.remaining():
            raise EncodingError(f"wire sequence claims {count} items but only {reader.remaining()} bytes remain")
        items = [_decode(reader, depth + 1) for _ in range(count)]
        return tuple(items) if tag == 0x75 else items
    if tag == 0x6D:  # m
        count = reader.u32()
        if count * 2 > reader.remaining():
            raise EncodingError(f"wire dict claims {count} entries but only {reader.remaining()} bytes remain")
        result: dict[Any, Any] = {}
        for _ in range(count):
            key = _decode(reader, depth + 1)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise EncodingError(f"wire dict key has type {type(key).__name__}; only str and int keys are accepted")
            result[key] = _decode(reader, depth + 1)
        return result
    raise EncodingError(f"unknown wire tag {tag:#04x} at offset {reader.pos - 1}")


def array_layout(data: bytes | memoryview) -> tuple[np.dtype[Any], tuple[int, ...], int] | None:
    """The dtype, shape and data offset of ``data`` if it is one whole well-formed wire array (the usual
    observation), else None: the one reading of an array's wire head (:func:`decode_wire`, the trajectory recorder)."""
    if len(data) < 3 or data[0] != 0x61:
        return None
    size = data[1]
    start = 3 + size
    if start > len(data):
        return None
    ndim = data[start - 1]
    if ndim > MAX_WIRE_DEPTH:
        return None
    try:
        dtype = _parse_dtype(str(data[2 : start - 1], "ascii"))
        shape = _SHAPES[ndim].unpack_from(data, start)
    except (EncodingError, UnicodeDecodeError, struct.error):
        return None
    start += 8 * ndim
    if math.prod(shape) * dtype.itemsize != len(data) - start:
        return None
    return dtype, shape, start


def _whole_array(data: memoryview) -> np.ndarray[Any, Any] | None:
    """``data`` as one well-formed top-level array (the usual observation), or None to take the general path."""
    layout = array_layout(data)
    if layout is None:
        return None
    dtype, shape, start = layout
    # A writable copy (Policies may modify observations in place), exactly as the general path makes it.
    array = np.frombuffer(bytearray(data[start:]), dtype=dtype)
    return array if len(shape) == 1 else array.reshape(shape)


def decode_wire(data: bytes | memoryview) -> Any:
    """Decode bytes written by :func:`encode_wire`; raises EncodingError on anything malformed."""
    if len(data) > 2 and data[0] == 0x61:  # a: one array
        array = _whole_array(memoryview(data))
        if array is not None:
            return array
    reader = _Reader(data)
    value = _decode(reader, 0)
    if reader.remaining():
        raise EncodingError(f"wire value has {reader.remaining()} trailing bytes")
    return value


def _finite_or_none(values: Any) -> Any:
    """Replace non-finite floats in nested lists by None."""
    if isinstance(values, list):
        return [_finite_or_none(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        return None
    return values


def _array_to_json(array: np.ndarray[Any, Any]) -> Any:
    kind = array.dtype.kind
    if not _wire_dtype(array.dtype):
        kind = "?"
    if kind in "biu":
        return array.tolist()
    if kind == "f":
        listed = array.tolist()
        if array.ndim == 1 and math.isfinite(sum(listed)):  # a sum is finite only if every term is: no NaN, no inf
            return listed
        return listed if np.isfinite(array).all() else _finite_or_none(listed)
    raise EncodingError(
        f"an array of dtype {array.dtype} cannot be recorded; only bool, integer and float arrays are supported"
    )


def to_json_value(value: Any, _depth: int = 0) -> Any:
    """The canonical JSON form of an observation, action or metric value.

    >>> to_json_value({"x": np.array([1.5, np.inf], dtype=np.float32), "n": np.int64(3), "t": (1, 2)})
    {'x': [1.5, None], 'n': 3, 't': [1, 2]}
    """
    if _depth > MAX_WIRE_DEPTH:
        raise EncodingError(f"value nests deeper than {MAX_WIRE_DEPTH} levels and cannot be recorded")
    kind = type(value)
    if kind is np.ndarray:
        return _array_to_json(value)
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        if _wire_dtype(value.dtype):
            return to_json_value(value.item(), _depth)
        raise EncodingError(f"a numpy scalar of dtype {value.dtype} cannot be recorded")
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [to_json_value(v, _depth + 1) for v in value]
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EncodingError(f"dict key {key!r:.60} cannot be recorded: JSON object keys must be str")
            result[key] = to_json_value(item, _depth + 1)
        return result
    if isinstance(value, np.ndarray):
        return _array_to_json(np.asarray(value))
    raise EncodingError(
        f"a value of type {type(value).__name__} ({value!r:.60}) cannot be recorded as JSON; use numpy arrays, "
        "numbers, bools, str, None, lists, tuples or dicts"
    )
