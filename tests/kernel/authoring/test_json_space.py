"""JsonSpace: JSON-like values checked strictly against a schema, described verbatim, sampled, probed."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.ahc058 import AppleEnvironment, make_ahc058
from evoledger.benchmarks.contest_benchmark import ContestBenchmark
from evoledger.kernel.authoring import JsonSpace, check_benchmark, describe_space
from evoledger.kernel.execution.action_wire import decode_action, encode_action
from evoledger.ledger.errors import InputError

PAIR = {"type": "array", "prefixItems": [{"type": "integer", "minimum": 0, "maximum": 9}] * 2}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "bonds": {"type": "array", "items": PAIR, "maxItems": 3},
        "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 4}]},
        "weight": {"type": "number", "minimum": -1.5, "maximum": 2},
        "flag": {"type": "boolean"},
        "grid": {"type": "ndarray", "dtype": "float64", "shape": [2, 2], "minimum": 0, "maximum": 1},
    },
}


def _value(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "bonds": [[0, 9], (3, 4)],
        "note": None,
        "weight": 2,
        "flag": True,
        "grid": np.zeros((2, 2)),
    }
    value.update(changes)
    return value


def test_contains_accepts_exactly_the_schema_values() -> None:
    space = JsonSpace(SCHEMA)
    assert space.contains(_value())
    assert space.contains(_value(bonds=[], note="abcd", weight=np.float32(-1.5), flag=np.bool_(False)))
    assert space.contains(_value(bonds=[[np.int64(1), 2]]))


@pytest.mark.parametrize(
    "value",
    [
        _value(bonds=[[0, 10]]),  # above the maximum
        _value(bonds=[[0, -1]]),  # below the minimum
        _value(bonds=[[True, 1]]),  # a bool is no integer
        _value(bonds=[[0.0, 1]]),  # a float is no integer
        _value(bonds=[[0, 1, 2]]),  # a pair has two items
        _value(bonds=[[0, 1]] * 4),  # maxItems
        _value(bonds={0: 1}),  # a dict is no array
        _value(note="abcde"),  # maxLength
        _value(note=b"ab"),  # bytes are no string
        _value(weight=float("nan")),
        _value(weight=float("inf")),
        _value(weight=2.5),
        _value(weight=True),
        _value(flag=1),
        _value(grid=np.zeros((2, 2), dtype=np.float32)),  # another dtype
        _value(grid=np.zeros((4,))),  # another shape
        _value(grid=[[0.0, 0.0], [0.0, 0.0]]),  # a list is no ndarray
        _value(grid=np.full((2, 2), np.nan)),
        _value(grid=np.full((2, 2), 1.5)),
        {**_value(), "extra": 1},  # no extra keys
        {k: v for k, v in _value().items() if k != "flag"},  # no missing keys
        {1, 2},
        object(),
        None,
    ],
)
def test_contains_refuses_anything_else(value: Any) -> None:
    assert not JsonSpace(SCHEMA).contains(value)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "tuple"}, "'type' must be one of"),
        ({"type": "integer", "minimum": 0.5}, "finite integer"),
        ({"type": "array", "items": {"type": "null"}}, "needs 'maxItems'"),
        ({"type": "array", "items": {"type": "null"}, "prefixItems": [], "maxItems": 1}, "exactly one of"),
        ({"type": "object", "properties": {"a": {"type": "null"}}, "required": ["a"]}, "unknown keywords"),
        ({"type": "string"}, "needs 'maxLength'"),
        ({"anyOf": []}, "non-empty list"),
        ({"type": "ndarray", "dtype": "complex128", "shape": [2]}, "'dtype' must be one of"),
        ([], "a schema is a dict"),
    ],
)
def test_unsupported_schemas_are_refused_when_the_space_is_built(schema: Any, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        JsonSpace(schema)


def test_describe_space_records_the_schema_verbatim() -> None:
    assert describe_space(JsonSpace(SCHEMA)) == {"type": "Json", "schema": SCHEMA}


def test_samples_are_in_the_space_and_reproducible_from_the_seed() -> None:
    first, second = JsonSpace(SCHEMA, seed=3), JsonSpace(SCHEMA, seed=3)
    samples = [first.sample() for _ in range(50)]
    assert all(first.contains(s) for s in samples)
    again = [second.sample() for _ in range(50)]
    assert [s["bonds"] for s in samples] == [s["bonds"] for s in again]
    assert {s["note"] is None for s in samples} == {True, False}  # both anyOf options are drawn


def test_invalid_examples_lie_outside_the_space() -> None:
    space = JsonSpace(SCHEMA)
    examples = space.invalid_examples()
    assert len(examples) >= 5
    assert not any(space.contains(value) for _, value in examples)
    assert any("extra key" in description for description, _ in examples)


def test_the_space_pickles_and_compares_by_schema() -> None:
    space = JsonSpace(SCHEMA)
    assert pickle.loads(pickle.dumps(space)) == space
    assert space != JsonSpace({"type": "null"})
    assert hash(space) == hash(JsonSpace(dict(SCHEMA)))


def test_json_values_cross_the_action_wire_unchanged() -> None:
    action = {"bonds": [[0, 9], [3, 4]], "note": None, "weight": 0.5, "flag": False}
    assert decode_action(encode_action(action)) == action
    assert decode_action(encode_action({"upgrade": (3, 9)})) == {"upgrade": (3, 9)}


class _SloppyEnvironment(AppleEnvironment):
    def legal_action(self, rng: np.random.Generator) -> Any:
        return {"upgrade": [9, 9]}  # outside the action space


def test_the_checker_plays_legal_actions_and_flags_one_outside_the_space() -> None:
    report = check_benchmark(make_ahc058(), episodes=1)
    assert report.ok, report.summary()
    assert report.steps_checked == 500  # a whole game of legal random actions, never rejected

    broken = ContestBenchmark(dataclasses.replace(make_ahc058().contest, environment=_SloppyEnvironment))
    codes = {problem.code for problem in check_benchmark(broken, episodes=1).problems}
    assert "environment.protocol" in codes
