"""Recording one Episode's trajectory in the worker: almost nothing per step, one encoding at the end.

The bytes :meth:`TrajectoryRecorder.encode` returns are exactly
:func:`~evoledger.ledger.trajectories.encode_trajectory` of the same Episode (canonical JSON, so the digest of a
recorded Episode does not depend on how it was recorded; a property test holds the two to that). Two things make
it cheap:

* An array observation is kept as the wire bytes already made to send it to the Policy (an immutable snapshot, even
  if the Environment later changes its array in place). At the end, runs of arrays of one dtype and shape become one
  stacked array, converted to lists in one call instead of one conversion per step.
* An Episode whose observations hold a large array (an image; the rule is
  :func:`~evoledger.ledger.trajectory_columns.holds_large_array`) is written in format 2 by ``encode_trajectory``'s
  own encoder, from the arrays the wire bytes hold (no per-step conversion at all). Whether it does is known only at
  the end: array observations are kept as wire bytes either way; a dict, tuple or list observation holding a large
  array is kept as a snapshot (its arrays copied, everything else converted to JSON values), one holding only small
  arrays as its JSON form and its wire bytes (decoded only if a later step makes the Episode format 2).
* Canonical JSON is written by orjson, which formats floats with the same shortest round-trip digits as Python's
  ``repr`` but writes small and large exponents differently (``1e-5`` / ``0.00001`` where ``repr`` writes
  ``1e-05``); those few numbers are rewritten with ``repr``. Only parts without strings take this path (their
  bytes hold no quote), and only values this module made (finite by construction: non-finite floats were recorded
  as ``null``); everything else goes through :func:`~evoledger.ledger.canonical.canonical_json` itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import orjson
from evoledger.kernel.execution.values import MAX_WIRE_DEPTH, array_layout, decode_wire, to_json_value
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError
from evoledger.ledger.trajectories import TRAJECTORY_FORMAT, Trajectory, encode_trajectory
from evoledger.ledger.trajectory_columns import LARGE_ARRAY_VALUES

__all__ = ["TrajectoryRecorder"]

_EXPONENT: Final = re.compile(rb"e[-+]?[0-9]+")
"""The exponent of a number in orjson's output (``true`` and ``false`` never match: no digit follows their e)."""
_SMALL: Final = re.compile(rb"0\.0000[0-9]*")
"""A number below 1e-4 written out in full (``repr`` writes it with an exponent)."""
_TOKEN_START: Final = frozenset(b",[:")
_FORMAT_FIELD: Final = canonical_json(TRAJECTORY_FORMAT)


_LONGEST_FLOAT: Final = 32
"""More characters than any float orjson writes (``-2.2250738585072014e-308`` has 24)."""


def _token_start(data: bytes, position: int) -> int:
    """Where the float holding ``position`` starts (no strings here: it follows ``,``, ``[`` or ``:``, at most
    :data:`_LONGEST_FLOAT` bytes before, so that finding it never scans the whole output)."""
    low = max(0, position - _LONGEST_FLOAT)
    return (
        max(data.rfind(b",", low, position), data.rfind(b"[", low, position), data.rfind(b":", low, position), low - 1)
        + 1
    )


def _repr_floats(data: bytes) -> bytes | None:
    """Rewrite the numbers of orjson's output whose form differs from ``repr``'s (C-speed when there are none);
    None when so many differ that the standard encoder is faster."""
    spans = [(_token_start(data, match.start()), match.end()) for match in _EXPONENT.finditer(data)]
    position = data.find(b"0.0000")
    while position != -1:
        match = _SMALL.match(data, position)
        end = position + 6 if match is None else match.end()
        start = position - 1 if position and data[position - 1] == 0x2D else position  # a minus sign
        if start == 0 or data[start - 1] in _TOKEN_START:  # else inside a number, such as 10.00001
            spans.append((start, end))
        position = data.find(b"0.0000", end)
    if not spans:
        return data
    # Rewriting costs ~3x encoding a number. A value takes at most 26 bytes and a comma, so there are more values
    # than len(data) / 27: counting them (a scan of the whole output) is needed only when the spans come close.
    if len(spans) * 3 * 27 > len(data) and len(spans) * 3 > data.count(b",") + 1:
        return None
    spans.sort()
    parts: list[bytes] = []
    done = 0
    for start, end in spans:
        parts.append(data[done:start])
        parts.append(repr(float(data[start:end])).encode("ascii"))
        done = end
    parts.append(data[done:])
    return b"".join(parts)


