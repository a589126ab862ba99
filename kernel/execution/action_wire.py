"""What a Policy's action may be on the wire: a strict allow-list, checked on both sides of the channel.

A Policy's ``act`` may return anything; only values built from these exact types are actions:

* Python ``bool``, ``int`` (within int64), ``float``, ``str`` (valid Unicode) and ``None``;
* numpy scalars and ``numpy.ndarray`` (exactly, not a subclass) of a fixed-size bool, integer or float dtype up
  to 64 bits (``np.longdouble``, complex, object, string, datetime and structured dtypes are refused);
* ``list``, ``tuple`` and ``dict`` (``str`` or ``int`` keys) of those, nested at most
  :data:`~evoledger.kernel.execution.values.MAX_WIRE_DEPTH` levels, with at most :data:`MAX_ACTION_ITEMS`
  container items and :data:`MAX_ACTION_BYTES` encoded bytes in all.

The Policy process (:func:`encode_action`) brings the value into that form itself: subclasses of ``int``,
``float`` and ``str`` (an ``IntEnum`` member, say) become the plain type through the base type's own
conversion (never a method the Policy overrode; ``numpy.str_`` too, for a ``Text`` action), and an object that
offers ``__array__`` (an ndarray subclass, another library's array) is converted with ``np.asarray`` inside the
Policy process, where whatever that conversion does (recurse, raise, allocate) is the Policy's own failure.
Anything else raises :class:`InvalidActionValue`, which the Policy process reports as ``invalid_action`` naming
the type, so nothing the wire cannot carry ever reaches the worker.

The worker (:func:`decode_action`) trusts nothing the Policy process sends (a Policy can write to its
channel directly): it decodes and re-checks the same allow-list, and raises
:class:`~evoledger.ledger.errors.EncodingError` for anything else, which the worker blames on the Policy.
"""

from __future__ import annotations

import struct
from typing import Any, Final

import numpy as np
from evoledger.kernel.execution.values import MAX_WIRE_DEPTH, decode_wire, encode_wire
from evoledger.ledger.errors import EncodingError

__all__ = ["MAX_ACTION_BYTES", "MAX_ACTION_ITEMS", "InvalidActionValue", "decode_action", "encode_action"]

MAX_ACTION_BYTES: Final = 16 * 1024 * 1024 - 1
"""The most bytes one encoded action may take (the action frame, with its kind byte, is at most 16 MiB)."""

MAX_ACTION_ITEMS: Final = 1_000_000
"""The most items (list/tuple elements, dict entries) an action may hold in all, however it nests."""

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_SCALAR_TYPES: Final = frozenset(
    {
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
    }
)
_I64: Final = struct.Struct("<q")
_INT_TAG: Final = ord("i")
_INT_WIRE_BYTES: Final = 1 + _I64.size
_ITEM_BYTES: Final = 9
"""Bytes counted per container item and per scalar (a tag and a 64-bit value) when bounding the size."""


class InvalidActionValue(EncodingError):
    """``act()`` returned a value that is not an action (see the module docstring); the Policy's fault."""


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", "") or getattr(kind, "__name__", "?")
    return name if module in ("builtins", "") else f"{module}.{name}"


def _refuse(value: Any, why: str) -> InvalidActionValue:
    return InvalidActionValue(
        f"act() returned a value of type {_type_name(value)}, which cannot be sent as an action: {why}; return Python "
        "int/float/bool, numpy numbers or arrays of bool/int/float dtype (at most 64 bits), or lists, tuples "
        "and dicts of those"
    )


class _Budget:
    """Counts items and bytes so a huge action is refused early, before it is all walked or encoded."""

    __slots__ = ("bytes", "items")

    def __init__(self) -> None:
        self.items = 0
        self.bytes = 0

    def spend(self, value: Any, items: int, nbytes: int) -> None:
        self.items += items
        self.bytes += nbytes
        if self.items > MAX_ACTION_ITEMS:
            raise _refuse(value, f"the action holds more than {MAX_ACTION_ITEMS} items")
        if self.bytes > MAX_ACTION_BYTES:
            raise _refuse(value, f"the action takes more than {MAX_ACTION_BYTES} bytes")


def _check_array(value: Any, array: np.ndarray[Any, Any], budget: _Budget) -> np.ndarray[Any, Any]:
    if array.dtype.type not in _SCALAR_TYPES:
        raise _refuse(
            value, f"numpy dtype {array.dtype} cannot be sent (only bool, integer and float of at most 64 bits)"
        )
    budget.spend(value, 1, int(array.nbytes) + 16 + 8 * array.ndim)
    return array


