"""Space descriptions -> column encodings, and values -> Arrow columns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from evoledger.exporters.spaces import ValueEncoding, encode_values, encoding_for, to_arrow
from evoledger.ledger.errors import SchemaError
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("space", "label"),
    [
        ({"type": "Discrete", "n": 2, "start": 0}, "int64"),
        ({"type": "Box", "shape": [4], "dtype": "float32"}, "float32[4]"),
        ({"type": "Box", "shape": [4], "dtype": "float16"}, "float32[4]"),
        ({"type": "Box", "shape": [3, 2], "dtype": "float64"}, "float64[3][2]"),
        ({"type": "Box", "shape": [], "dtype": "float32"}, "float32"),
        ({"type": "Box", "shape": [2], "dtype": "int8"}, "int64[2]"),
        ({"type": "Box", "shape": [2], "dtype": "bool"}, "json"),
        ({"type": "Box", "shape": "4", "dtype": "float32"}, "json"),
        ({"type": "MultiDiscrete", "nvec": [2, 3], "shape": [2]}, "int64[2]"),
        ({"type": "MultiBinary", "n": [2, 2]}, "int64[2][2]"),
        ({"type": "Tuple", "spaces": []}, "json"),
        ({"type": "Dict", "spaces": {}}, "json"),
        ({"type": "Text"}, "json"),
        (None, "json"),
    ],
)
def test_encoding_for(space: dict[str, Any] | None, label: str) -> None:
    encoding = encoding_for(space)
    assert encoding.label() == label
    assert encoding.typed == (label != "json")
    assert encoding.typed or encoding.reason


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ([[1.0, 2.0], [1.0]], "uneven shape"),
        ([[1.0, 2.0, 3.0]], r"shape \[3\], but the space declares \[2\]"),
        ([["a", "b"]], "type <U1 where the space declares numbers"),
        ([[None, 1.0]], "type object"),
    ],
)
def test_float_values_that_do_not_fit(values: list[Any], problem: str) -> None:
    with pytest.raises(SchemaError, match=problem):
        encode_values(values, ValueEncoding("float", (2,)))


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ([1.5], "float64 where the space declares integers"),
        ([2**64], "object where the space declares integers"),
        ([2**63], "uint64 where"),
    ],
)
def test_int_values_that_do_not_fit(values: list[Any], problem: str) -> None:
    with pytest.raises(SchemaError, match=problem):
        encode_values(values, ValueEncoding("int"))


def test_float32_columns_keep_float32_values_exactly() -> None:
    values = [[float(np.float32(0.1)), -1.0], [3.5, float(np.float32(1e-3))]]
    column = to_arrow(encode_values(values, ValueEncoding("float", (2,))), ValueEncoding("float", (2,)))
    assert column.type == pa.list_(pa.float32(), 2)
    assert column.to_pylist() == values


def test_mask_marks_null_rows() -> None:
    encoding = ValueEncoding("float", (2,))
    chunk = encode_values([[1.0, 2.0], [3.0, 4.0]], encoding)
    column = to_arrow(chunk, encoding, mask=np.array([False, True]))
    assert column.to_pylist() == [[1.0, 2.0], None]
    scalar = to_arrow(encode_values([1, 2], ValueEncoding("int")), ValueEncoding("int"), mask=np.array([True, False]))
    assert scalar.to_pylist() == [None, 2]


def test_empty_values() -> None:
    encoding = ValueEncoding("int", (3,))
    column = to_arrow(encode_values([], encoding), encoding)
    assert len(column) == 0
    assert column.type == pa.list_(pa.int64(), 3)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    rows=st.integers(0, 4),
    data=st.data(),
)
def test_nested_int_columns_round_trip(shape: list[int], rows: int, data: st.DataObject) -> None:
    encoding = ValueEncoding("int", tuple(shape))
    flat = data.draw(
        st.lists(st.integers(-(2**62), 2**62), min_size=rows * int(np.prod(shape)), max_size=rows * int(np.prod(shape)))
    )
    values = np.asarray(flat, dtype=np.int64).reshape((rows, *shape)).tolist()
    column = to_arrow(encode_values(values, encoding), encoding)
    assert column.type == encoding.arrow_type
    assert column.to_pylist() == values


@settings(max_examples=60, deadline=None)
@given(st.lists(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c, max_size=3))))
def test_json_columns_hold_json_text(values: list[Any]) -> None:
    import json

    column = to_arrow(encode_values(values, ValueEncoding("json")), ValueEncoding("json"))
    assert [json.loads(v) for v in column.to_pylist()] == values
