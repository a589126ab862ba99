"""Trajectory format 2: an Episode's arrays stored raw and stacked per Episode, everything else as JSON.

A trajectory whose observations hold a *large* array (:func:`holds_large_array`: any array with two or more
dimensions or more than :data:`LARGE_ARRAY_VALUES` values, e.g. an image) is stored as::

    b"evoledger.trajectory/2\\n"
    u64 little-endian length of the header
    header: canonical JSON {"actions": [segment...], "arrays": [{"dtype": "|u1", "shape": [T, 64, 64, 3]}, ...],
                            "metrics": [...], "observations": [segment...], "rewards": [...],
                            "terminated": bool, "truncated": bool}
    the C-order bytes of every array of "arrays", one after the other

Observations (and actions) are stored by column: consecutive steps whose values have one structure (the same
dict keys, tuple positions, and array dtypes and shapes) form a *segment* ``{"steps": n, "value": node}``,
where a node is ``{"array": i}`` (array ``i`` of "arrays", of shape ``(n, *shape)``: the leaf of every step,
stacked), ``{"dict": {key: node}}``, ``{"tuple": [node, ...]}``, ``{"list": [node, ...]}`` or
``{"json": [v0, ..., v(n-1)]}`` (a leaf, or a container holding no array, as canonical JSON, converted the way
the execution layer records values: numpy scalars become numbers, tuples lists, non-finite floats ``null``).
An image Episode is therefore one segment of one ``(T, H, W, C)`` array; a MiniGrid-like
``{"image", "direction", "mission"}`` observation one array and two JSON columns. Arrays are numbered in the
order they appear (segments in order, dict keys sorted, depth first), so the bytes are a function of the
Episode: the digest is stable and replay re-executes to it.

Arrays keep their dtype and bytes exactly, NaN included (format 1 records non-finite floats as ``null``). The
Object store compresses the whole Object with zstd at rest; the array bytes are not compressed again here, so
the digest never depends on a compressor's version (``bench/trajectory_storage_bench.py`` measures the sizes).

:func:`decode_columns` treats its input as hostile: every length, index and shape is checked against the bytes
present before an array is made (arrays are read-only views of the input: nothing is allocated per array),
dtypes are limited to bool, integers and floats of at most 64 bits, and nesting is bounded; anything else is a
:class:`SchemaError`.
"""

from __future__ import annotations

import bisect
import math
import re
import struct
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, overload

from evoledger.ledger.canonical import MAX_PAYLOAD_BYTES, canonical_json, parse_canonical
from evoledger.ledger.errors import EncodingError, SchemaError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COLUMNS_FORMAT",
    "COLUMNS_MAGIC",
    "LARGE_ARRAY_VALUES",
    "Columns",
    "StepValues",
    "decode_columns",
    "encode_columns",
    "holds_large_array",
]

COLUMNS_FORMAT: Final = "evoledger.trajectory/2"
COLUMNS_MAGIC: Final = COLUMNS_FORMAT.encode("ascii") + b"\n"
LARGE_ARRAY_VALUES: Final = 64
"""An array with more values than this (or with two or more dimensions) makes an Episode's trajectory format 2."""
_MAX_DEPTH: Final = 32
"""How deeply values nest (the wire's limit, ``kernel.execution.values.MAX_WIRE_DEPTH``)."""
_LENGTH: Final = struct.Struct("<Q")
_DTYPE: Final = re.compile(r"[<>|=](b1|[iu][1248]|f[248])").fullmatch
_PLAIN: Final = frozenset({int, float, bool, str, type(None)})
_HEADER_KEYS: Final = frozenset({"actions", "arrays", "metrics", "observations", "rewards", "terminated", "truncated"})


def _numpy() -> Any:
    import numpy

    return numpy


