"""describe_space: JSON descriptions of gymnasium spaces, including language missions (Text)."""

from __future__ import annotations

import pytest
from evoledger.kernel.authoring import describe_space
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from gymnasium import spaces


def test_a_text_space_is_described_by_its_lengths_and_sorted_charset() -> None:
    described = describe_space(spaces.Text(max_length=12, min_length=0, charset="cba "))
    assert described == {"type": "Text", "min_length": 0, "max_length": 12, "charset": " abc"}
    canonical_json(described)  # canonical-JSON safe


def test_a_dict_with_an_image_and_a_mission_is_described_recursively() -> None:
    space = spaces.Dict(
        {"image": spaces.Box(0, 255, (2, 2, 3), dtype="uint8"), "mission": spaces.Text(max_length=5, charset="ab")}
    )
    described = describe_space(space)
    assert described["spaces"]["image"]["dtype"] == "uint8"
    assert described["spaces"]["mission"]["type"] == "Text"


def test_an_unknown_space_is_refused_with_the_supported_list() -> None:
    class Custom(spaces.Space[int]):
        pass

    with pytest.raises(InputError, match="Text"):
        describe_space(Custom())