def _numeric_json(value: Any) -> bytes:
    """``canonical_json(value)`` for a value holding no NaN or infinity (the caller's guarantee), faster when it
    holds no strings."""
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits, a non-string key: the standard path decides
        return canonical_json(value)
    if b'"' in data:  # strings or dict keys: escaping and key order are the standard encoder's to decide
        return canonical_json(value)
    rewritten = _repr_floats(data)
    return canonical_json(value) if rewritten is None else rewritten


def _layout(wire: bytes) -> tuple[np.dtype[Any], tuple[int, ...], int]:
    """dtype, shape and data offset of an array's wire bytes (made by ``encode_wire`` in this process)."""
    layout = array_layout(wire)
    if layout is None:  # never: an array observation always travels as one whole array
        raise EncodingError("an array observation's wire bytes are not one whole array")
    return layout


def _stacked_to_json(dtype: np.dtype[Any], shape: tuple[int, ...], data: bytes, count: int) -> list[Any]:
    """The JSON forms of ``count`` arrays of ``dtype`` and ``shape`` whose data ``data`` holds in order, converted as
    one stacked array."""
    rows: list[Any] = to_json_value(np.frombuffer(data, dtype=dtype).reshape((count, *shape)))
    return rows


def _uniform_to_json(wires: list[bytes]) -> list[Any] | None:
    """The JSON forms of arrays' wire bytes if all have one dtype and shape (checked at C speed), else None."""
    first = wires[0]
    dtype, shape, size = _layout(first)
    length, count = len(first), len(wires)
    joined = b"".join(wires)
    if len(joined) != length * count:
        return None
    rows = np.frombuffer(joined, dtype=np.uint8).reshape(count, length)
    if count > 1 and not (rows[:, :size] == rows[0, :size]).all():
        return None
    return _stacked_to_json(dtype, shape, rows[:, size:].tobytes(), count)


def _large(shape: tuple[int, ...]) -> bool:
    return len(shape) >= 2 or math.prod(shape) > LARGE_ARRAY_VALUES


_PLAIN: Final = frozenset({int, float, bool, str, type(None)})


def _arrays_in(value: Any) -> int:
    """0 when a container holds no numpy array, 1 when it holds only small ones, 2 when it holds a large one (at any
    depth, bounded by the wire's: it was sent)."""
    found = 0
    kind = type(value)
    for item in value if kind is list or kind is tuple else value.values():
        kind = type(item)
        if kind in _PLAIN:
            continue
        if kind is np.ndarray or isinstance(item, np.ndarray):
            if _large(item.shape):
                return 2
            found = 1
        elif kind is dict or kind is list or kind is tuple or isinstance(item, list | tuple | Mapping):
            inner = _arrays_in(item)
            if inner == 2:
                return 2
            found |= inner
    return found


class _Small:
    """A container observation holding only small arrays: its JSON form (format 1), and its wire bytes, decoded to
    the value as sent should the Episode turn out to need format 2."""

    __slots__ = ("json", "wire")

    def __init__(self, json: Any, wire: bytes) -> None:
        self.json = json
        self.wire = wire


class _Snapshot:
    """A container observation holding a large array, as it was when observed: arrays copied, other leaves as JSON."""

    __slots__ = ("value",)

    def __init__(self, observation: Any) -> None:
        self.value = self._copy(observation, 0)

    def _copy(self, value: Any, depth: int) -> Any:
        if depth > MAX_WIRE_DEPTH:
            raise EncodingError(f"value nests deeper than {MAX_WIRE_DEPTH} levels and cannot be recorded")
        if isinstance(value, np.ndarray):
            return np.array(value)  # of a recordable dtype: the wire encoding accepted it
        if isinstance(value, list | tuple):
            items = [self._copy(v, depth + 1) for v in value]
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, Mapping):
            result: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise EncodingError(f"dict key {key!r:.60} cannot be recorded: JSON object keys must be str")
                result[key] = self._copy(item, depth + 1)
            return result
        return to_json_value(value, depth)


def _any_large_wire(items: list[Any]) -> bool:
    """Whether an array observation among ``items`` is large (its wire head read once per run of one head)."""
    head = b"\x00"
    for item in items:
        if type(item) is bytes and not item.startswith(head):
            _dtype, shape, size = _layout(item)
            if _large(shape):
                return True
            head = item[:size]
    return False


