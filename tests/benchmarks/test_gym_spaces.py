"""check_action is strict for every Gymnasium action space, and observations reach the Policy in the space's types."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.gym_spaces import check_action, plain_observation
from evoledger.kernel.authoring import InvalidAction
from gymnasium import spaces

MULTI_DISCRETE = spaces.MultiDiscrete([3, 4], start=[0, -1])
MULTI_BINARY = spaces.MultiBinary(3)
TEXT = spaces.Text(max_length=5, min_length=1, charset="abc ")
INT_BOX = spaces.Box(-2, 2, (2,), dtype=np.int64)
UINT8_BOX = spaces.Box(0, 255, (2, 2, 3), dtype=np.uint8)
FLOAT_BOX = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
TUPLE = spaces.Tuple((spaces.Discrete(2), FLOAT_BOX))
DICT = spaces.Dict({"move": spaces.Discrete(3, start=-1), "say": TEXT, "arm": TUPLE})

VALID: list[tuple[spaces.Space[Any], Any, Any]] = [
    (MULTI_DISCRETE, [2, -1], np.array([2, -1])),
    (MULTI_DISCRETE, np.array([0, 2], dtype=np.int8), np.array([0, 2])),
    (MULTI_BINARY, [1, 0, 1], np.array([1, 0, 1], dtype=np.int8)),
    (MULTI_BINARY, np.array([True, False, True]), np.array([1, 0, 1], dtype=np.int8)),
    (TEXT, "ab c", "ab c"),
    (TEXT, np.str_("cab"), "cab"),
    (INT_BOX, [2, -2], np.array([2, -2])),
    (INT_BOX, np.array([1, 0], dtype=np.uint8), np.array([1, 0])),
    (UINT8_BOX, np.full((2, 2, 3), 255, dtype=np.int64), np.full((2, 2, 3), 255, dtype=np.uint8)),
    (FLOAT_BOX, [1, -1], np.array([1.0, -1.0], dtype=np.float32)),
    (TUPLE, [np.int64(1), [0.5, 0.5]], (1, np.array([0.5, 0.5], dtype=np.float32))),
    (DICT, {"say": "a", "arm": (0, [0.0, 0.0]), "move": -1}, {"move": -1, "say": "a", "arm": (0, np.zeros(2))}),
]


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, dict):
        return isinstance(right, dict) and list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, tuple):
        return isinstance(right, tuple) and len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, np.ndarray):
        return isinstance(right, np.ndarray) and np.array_equal(left, right)
    return type(left) is type(right) and left == right


@pytest.mark.parametrize(("space", "action", "expected"), VALID, ids=lambda v: type(v).__name__)
def test_valid_actions_come_back_in_the_form_the_space_defines(space: Any, action: Any, expected: Any) -> None:
    checked = check_action(space, action)
    assert space.contains(checked)
    if isinstance(expected, np.ndarray):
        assert checked.dtype == space.dtype
    if isinstance(space, spaces.Dict):
        assert list(checked) == list(space.spaces)  # the space's key order, whatever order the Policy used
        assert checked["arm"][1].dtype == np.float32
    else:
        assert _same(np.asarray(checked) if isinstance(expected, np.ndarray) else checked, expected)


INVALID: list[tuple[str, spaces.Space[Any], Any, str]] = [
    ("md float", MULTI_DISCRETE, [1.0, 0.0], "element type float64.*integers of shape"),
    ("md bool", MULTI_DISCRETE, [True, False], "element type bool"),
    ("md range", MULTI_DISCRETE, [3, 0], r"out of range at index \(0,\)"),
    ("md below start", MULTI_DISCRETE, [0, -2], r"out of range at index \(1,\)"),
    ("md shape", MULTI_DISCRETE, [1, 1, 1], r"shape \(3,\).*needs shape \(2,\)"),
    ("md str", MULTI_DISCRETE, "12", "is a str"),
    ("mb two", MULTI_BINARY, [0, 2, 1], "other than 0 and 1"),
    ("mb float", MULTI_BINARY, [0.0, 1.0, 1.0], "element type float64"),
    ("mb shape", MULTI_BINARY, [0, 1], r"needs shape \(3,\)"),
    ("text type", TEXT, 5, "is not a str"),
    ("text bytes", TEXT, b"ab", "is not a str"),
    ("text long", TEXT, "abcabc", "has 6 characters"),
    ("text empty", TEXT, "", "has 0 characters"),
    ("text charset", TEXT, "abz", "characters 'z' not allowed"),
    ("int box float", INT_BOX, [0.5, 1.0], "never rounded"),
    ("int box bool", INT_BOX, [True, False], "element type bool"),
    ("int box range", INT_BOX, [3, 0], "outside the bounds"),
    ("uint8 box negative", UINT8_BOX, np.full((2, 2, 3), -1), "outside the bounds"),
    ("float box nan", FLOAT_BOX, [np.nan, 0.0], "NaN or infinity"),
    ("float box range", FLOAT_BOX, [1.5, 0.0], "never clipped"),
    ("float box bool", FLOAT_BOX, [True, False], "element type bool"),
    ("tuple type", TUPLE, {"0": 1}, "is not a tuple"),
    ("tuple length", TUPLE, (1,), "has 1 items; Tuple needs 2"),
    ("tuple part", TUPLE, (True, [0.0, 0.0]), r"action\[0\] True \(bool\) is not an integer"),
    ("dict type", DICT, [("move", 0)], "is not a dict"),
    ("dict missing", DICT, {"move": 0, "say": "a"}, r"missing \['arm'\]"),
    ("dict extra", DICT, {"move": 0, "say": "a", "arm": (0, [0, 0]), "x": 1}, r"unexpected \['x'\]"),
    ("dict part", DICT, {"move": 0, "say": "a", "arm": (0, [0.0, 2.0])}, r"action\['arm'\]\[1\].*outside the bounds"),
    ("dict discrete start", DICT, {"move": 2, "say": "a", "arm": (0, [0, 0])}, r"in \[-1, 1\]"),
]


@pytest.mark.parametrize(("space", "action", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_actions_in_the_wrong_form_are_invalid_and_say_the_expected_form(space: Any, action: Any, message: str) -> None:
    with pytest.raises(InvalidAction, match=message):
        check_action(space, action)


def test_observations_take_the_types_the_space_defines() -> None:
    space = spaces.Dict(
        {
            "image": UINT8_BOX,
            "mission": spaces.Text(max_length=20),
            "nested": spaces.Tuple((spaces.Discrete(3), MULTI_BINARY, spaces.Dict({"md": MULTI_DISCRETE}))),
        }
    )
    raw = OrderedDict(
        [
            ("nested", (np.int64(2), [1, 0, 1], {"md": [1, 0]})),
            ("mission", np.str_("go")),
            ("image", np.zeros((2, 2, 3), dtype=np.int64)),
        ]
    )
    plain = plain_observation(space, raw)
    assert type(plain) is dict
    assert list(plain) == ["image", "mission", "nested"]
    assert plain["image"].dtype == np.uint8
    assert type(plain["mission"]) is str
    number, binary, inner = plain["nested"]
    assert type(number) is int
    assert binary.dtype == np.int8
    assert type(inner) is dict
    assert inner["md"].dtype == MULTI_DISCRETE.dtype
    assert space.contains(plain)
