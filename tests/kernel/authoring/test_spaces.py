"""describe_space: JSON descriptions of gymnasium spaces, including language missions (Text) and large Boxes."""

from __future__ import annotations

import numpy as np
import pytest
from evoledger.kernel.authoring import describe_space
from evoledger.kernel.authoring.spaces import COMPACT_BOX_SIZE
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from gymnasium import spaces


def test_a_text_space_is_described_by_its_lengths_and_sorted_charset() -> None:
    described = describe_space(spaces.Text(max_length=12, min_length=0, charset="cba "))
    assert described == {"type": "Text", "min_length": 0, "max_length": 12, "charset": " abc"}
    canonical_json(described)  # canonical-JSON safe


def test_a_dict_with_an_image_and_a_mission_is_described_recursively() -> None:
    space = spaces.Dict(
        {"image": spaces.Box(0, 255, (2, 2, 3), dtype=np.uint8), "mission": spaces.Text(max_length=5, charset="ab")}
    )
    described = describe_space(space)
    assert described["spaces"]["image"]["dtype"] == "uint8"
    assert described["spaces"]["mission"]["type"] == "Text"


def test_an_unknown_space_is_refused_with_the_supported_list() -> None:
    class Custom(spaces.Space[int]):
        pass

    with pytest.raises(InputError, match="Text"):
        describe_space(Custom())


def test_a_large_box_with_uniform_bounds_is_described_by_one_value_per_bound() -> None:
    described = describe_space(spaces.Box(0, 255, (96, 96, 3), dtype=np.uint8))
    assert described == {"type": "Box", "shape": [96, 96, 3], "dtype": "uint8", "low": 0, "high": 255}
    unbounded = describe_space(spaces.Box(-np.inf, np.inf, (COMPACT_BOX_SIZE + 1,), dtype=np.float64))
    assert (unbounded["low"], unbounded["high"]) == (None, None)
    assert len(canonical_json(describe_space(spaces.Box(0.0, 1.0, (64, 64, 3), dtype=np.float32)))) < 200


def test_small_or_varied_boxes_still_list_every_bound() -> None:
    small = describe_space(spaces.Box(-np.inf, np.inf, (COMPACT_BOX_SIZE,), dtype=np.float32))
    assert small["low"] == [None] * COMPACT_BOX_SIZE  # what every Benchmark described before recorded
    varied = np.zeros(COMPACT_BOX_SIZE + 1)
    varied[-1] = 1.0
    described = describe_space(spaces.Box(low=varied, high=2.0, dtype=np.float64))
    assert described["low"] == varied.tolist()
    assert described["high"] == 2.0


def test_a_multi_discrete_start_is_described_only_when_it_is_not_zero() -> None:
    assert describe_space(spaces.MultiDiscrete([3, 4])) == {"type": "MultiDiscrete", "nvec": [3, 4], "shape": [2]}
    assert describe_space(spaces.MultiDiscrete([3, 4], start=[1, -1]))["start"] == [1, -1]


def test_the_minari_exporter_rebuilds_a_compactly_described_box() -> None:
    from evoledger.exporters.minari_export import gym_space

    for space in (spaces.Box(0, 255, (96, 96, 3), dtype=np.uint8), spaces.Box(-np.inf, 1.0, (2, 50), dtype=np.float32)):
        rebuilt = gym_space(describe_space(space))
        assert rebuilt == space
