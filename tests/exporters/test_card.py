"""The dataset card: YAML that parses back to what was meant, and features that match ``datasets``."""

from __future__ import annotations

from typing import Any

import pytest
from evoledger.exporters.card import yaml_block
from evoledger.exporters.schema import episodes_schema, features_yaml, messages_schema, steps_schema, submissions_schema
from evoledger.exporters.spaces import ValueEncoding
from evoledger.ledger.errors import EncodingError
from hypothesis import given, settings
from hypothesis import strategies as st

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=5))
def test_yaml_block_parses_back_to_the_value(value: dict[str, Any]) -> None:
    yaml = pytest.importorskip("yaml")
    text = "\n".join(yaml_block(value)) + "\n"
    assert yaml.safe_load(text) == (value or None)


def test_yaml_block_refuses_non_finite_numbers_and_unknown_types() -> None:
    with pytest.raises(EncodingError, match="non-finite"):
        yaml_block({"x": float("nan")})
    with pytest.raises(EncodingError, match="cannot write a set"):
        yaml_block({"x": {1, 2}})


@pytest.mark.parametrize(
    "schema",
    [
        steps_schema(ValueEncoding("float", (4,)), ValueEncoding("int")),
        steps_schema(ValueEncoding("float", (2, 3), 64), ValueEncoding("int", (2,))),
        steps_schema(ValueEncoding("json"), ValueEncoding("json")),
        episodes_schema(),
        submissions_schema(),
        messages_schema(),
    ],
)
def test_features_match_what_datasets_derives(schema: Any) -> None:
    datasets = pytest.importorskip("datasets")
    assert features_yaml(schema) == datasets.Features.from_arrow_schema(schema)._to_yaml_list()
