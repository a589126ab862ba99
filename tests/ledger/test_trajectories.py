"""Trajectory Objects: format 2 (arrays stacked raw per Episode) round-trips, re-encodes to the same bytes, keeps
format 1 for Episodes without large arrays, and rejects crafted bytes with a SchemaError."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.execution import to_json_value
from evoledger.ledger.errors import EncodingError, SchemaError
from evoledger.ledger.trajectories import Trajectory, decode_trajectory, encode_trajectory, stacked_values
from evoledger.ledger.trajectory_columns import COLUMNS_MAGIC, StepValues
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

_DTYPE_LIST: list[Any] = [
    np.uint8,
    np.int8,
    np.int16,
    np.uint32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.bool_,
]
_DTYPES = st.sampled_from(_DTYPE_LIST)
_LARGE = st.sampled_from([(2, 2), (3, 4, 3), (65,), (1, 1), (0, 3)])
_SMALL = st.sampled_from([(), (1,), (3,)])
_PLAIN = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5)
)
_JSONISH = st.recursive(
    _PLAIN,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


def _array(dtype: Any, shape: Any) -> st.SearchStrategy[np.ndarray[Any, Any]]:
    return hnp.arrays(dtype, shape)


@st.composite
def _step(draw: st.DrawFn, dtype: Any, shape: Any, kind: str) -> Any:
    image = draw(_array(dtype, shape))
    if kind == "image":
        return image
    if kind == "dict":
        return {
            "image": image,
            "direction": draw(st.integers(0, 3) | st.just(np.int64(2))),
            "mission": draw(st.text(max_size=8)),
            "extra": draw(_JSONISH),
        }
    if kind == "tuple":
        return (image, draw(_array(np.float32, draw(_SMALL))), draw(_PLAIN), [image, draw(_PLAIN)])
    return draw(st.sampled_from([image, {"image": image}, (image,), draw(_JSONISH), draw(_array(np.int64, (2,)))]))


@st.composite
def _episodes(draw: st.DrawFn) -> Trajectory:
    kind = draw(st.sampled_from(["image", "dict", "tuple", "mixed"]))
    dtype, shape = draw(_DTYPES), draw(_LARGE)
    steps = draw(st.integers(0, 6))
    count = max(1, steps + draw(st.sampled_from([0, 1])))  # no final observation after a Policy failure
    observations = [draw(_step(dtype, shape, kind)) for _ in range(count)]
    if kind == "mixed":  # other structures around one image
        observations[draw(st.integers(0, count - 1))] = draw(_array(dtype, shape))
    actions = draw(st.lists(_JSONISH.map(to_json_value) | _array(np.float32, (3,)), min_size=steps, max_size=steps))
    finite = st.floats(allow_nan=False, allow_infinity=False)
    rewards = draw(st.lists(finite, min_size=steps, max_size=steps))
    metrics = draw(st.lists(st.dictionaries(st.sampled_from(["x", "é"]), finite), min_size=steps, max_size=steps))
    return Trajectory(observations, actions, rewards, draw(st.booleans()), draw(st.booleans()), metrics)


def _expected(value: Any) -> Any:
    """What format 2 gives back: arrays and the containers holding them as they were, everything else as JSON."""
    if isinstance(value, np.ndarray):
        return value
    if _holds_array(value):
        if isinstance(value, dict):
            return {k: _expected(v) for k, v in value.items()}
        return type(value)(_expected(v) for v in value)
    return to_json_value(value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f"))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _holds_array(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, dict):
        return any(_holds_array(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_array(v) for v in value)
    return False


@settings(max_examples=60, deadline=None)
@given(episode=_episodes())
def test_format_2_round_trips_and_re_encodes_to_the_same_bytes(episode: Trajectory) -> None:
    data = encode_trajectory(episode)
    assert data.startswith(COLUMNS_MAGIC)
    decoded = decode_trajectory(data)
    assert isinstance(decoded.observations, StepValues)
    assert decoded.observations == [_expected(o) for o in episode.observations]
    assert _same(list(decoded.actions), [_expected(a) for a in episode.actions])
    assert list(decoded.rewards) == list(episode.rewards)
    assert list(decoded.metrics) == [to_json_value(m) for m in episode.metrics]
    assert (decoded.terminated, decoded.truncated) == (episode.terminated, episode.truncated)
    assert encode_trajectory(decoded) == data  # stable: a decoded Episode encodes to its own digest


def test_an_image_episode_is_one_stacked_array_and_a_dict_one_column_per_key() -> None:
    images = [np.full((64, 64, 3), t, dtype=np.uint8) for t in range(4)]
    data = encode_trajectory(Trajectory(images, [0, 1, 2], [0.0, 1.0, 2.0], True, False))
    assert len(data) < images[0].nbytes * 4 + 1000
    decoded = decode_trajectory(data)
    stacked = stacked_values(decoded.observations)
    assert isinstance(stacked, np.ndarray)
    assert stacked.shape == (4, 64, 64, 3)
    np.testing.assert_array_equal(np.asarray(decoded.observations), np.stack(images))
    np.testing.assert_array_equal(decoded.observations[-1], images[-1])
    assert decoded.actions == [0, 1, 2]
    missions = [{"image": i[:7, :7], "direction": t, "mission": "go to the red ball"} for t, i in enumerate(images)]
    decoded = decode_trajectory(encode_trajectory(Trajectory(missions, [0, 1, 2], [0.0] * 3, False, True)))
    columns = stacked_values(decoded.observations)
    assert columns["image"].shape == (4, 7, 7, 3)
    assert columns["direction"] == [0, 1, 2, 3]
    assert columns["mission"] == ["go to the red ball"] * 4
    assert decoded.observations[2]["direction"] == 2
    assert stacked_values(decoded.observations[1:3])["direction"] == [1, 2]


def test_episodes_without_large_arrays_keep_format_1() -> None:
    episode = Trajectory([[0.5, 1.0]] * 3, [0, 1], [1.0, 1.0], True, False)
    data = encode_trajectory(episode)
    assert data.startswith(b'{"actions":')
    assert decode_trajectory(data).observations == [[0.5, 1.0]] * 3


def _image_object() -> bytes:
    images = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + t for t in range(3)]
    observations = [{"image": image, "mission": "go"} for image in images]
    return encode_trajectory(Trajectory(observations, [0, 1], [0.0, 1.0], True, False, [{}, {}]))


def _rebuilt(data: bytes, change: Any = None, *, payload: bytes | None = None, length: int | None = None) -> bytes:
    start = len(COLUMNS_MAGIC)
    (size,) = struct.unpack_from("<Q", data, start)
    header = json.loads(data[start + 8 : start + 8 + size])
    arrays = data[start + 8 + size :]
    if change is not None:
        change(header)
    text = json.dumps(header).encode()
    return (
        COLUMNS_MAGIC
        + struct.pack("<Q", len(text) if length is None else length)
        + text
        + (arrays if payload is None else payload)
    )


def _set(path: list[Any], value: Any) -> Any:
    def change(header: Any) -> None:
        target = header
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


_ARRAY = ["arrays", 0]
_IMAGE = ["observations", 0, "value", "dict", "image"]


@pytest.mark.parametrize(
    ("crafted", "message"),
    [
        (lambda d: d[: len(COLUMNS_MAGIC) + 4], "no header"),
        (lambda d: _rebuilt(d, length=2**63), "declares a header of"),
        (lambda d: _rebuilt(d, payload=_rebuilt(d)[-10:]), "need more than"),
        (lambda d: _rebuilt(d, payload=_rebuilt(d)[len(_rebuilt(d)) - 36 :] + b"x"), "beyond its arrays"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "dtype"], "|O")), "dtype '|O'"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "dtype"], "<c16")), "dtype '<c16'"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "shape"], [3, 2, 2, 2**62])), "need more than"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "shape"], [3, -2, -6])), "malformed shape"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "shape"], [3, 2**40, 2**40, 0]), payload=b""), "impossible shape"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "shape"], [3, True, 12])), "malformed shape"),
        (lambda d: _rebuilt(d, _set([*_ARRAY, "shape"], [36])), "36 rows for 3 steps"),
        (lambda d: _rebuilt(d, _set([*_IMAGE, "array"], 1)), "refers to array 1"),
        (lambda d: _rebuilt(d, _set(["observations", 0, "value", "dict", "mission", "json"], ["go"])), "1 values"),
        (lambda d: _rebuilt(d, _set(["observations", 0, "steps"], 0)), "segment of 0 steps"),
        (lambda d: _rebuilt(d, _set(["observations", 0, "value"], {"pickle": 1})), "unknown kind"),
        (lambda d: _rebuilt(d, _set(["rewards"], [0.0])), "lengths disagree"),
        (lambda d: _rebuilt(d, _set(["rewards"], ["x", 1.0])), "rewards are not"),
        (lambda d: _rebuilt(d, _set(["terminated"], 1)), "flags are not booleans"),
        (lambda d: _rebuilt(d, lambda h: h.pop("metrics")), "header has fields"),
        (lambda d: _rebuilt(d, _set(["actions"], [{"steps": 1, "value": {"json": [0]}}])), "lengths disagree"),
        (
            lambda d: _rebuilt(d, _set([*_IMAGE[:-1], "x"], {"array": 1})),
            "refers to array 1",
        ),
        (lambda d: _rebuilt(d, _set(_IMAGE, _nested(40))), "deeper than"),
        (lambda d: COLUMNS_MAGIC + struct.pack("<Q", 40) + b"\xff" * 40, "header is not JSON"),
    ],
)
def test_crafted_format_2_objects_are_a_schema_error(crafted: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("|", r"\|")):
        decode_trajectory(crafted(_image_object()))


def _nested(depth: int) -> Any:
    node: Any = {"array": 0}
    for _ in range(depth):
        node = {"tuple": [node]}
    return node


@settings(max_examples=100, deadline=None)
@given(position=st.integers(0, 10_000), byte=st.integers(0, 255), cut=st.integers(0, 10_000))
def test_damaged_format_2_bytes_decode_or_raise_schema_error(position: int, byte: int, cut: int) -> None:
    data = bytearray(_image_object())
    data[position % len(data)] = byte
    damaged = bytes(data[: len(data) - cut % 8])
    try:
        trajectory = decode_trajectory(damaged)
    except SchemaError:
        return
    except EncodingError:  # a damaged magic line: then it is read as format 1 JSON, which it is not
        assert not damaged.startswith(COLUMNS_MAGIC)
        return
    for observation in trajectory.observations:  # whatever decodes is readable to the end
        assert isinstance(observation, dict | np.ndarray | list | tuple | str | int | float | type(None))