def _convert_array(value: Any, budget: _Budget) -> np.ndarray[Any, Any]:
    """``np.asarray(value)`` in the Policy process; any failure of the Policy's own conversion code refuses it."""
    try:
        converted = np.asarray(value)
    except BaseException as exc:  # the Policy's __array__ may recurse, raise anything or exhaust memory
        try:
            detail = f"{type(exc).__name__}: {exc}"[:200]
        except BaseException:
            detail = type(exc).__name__
        raise _refuse(value, f"converting it with numpy.asarray failed ({detail})") from None
    if type(converted) is not np.ndarray:
        raise _refuse(value, f"numpy.asarray gave {_type_name(converted)}, not a numpy.ndarray")
    return _check_array(value, converted, budget)


def _conform(value: Any, depth: int, budget: _Budget, *, strict: bool) -> Any:
    """``value`` as exact allow-listed types (``strict``: refuse, never convert, anything else)."""
    if depth > MAX_WIRE_DEPTH:
        raise _refuse(value, f"it nests deeper than {MAX_WIRE_DEPTH} levels")
    kind = type(value)
    if kind is np.ndarray:
        return _check_array(value, value, budget)
    if kind is bool or kind is float or value is None:
        budget.spend(value, 0, _ITEM_BYTES)
        return value
    if kind is int:
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _refuse(value, "the integer is outside the int64 range")
        budget.spend(value, 0, _ITEM_BYTES)
        return value
    if kind in _SCALAR_TYPES:
        budget.spend(value, 0, _ITEM_BYTES + 8)
        return value
    if kind is str:
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise _refuse(value, "the string is not valid Unicode (it holds a lone surrogate)") from None
        budget.spend(value, 0, size + 5)
        return value
    if kind is list or kind is tuple:
        budget.spend(value, len(value), 5)
        items = [_conform(item, depth + 1, budget, strict=strict) for item in value]
        return items if kind is list else tuple(items)
    if kind is dict:
        budget.spend(value, len(value), 5)
        result: dict[Any, Any] = {}
        for key, item in value.items():
            if type(key) is not str and type(key) is not int:
                raise _refuse(value, f"a dict key of type {_type_name(key)} cannot be sent (only str and int keys)")
            result[_conform(key, depth + 1, budget, strict=True)] = _conform(item, depth + 1, budget, strict=strict)
        return result
    if strict:
        raise _refuse(value, "the type is not on the allow-list")
    # Lenient, in the Policy process only: plain values hiding in subclasses, and array-likes.
    if isinstance(value, str):  # first: numpy.str_ (a Text action) is a str, not an array of a wire dtype
        return _conform(str.__str__(value), depth, budget, strict=True)
    if isinstance(value, np.ndarray | np.generic) or hasattr(kind, "__array__"):
        return _convert_array(value, budget)
    if isinstance(value, int):
        return _conform(int.__int__(value), depth, budget, strict=True)
    if isinstance(value, float):
        return _conform(float.__float__(value), depth, budget, strict=True)
    raise _refuse(value, "the type is not on the allow-list")


def encode_action(value: Any) -> bytes:
    """The wire bytes of ``value`` as an action (Policy side); raises :class:`InvalidActionValue` if it is not one.

    >>> decode_action(encode_action([1, np.float32(0.5), {"k": (True, None)}]))
    [1, np.float32(0.5), {'k': (True, None)}]
    """
    kind = type(value)
    if kind is int and _INT64_MIN <= value <= _INT64_MAX:  # the usual actions: an int, a numpy scalar
        return b"i" + _I64.pack(value)
    if kind in _SCALAR_TYPES:
        return encode_wire(value)
    try:
        conformed = _conform(value, 0, _Budget(), strict=False)
    except InvalidActionValue:
        raise
    except BaseException as exc:  # e.g. a __class__ that lies to isinstance, a metaclass that raises
        raise _refuse(value, f"inspecting it raised {type(exc).__name__}") from None
    payload = encode_wire(conformed)
    if len(payload) > MAX_ACTION_BYTES:
        raise _refuse(value, f"it takes {len(payload)} bytes on the wire; at most {MAX_ACTION_BYTES} are allowed")
    return payload


def decode_action(data: bytes | memoryview) -> Any:
    """Decode an action the Policy process sent (worker side); raises EncodingError unless it is on the allow-list."""
    if len(data) > MAX_ACTION_BYTES:
        raise EncodingError(f"the action takes {len(data)} bytes; at most {MAX_ACTION_BYTES} are allowed")
    if len(data) == _INT_WIRE_BYTES and data[0] == _INT_TAG:  # the usual action: one int64
        return int(_I64.unpack_from(data, 1)[0])
    return _conform(decode_wire(data), 0, _Budget(), strict=True)