def holds_large_array(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` holds (at any depth) a numpy array with ``ndim >= 2`` or more than
    :data:`LARGE_ARRAY_VALUES` values: the rule that makes a trajectory format 2."""
    np = sys.modules.get("numpy")
    if np is None:  # no numpy imported: no arrays anywhere
        return False
    ndarray = np.ndarray
    stack: list[Any] = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, ndarray):
            if item.ndim >= 2 or item.size > LARGE_ARRAY_VALUES:
                return True
        elif isinstance(item, list | tuple):
            if not _PLAIN.issuperset(map(type, item)):  # a list of plain numbers is skipped at C speed
                stack.extend(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
    return False


# -- encoding ---------------------------------------------------------------------------------------------------


def _recordable(dtype: Any) -> bool:
    return bool(dtype.kind in "biuf" and dtype.itemsize <= 8)


def _json(value: Any, depth: int = 0) -> Any:
    """The JSON form of a value holding no array, exactly as ``kernel.execution.values.to_json_value`` makes it."""
    if depth > _MAX_DEPTH:
        raise EncodingError(f"value nests deeper than {_MAX_DEPTH} levels and cannot be recorded")
    kind = type(value)
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.generic):
        if _recordable(value.dtype):
            return _json(value.item(), depth)
        raise EncodingError(f"a numpy scalar of dtype {value.dtype} cannot be recorded")
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list | tuple):
        return [_json(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EncodingError(f"dict key {key!r:.60} cannot be recorded: JSON object keys must be str")
            result[key] = _json(item, depth + 1)
        return result
    raise EncodingError(
        f"a value of type {type(value).__name__} ({value!r:.60}) cannot be recorded as JSON; use numpy arrays, "
        "numbers, bools, str, None, lists, tuples or dicts"
    )


_JSON: Final = ("json",)


def _structure(value: Any, ndarray: Any, depth: int = 0) -> Any:
    """A hashable description of ``value``'s columns: ``("array", dtype, shape)``, ``("dict", ((key, s), ...))``,
    ``("tuple", (s, ...))``, ``("list", (s, ...))``, or :data:`_JSON` for a value holding no array."""
    if depth > _MAX_DEPTH:
        raise EncodingError(f"value nests deeper than {_MAX_DEPTH} levels and cannot be recorded")
    if isinstance(value, ndarray):
        dtype = value.dtype
        if not _recordable(dtype):
            raise EncodingError(
                f"an array of dtype {dtype} cannot be recorded; only bool, integer and float arrays are supported"
            )
        return ("array", dtype.str, value.shape)
    if isinstance(value, list | tuple):
        if _PLAIN.issuperset(map(type, value)):
            return _JSON
        parts = tuple(_structure(v, ndarray, depth + 1) for v in value)
        if all(p is _JSON for p in parts):
            return _JSON
        return ("tuple" if isinstance(value, tuple) else "list", parts)
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise EncodingError(f"dict key {key!r:.60} cannot be recorded: JSON object keys must be str")
            items.append((key, _structure(item, ndarray, depth + 1)))
        if all(p is _JSON for _, p in items):
            return _JSON
        return ("dict", tuple(sorted(items)))
    return _JSON


class _Writer:
    """Collects the arrays (as bytes) and builds the nodes of one trajectory."""

    def __init__(self) -> None:
        self.arrays: list[dict[str, Any]] = []
        self.chunks: list[bytes] = []

    def node(self, structure: Any, values: list[Any]) -> dict[str, Any]:
        if structure is _JSON:
            return {"json": [_json(v) for v in values]}
        kind = structure[0]
        if kind == "array":
            _, dtype, shape = structure
            self.arrays.append({"dtype": dtype, "shape": [len(values), *shape]})
            self.chunks.extend(v.tobytes(order="C") for v in values)
            return {"array": len(self.arrays) - 1}
        if kind == "dict":
            return {"dict": {key: self.node(part, [v[key] for v in values]) for key, part in structure[1]}}
        return {kind: [self.node(part, [v[i] for v in values]) for i, part in enumerate(structure[1])]}

    def segments(self, values: Sequence[Any]) -> list[dict[str, Any]]:
        """``values`` as segments of one structure each."""
        if not values:
            return []
        ndarray = _numpy().ndarray
        structures = [_structure(v, ndarray) for v in values]
        result: list[dict[str, Any]] = []
        start = 0
        for end in range(1, len(values) + 1):
            if end == len(values) or structures[end] != structures[start]:
                result.append({"steps": end - start, "value": self.node(structures[start], list(values[start:end]))})
                start = end
        return result


def encode_columns(
    observations: Sequence[Any],
    actions: Sequence[Any],
    rewards: Sequence[float],
    metrics: Sequence[Mapping[str, Any]],
    *,
    terminated: bool,
    truncated: bool,
) -> bytes:
    """The format 2 bytes of an Episode (raises EncodingError for values that cannot be recorded)."""
    writer = _Writer()
    observation_segments = writer.segments(observations)
    action_segments = writer.segments(actions)
    header = canonical_json(
        {
            "actions": action_segments,
            "arrays": writer.arrays,
            "metrics": [dict(m) for m in metrics],
            "observations": observation_segments,
            "rewards": list(rewards),
            "terminated": terminated,
            "truncated": truncated,
        }
    )
    return b"".join((COLUMNS_MAGIC, _LENGTH.pack(len(header)), header, *writer.chunks))


# -- decoding ---------------------------------------------------------------------------------------------------


def _at(node: Any, index: int) -> Any:
    """The value of one step of a decoded node."""
    kind = type(node)
    if kind is list:  # a JSON column
        return node[index]
    if kind is dict:
        return {key: _at(child, index) for key, child in node.items()}
    if kind is tuple:
        return tuple(_at(child, index) for child in node)
    if kind is _ListNode:
        return [_at(child, index) for child in node.parts]
    return node[index, ...]  # an array's row (a 0-d array, not a numpy scalar, for a column of 0-d arrays)


def _slice(node: Any, start: int, stop: int) -> Any:
    kind = type(node)
    if kind is dict:
        return {key: _slice(child, start, stop) for key, child in node.items()}
    if kind is tuple:
        return tuple(_slice(child, start, stop) for child in node)
    if kind is _ListNode:
        return _ListNode([_slice(child, start, stop) for child in node.parts])
    return node[start:stop]


class _ListNode:
    """A decoded ``list`` node (a plain list is a JSON column)."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts


def _stacked(node: Any) -> Any:
    if type(node) is _ListNode:
        return [_stacked(child) for child in node.parts]
    if type(node) is dict:
        return {key: _stacked(child) for key, child in node.items()}
    if type(node) is tuple:
        return tuple(_stacked(child) for child in node)
    return node


class StepValues(Sequence[Any]):
    """The per-step values of a format 2 column (observations or actions), made on access from stacked arrays.

    ``values[t]`` is step ``t``'s value (numpy arrays are read-only views of the Object's bytes; dicts, tuples and
    lists as recorded; JSON leaves as JSON). :meth:`stacked` gives the whole column without per-step objects, and
    ``np.asarray(values)`` of an array column is its stacked array.
    """

    __slots__ = ("_ends", "_segments")

    def __init__(self, segments: Sequence[tuple[int, Any]]) -> None:
        self._segments = [(steps, node) for steps, node in segments if steps]
        ends: list[int] = []
        total = 0
        for steps, _ in self._segments:
            total += steps
            ends.append(total)
        self._ends = ends

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, stride = index.indices(len(self))
            if stride != 1:
                return [self[i] for i in range(start, stop, stride)]
            return StepValues(self._cut(start, stop))
        count = len(self)
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            raise IndexError(f"step {index} of {count}")
        segment = bisect.bisect_right(self._ends, position)
        steps, node = self._segments[segment]
        return _at(node, position - (self._ends[segment] - steps))

    def __iter__(self) -> Iterator[Any]:
        for steps, node in self._segments:
            for offset in range(steps):
                yield _at(node, offset)

    def _cut(self, start: int, stop: int) -> list[tuple[int, Any]]:
        result: list[tuple[int, Any]] = []
        begin = 0
        for steps, node in self._segments:
            low, high = max(start - begin, 0), min(stop - begin, steps)
            if low < high:
                result.append((high - low, node if (low, high) == (0, steps) else _slice(node, low, high)))
            begin += steps
        return result

    def stacked(self) -> Any:
        """The column as one value without per-step objects when all its steps share one structure (a ``(T, ...)``
        array for arrays; a dict / tuple / list of such columns for containers; a list of JSON values for JSON
        leaves), else None."""
        if len(self._segments) != 1:
            return None
        return _stacked(self._segments[0][1])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        np = _numpy()
        whole = self.stacked()
        array = whole if isinstance(whole, np.ndarray) else np.array(list(self))
        if dtype is not None:
            array = array.astype(dtype)
        return np.array(array) if copy else array  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes) or len(other) != len(self):
            return False
        np = _numpy()
        return all(_equal(a, b, np) for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StepValues({len(self)} steps in {len(self._segments)} segment(s))"


def _equal(a: Any, b: Any, np: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return bool(a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_equal(a[k], b[k], np) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y, np) for x, y in zip(a, b, strict=True))
    return bool(a == b)


class Columns:
    """The parts of a decoded format 2 trajectory (``ledger.trajectories`` makes its ``Trajectory``)."""

    __slots__ = ("actions", "metrics", "observations", "rewards", "terminated", "truncated")

    def __init__(
        self,
        observations: StepValues,
        actions: Sequence[Any],
        rewards: list[float],
        metrics: list[Mapping[str, Any]],
        terminated: bool,
        truncated: bool,
    ) -> None:
        self.observations = observations
        self.actions = actions
        self.rewards = rewards
        self.metrics = metrics
        self.terminated = terminated
        self.truncated = truncated


class _Reader:
    """Checks a header's nodes and makes their arrays, each exactly once and in order."""

    def __init__(self, arrays: list[Any]) -> None:
        self.arrays = arrays
        self.next = 0

    def node(self, raw: Any, steps: int, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise SchemaError(f"trajectory Object nests columns deeper than {_MAX_DEPTH} levels")
        if not isinstance(raw, dict) or len(raw) != 1:
            raise SchemaError(f"trajectory Object has a malformed column {_short(raw)}")
        ((kind, body),) = raw.items()
        if kind == "json":
            if not isinstance(body, list) or len(body) != steps:
                raise SchemaError(f"trajectory Object has a JSON column of {_count(body)} values for {steps} steps")
            return body
        if kind == "array":
            if body != self.next or type(body) is not int or body >= len(self.arrays):
                raise SchemaError(f"trajectory Object refers to array {_short(body)} where array {self.next} is next")
            array = self.arrays[body]
            self.next += 1
            if array.shape[0] != steps:
                raise SchemaError(f"trajectory Object has an array of {array.shape[0]} rows for {steps} steps")
            return array
        if kind == "dict" and isinstance(body, dict):
            return {key: self.node(child, steps, depth + 1) for key, child in sorted(body.items())}
        if kind in ("tuple", "list") and isinstance(body, list):
            parts = [self.node(child, steps, depth + 1) for child in body]
            return tuple(parts) if kind == "tuple" else _ListNode(parts)
        raise SchemaError(f"trajectory Object has a column of unknown kind {_short(kind)}")

    def segments(self, raw: Any, what: str) -> list[tuple[int, Any]]:
        if not isinstance(raw, list):
            raise SchemaError(f"trajectory Object's {what} are not a list of segments")
        result = []
        for segment in raw:
            if not isinstance(segment, dict) or segment.keys() != {"steps", "value"}:
                raise SchemaError(f"trajectory Object has a malformed {what} segment {_short(segment)}")
            steps = segment["steps"]
            if type(steps) is not int or steps < 1:
                raise SchemaError(f"trajectory Object has a {what} segment of {_short(steps)} steps")
            result.append((steps, self.node(segment["value"], steps, 0)))
        return result


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


def _count(value: Any) -> str:
    return str(len(value)) if isinstance(value, list) else _short(value)


def _arrays(table: Any, data: bytes, start: int) -> list[Any]:
    """The arrays ``table`` describes, as read-only views of ``data[start:]``, which they must fill exactly."""
    if not isinstance(table, list):
        raise SchemaError("trajectory Object's array table is not a list")
    layouts: list[tuple[Any, tuple[int, ...], int]] = []
    total = 0
    np = _numpy()
    for entry in table:
        if not isinstance(entry, dict) or entry.keys() != {"dtype", "shape"}:
            raise SchemaError(f"trajectory Object has a malformed array entry {_short(entry)}")
        dtype, shape = entry["dtype"], entry["shape"]
        if not isinstance(dtype, str) or not _DTYPE(dtype):
            raise SchemaError(
                f"trajectory Object has an array of dtype {_short(dtype)}; only bool, integer and float dtypes of "
                "at most 64 bits are recorded"
            )
        if (
            not isinstance(shape, list)
            or not 1 <= len(shape) <= _MAX_DEPTH + 1
            or not all(type(n) is int and n >= 0 for n in shape)
        ):
            raise SchemaError(f"trajectory Object has an array of malformed shape {_short(shape)}")
        size = np.dtype(dtype).itemsize * math.prod(shape)
        total += size
        if total > len(data) - start:
            raise SchemaError(
                f"trajectory Object's arrays need more than the {len(data) - start} bytes it holds; it is truncated "
                "or damaged"
            )
        layouts.append((np.dtype(dtype), tuple(shape), size))
    if total != len(data) - start:
        raise SchemaError(f"trajectory Object holds {len(data) - start - total} bytes beyond its arrays")
    result = []
    offset = start
    for dtype, shape, size in layouts:
        try:
            array = np.frombuffer(data, dtype=dtype, count=size // dtype.itemsize, offset=offset).reshape(shape)
        except ValueError as exc:  # e.g. a shape whose dimensions overflow although one of them is 0
            raise SchemaError(f"trajectory Object has an array of impossible shape {_short(shape)}: {exc}") from None
        result.append(array)
        offset += size
    return result


def decode_columns(data: bytes) -> Columns:
    """Parse format 2 bytes (starting with :data:`COLUMNS_MAGIC`); raises SchemaError if they are not one."""
    start = len(COLUMNS_MAGIC)
    if not data.startswith(COLUMNS_MAGIC) or len(data) < start + _LENGTH.size:
        raise SchemaError(f"not a {COLUMNS_FORMAT!r} trajectory Object (no header)")
    (length,) = _LENGTH.unpack_from(data, start)
    start += _LENGTH.size
    if length > len(data) - start or length > MAX_PAYLOAD_BYTES:
        raise SchemaError(
            f"trajectory Object declares a header of {length} bytes but holds {len(data) - start}; it is truncated "
            "or damaged"
        )
    try:
        header = parse_canonical(bytes(data[start : start + length]))
    except EncodingError as exc:
        raise SchemaError(f"trajectory Object's header is not JSON: {exc}") from None
    if not isinstance(header, dict) or header.keys() != _HEADER_KEYS:
        keys = sorted(header) if isinstance(header, dict) else type(header).__name__
        raise SchemaError(f"trajectory Object's header has fields {_short(keys)}, expected {sorted(_HEADER_KEYS)}")
    reader = _Reader(_arrays(header["arrays"], data, start + length))
    observations = StepValues(reader.segments(header["observations"], "observations"))
    action_values = StepValues(reader.segments(header["actions"], "actions"))
    if reader.next != len(reader.arrays):
        raise SchemaError(f"trajectory Object holds {len(reader.arrays) - reader.next} arrays no column refers to")
    rewards, metrics = header["rewards"], header["metrics"]
    steps = len(action_values)
    if not isinstance(rewards, list) or not all(type(r) is float or type(r) is int for r in rewards):
        raise SchemaError("trajectory Object's rewards are not a list of numbers")
    if not isinstance(metrics, list) or not all(isinstance(m, dict) for m in metrics):
        raise SchemaError("trajectory Object's metrics are not a list of objects")
    if len(rewards) != steps or len(metrics) != steps:
        raise SchemaError(f"trajectory lengths disagree: {steps} actions, {len(rewards)} rewards")
    if len(observations) > steps + 1:
        raise SchemaError(f"trajectory Object has {len(observations)} observations for {steps} actions")
    terminated, truncated = header["terminated"], header["truncated"]
    if type(terminated) is not bool or type(truncated) is not bool:
        raise SchemaError("trajectory Object's terminated and truncated flags are not booleans")
    stacked_actions = action_values.stacked()
    actions: Sequence[Any] = stacked_actions if type(stacked_actions) is list else action_values
    return Columns(observations, actions if steps else [], rewards, metrics, terminated, truncated)