def _recorded_value(item: Any) -> Any:
    """An observation as format 2 records it: a wire array as an array (a view of its bytes), a snapshot's value,
    a container of small arrays as it was sent."""
    if type(item) is bytes:
        dtype, shape, size = _layout(item)
        return np.frombuffer(item, dtype=dtype, offset=size).reshape(shape)
    if type(item) is _Snapshot:
        return item.value
    if type(item) is _Small:
        return decode_wire(item.wire)
    return item


class TrajectoryRecorder:
    """What one Episode records, step by step; :meth:`encode` makes the trajectory Object."""

    __slots__ = ("_all_arrays", "_large", "_metrics", "_observations", "_recorded_metrics")

    def __init__(self) -> None:
        self._observations: list[Any] = []
        """Wire bytes of array observations, snapshots of containers holding arrays (both converted in
        :meth:`encode`), JSON values of all others."""
        self._all_arrays = True
        self._large = False
        """Whether a container observation holds a large array (array observations are checked in :meth:`encode`)."""
        self._metrics: list[Any] = []
        self._recorded_metrics = False

    def observe(self, observation: Any, wire: bytes) -> None:
        """Record ``observation``, whose wire encoding ``wire`` was made already (raises EncodingError if it cannot
        be recorded)."""
        if type(observation) is np.ndarray:  # on the wire, so of a recordable dtype: kept as the bytes sent
            self._observations.append(wire)
            return
        self._all_arrays = False
        kind = type(observation)
        container = kind is dict or kind is tuple or kind is list or isinstance(observation, list | tuple | Mapping)
        arrays = _arrays_in(observation) if container else 0
        if arrays == 2:
            self._large = True
            self._observations.append(_Snapshot(observation))
        elif arrays == 1:
            self._observations.append(_Small(to_json_value(observation), wire))
        else:
            self._observations.append(to_json_value(observation))

    def add_metrics(self, metrics: Any) -> None:
        """Record one step's metrics (already JSON values)."""
        self._metrics.append(metrics)
        if metrics:
            self._recorded_metrics = True

    def _observations_json(self) -> list[Any] | None:
        """The JSON forms of the observations for format 1, or None when the Episode needs format 2."""
        items = self._observations
        if self._large:
            return None
        if self._all_arrays and items:
            if _large(_layout(items[0])[1]):
                return None
            uniform = _uniform_to_json(items)  # every array of the first one's (small) dtype and shape
            if uniform is not None:
                return uniform
        if _any_large_wire(items):
            return None
        result: list[Any] = []
        position, count = 0, len(items)
        while position < count:
            item = items[position]
            if type(item) is not bytes:
                result.append(item.json if type(item) is _Small else item)
                position += 1
                continue
            dtype, shape, size = _layout(item)
            head = item[:size]
            chunks = [item[size:]]
            position += 1
            while position < count:
                following = items[position]
                if type(following) is not bytes or not following.startswith(head):
                    break
                chunks.append(following[size:])
                position += 1
            result.extend(_stacked_to_json(dtype, shape, b"".join(chunks), len(chunks)))
        return result

    def encode(self, actions: list[Any], rewards: list[float], *, terminated: bool, truncated: bool) -> bytes:
        """The canonical trajectory bytes: ``encode_trajectory`` of the recorded Episode (``actions`` as JSON
        values; ``rewards`` finite)."""
        observations = self._observations_json()
        if observations is None:
            return encode_trajectory(
                Trajectory(
                    observations=[_recorded_value(item) for item in self._observations],
                    actions=actions,
                    rewards=rewards,
                    terminated=terminated,
                    truncated=truncated,
                    metrics=self._metrics,
                )
            )
        if self._recorded_metrics:
            metrics = _numeric_json(self._metrics)
        else:  # the usual case: no step metrics at all
            metrics = b"[" + b",".join([b"{}"] * len(actions)) + b"]"
        return b"".join(
            (
                b'{"actions":',
                _numeric_json(actions),
                b',"format":',
                _FORMAT_FIELD,
                b',"metrics":',
                metrics,
                b',"observations":',
                _numeric_json(observations),
                b',"rewards":',
                _numeric_json(rewards),
                b',"terminated":',
                b"true" if terminated else b"false",
                b',"truncated":',
                b"true" if truncated else b"false",
                b"}",
            )
        )
