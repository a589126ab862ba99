"""The worker's trajectory recorder writes exactly ``encode_trajectory`` of the same Episode, only faster, in both
formats (format 2 when an observation holds a large array)."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
from evoledger.kernel.execution import encode_wire, to_json_value
from evoledger.kernel.execution.trajectory_recording import TrajectoryRecorder
from evoledger.ledger.trajectories import Trajectory, decode_trajectory, encode_trajectory
from evoledger.ledger.trajectory_columns import COLUMNS_MAGIC, holds_large_array
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

_ANY_FLOAT = st.floats(width=64) | st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])
_ANY_FLOAT32 = st.floats(width=32) | st.integers(0, 2**32 - 1).map(
    lambda b: float(struct.unpack("<f", struct.pack("<I", b))[0])
)
_FINITE = _ANY_FLOAT.filter(math.isfinite)
_DTYPES = st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.int8, np.bool_])
_SHAPES = st.sampled_from([(), (1,), (4,), (2, 3), (2, 1, 2)])


@st.composite
def _arrays(draw: st.DrawFn, dtype: Any = None, shape: Any = None) -> np.ndarray[Any, Any]:
    dtype = draw(_DTYPES) if dtype is None else dtype
    shape = draw(_SHAPES) if shape is None else shape
    elements = {np.dtype(np.float64): _ANY_FLOAT, np.dtype(np.float32): _ANY_FLOAT32}.get(np.dtype(dtype))
    array: np.ndarray[Any, Any] = draw(hnp.arrays(dtype, shape, elements=elements))
    return array


_PLAIN = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _ANY_FLOAT | st.text(max_size=4)
_OTHER_OBSERVATIONS = st.recursive(
    _PLAIN,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | _arrays()
    ),
    max_leaves=8,
)


@st.composite
def _observations(draw: st.DrawFn) -> list[Any]:
    """Runs of arrays of one dtype and shape (the usual Episode), mixed with other arrays and other values."""
    kind = draw(st.sampled_from(["uniform", "runs", "mixed"]))
    count = draw(st.integers(1, 12))
    if kind == "uniform":
        dtype, shape = draw(_DTYPES), draw(_SHAPES)
        return [draw(_arrays(dtype, shape)) for _ in range(count)]
    if kind == "runs":
        return [draw(_arrays()) for _ in range(count)]
    return [draw(_OTHER_OBSERVATIONS | _arrays()) for _ in range(count)]


_METRICS = st.dictionaries(st.sampled_from(["x", "dist", "é"]), _FINITE | st.integers() | st.booleans(), max_size=2)


def _recorded(observations: list[Any], actions: list[Any], rewards: list[float], metrics: list[Any]) -> bytes:
    recorder = TrajectoryRecorder()
    for observation in observations:
        recorder.observe(observation, encode_wire(observation))
    for item in metrics:
        recorder.add_metrics(item)
    return recorder.encode(actions, rewards, terminated=False, truncated=True)


def _reference(observations: list[Any], actions: list[Any], rewards: list[float], metrics: list[Any]) -> bytes:
    """``encode_trajectory`` of the Episode: of its raw observations in format 2, of their JSON forms in format 1."""
    return encode_trajectory(
        Trajectory(
            observations=observations if holds_large_array(observations) else [to_json_value(o) for o in observations],
            actions=actions,
            rewards=rewards,
            terminated=False,
            truncated=True,
            metrics=metrics,
        )
    )


@settings(max_examples=150, deadline=None)
@given(observations=_observations(), data=st.data())
def test_the_recorder_writes_the_canonical_trajectory_bytes(observations: list[Any], data: st.DataObject) -> None:
    steps = len(observations) - 1
    actions = [to_json_value(a) for a in data.draw(st.lists(_OTHER_OBSERVATIONS, min_size=steps, max_size=steps))]
    rewards = data.draw(st.lists(_FINITE, min_size=steps, max_size=steps))
    metrics = data.draw(st.lists(_METRICS, min_size=steps, max_size=steps))
    metrics = [to_json_value(m) for m in metrics]
    recorded = _recorded(observations, actions, rewards, metrics)
    assert recorded == _reference(observations, actions, rewards, metrics)


def test_numbers_repr_writes_with_an_exponent_are_written_as_repr_writes_them() -> None:
    tricky = [1e-5, -2.5e-5, 5e-324, 1e16, -1.2345e17, 1e22, 9.999e-5, 0.0001, 10.00001, -0.0, 1e15, 3.4e38]
    observations = [np.array(tricky, dtype=np.float64), np.array(tricky[::-1], dtype=np.float64)]
    actions, rewards = [1e-7], [-3e-300]
    recorded = _recorded(observations, actions, rewards, [{}])
    assert recorded == _reference(observations, actions, rewards, [{}])
    assert b"1e-05" in recorded
    assert b"1e+16" in recorded
    assert b"1e-07" in recorded
    assert decode_trajectory(recorded).observations[0] == tricky


def test_an_observation_changed_in_place_later_is_recorded_as_it_was_sent() -> None:
    buffer = np.zeros(3, dtype=np.float32)
    recorder = TrajectoryRecorder()
    for step in range(3):
        buffer[:] = step  # an Environment that reuses one array for every observation
        recorder.observe(buffer, encode_wire(buffer))
    for _ in range(2):
        recorder.add_metrics({})
    trajectory = decode_trajectory(recorder.encode([0, 0], [0.0, 0.0], terminated=True, truncated=False))
    assert trajectory.observations == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]


def test_non_finite_values_are_recorded_as_null_like_to_json_value_does() -> None:
    observations = [np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32)] * 2
    recorded = _recorded(observations, [0], [1.0], [{}])
    assert recorded == _reference(observations, [0], [1.0], [{}])
    assert decode_trajectory(recorded).observations[1] == [None, None, None, 1.0]


_SMALL_SHAPES = st.sampled_from([(), (1,), (4,), (64,)])
_LARGE_SHAPES = st.sampled_from([(65,), (2, 3), (4, 4, 3), (1, 1)])


@st.composite
def _image_observations(draw: st.DrawFn) -> list[Any]:
    """Image-like Episodes: one array, a dict (image + direction + mission), a tuple, or a mix of structures."""
    kind = draw(st.sampled_from(["array", "dict", "tuple", "mixed"]))
    count = draw(st.integers(1, 8))
    dtype, shape = draw(_DTYPES), draw(_LARGE_SHAPES)
    if kind == "array":
        return [draw(_arrays(dtype, shape)) for _ in range(count)]
    if kind == "dict":
        mission = st.text(max_size=6)
        return [
            {"image": draw(_arrays(dtype, shape)), "direction": draw(st.integers(0, 3)), "mission": draw(mission)}
            for _ in range(count)
        ]
    if kind == "tuple":
        return [(draw(_arrays(dtype, shape)), draw(_arrays(np.float32, (2,))), draw(_PLAIN)) for _ in range(count)]
    small = st.dictionaries(st.sampled_from(["a", "b"]), _arrays(shape=_SMALL_SHAPES) | _PLAIN, min_size=1, max_size=2)
    others = [draw(_OTHER_OBSERVATIONS | _arrays(shape=_SMALL_SHAPES) | small) for _ in range(count - 1)]
    others.insert(
        draw(st.integers(0, count - 1)), draw(_arrays(dtype, shape) | st.builds(dict, image=_arrays(dtype, shape)))
    )
    return others  # the large array anywhere: earlier steps were recorded before format 2 was known to be needed


@settings(max_examples=60, deadline=None)
@given(observations=_image_observations(), data=st.data())
def test_the_recorder_writes_format_2_bytes_equal_to_encode_trajectory(
    observations: list[Any], data: st.DataObject
) -> None:
    steps = len(observations) - 1
    actions = [to_json_value(a) for a in data.draw(st.lists(_OTHER_OBSERVATIONS, min_size=steps, max_size=steps))]
    rewards = data.draw(st.lists(_FINITE, min_size=steps, max_size=steps))
    metrics = [to_json_value(m) for m in data.draw(st.lists(_METRICS, min_size=steps, max_size=steps))]
    recorded = _recorded(observations, actions, rewards, metrics)
    assert recorded.startswith(COLUMNS_MAGIC)
    assert recorded == _reference(observations, actions, rewards, metrics)


def test_small_arrays_keep_format_1_and_a_64x64x3_image_takes_format_2() -> None:
    small = [np.arange(64, dtype=np.float32)] * 3
    assert _recorded(small, [0, 1], [0.0, 1.0], [{}, {}]).startswith(b'{"actions":')
    image = [np.full((64, 64, 3), step, dtype=np.uint8) for step in range(3)]
    recorded = _recorded(image, [0, 1], [0.0, 1.0], [{}, {}])
    assert recorded.startswith(COLUMNS_MAGIC)
    assert len(recorded) < 3 * 64 * 64 * 3 + 1000  # raw bytes, not ~12k JSON numbers per step
    np.testing.assert_array_equal(np.asarray(decode_trajectory(recorded).observations), np.stack(image))


def test_a_dict_observation_changed_in_place_later_is_recorded_as_it_was_sent() -> None:
    image = np.zeros((8, 8), dtype=np.uint8)
    observation = {"image": image, "mission": "go"}
    recorder = TrajectoryRecorder()
    for step in range(3):
        image[:] = step
        recorder.observe(observation, encode_wire(observation))
    for _ in range(2):
        recorder.add_metrics({})
    trajectory = decode_trajectory(recorder.encode([0, 0], [0.0, 0.0], terminated=True, truncated=False))
    assert [int(o["image"][0, 0]) for o in trajectory.observations] == [0, 1, 2]
    assert [o["mission"] for o in trajectory.observations] == ["go"] * 3
