"""conform_action: natural types for the action space, never a repair."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from evoledger.kernel.execution import conform_action
from gymnasium import spaces

BOX = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)


@pytest.mark.parametrize("action", [2, np.int64(2), np.uint8(2), 2.0, np.float32(2.0), np.array(2)])
def test_discrete_integers_become_python_ints(action: Any) -> None:
    converted = conform_action(action, spaces.Discrete(4))
    assert converted == 2
    assert type(converted) is int


@pytest.mark.parametrize("action", [1.5, float("nan"), True, np.bool_(False), "1", [1], np.array([1])])
def test_discrete_non_integers_pass_through_unchanged(action: Any) -> None:
    assert conform_action(action, spaces.Discrete(4)) is action


@pytest.mark.parametrize(
    "action", [[0.25, -0.5], (0.25, -0.5), np.array([0.25, -0.5]), np.array([0.25, -0.5], dtype=np.float32)]
)
def test_box_actions_become_arrays_of_the_space_dtype(action: Any) -> None:
    converted = conform_action(action, BOX)
    assert converted.dtype == np.float32
    assert converted.tolist() == [0.25, -0.5]


def test_box_actions_are_never_clipped_or_reshaped() -> None:
    assert conform_action([2.0, -7.0], BOX).tolist() == [2.0, -7.0]
    assert conform_action([0.1, 0.2, 0.3], BOX).shape == (3,)
    nan = conform_action([float("nan"), 0.0], BOX)
    assert np.isnan(nan[0])


@pytest.mark.parametrize("action", [["a", "b"], [[1.0], [1.0, 2.0]], {"x": 1}])
def test_unconvertible_box_actions_pass_through(action: Any) -> None:
    assert conform_action(action, BOX) is action


def test_integer_boxes_refuse_lossy_conversions() -> None:
    space = spaces.MultiDiscrete([3, 3])
    assert conform_action([1.0, 2.0], space).tolist() == [1, 2]
    lossy = [1.5, 2.0]
    assert conform_action(lossy, space) is lossy
    byte_box = spaces.Box(0, 255, (1,), dtype=np.uint8)
    assert conform_action(np.array([300]), byte_box).tolist() == [300]  # unchanged: 300 would wrap to 44
    assert conform_action(np.array([-1]), byte_box).tolist() == [-1]
    assert conform_action([7], byte_box).dtype == np.uint8


@pytest.mark.parametrize(
    "space", [spaces.MultiDiscrete([3, 3]), spaces.Box(0, 5, (2,), dtype=np.int64), spaces.MultiBinary(2)]
)
def test_bools_are_not_made_integers(space: Any) -> None:
    action = [True, False]
    assert conform_action(action, space) is action  # the Environment decides (only a MultiBinary takes bools)


def test_composite_spaces_convert_element_wise() -> None:
    space = spaces.Tuple((spaces.Discrete(3), BOX))
    converted = conform_action([np.int64(1), [0.5, 0.5]], space)
    assert isinstance(converted, tuple)
    assert type(converted[0]) is int
    assert converted[1].dtype == np.float32
    assert conform_action([1], space) == [1]  # wrong length: unchanged
    dict_space = spaces.Dict({"a": spaces.Discrete(2)})
    assert conform_action({"a": np.int32(1)}, dict_space) == {"a": 1}
    assert conform_action({"b": 1}, dict_space) == {"b": 1}
    assert conform_action("anything", spaces.Text(5)) == "anything"
