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


def _box(shape: list[int], low: Any = 0, high: Any = 255, dtype: str = "uint8") -> dict[str, Any]:
    def fill(value: Any) -> Any:
        return np.full(shape, value).tolist()

    return {"type": "Box", "shape": shape, "dtype": dtype, "low": fill(low), "high": fill(high)}


@pytest.mark.parametrize(
    ("space", "label"),
    [
        (_box([32, 40, 3]), "image[32][40][3]"),
        (_box([64, 64]), "image[64][64]"),
        (_box([32, 32, 4]), "image[32][32][4]"),
        (_box([7, 7, 3]), "int64[7][7][3]"),  # a MiniGrid grid: small integers, not a picture
        (_box([32, 32, 3], high=10), "int64[32][32][3]"),
        (_box([32, 32, 2]), "int64[32][32][2]"),
        (_box([32, 32, 3], dtype="float32"), "float32[32][32][3]"),
        ({"type": "Text", "min_length": 1, "max_length": 20, "charset": "ab"}, "string"),
        (
            {"type": "Dict", "spaces": {"a": {"type": "Discrete", "n": 2}, "m": {"type": "Text", "max_length": 3}}},
            "{a: int64, m: string}",
        ),
        ({"type": "Dict", "spaces": {"t": {"type": "Tuple", "spaces": []}}}, "{t: json}"),
    ],
)
def test_encoding_for_images_text_and_dicts(space: dict[str, Any], label: str) -> None:
    assert encoding_for(space).label() == label


def test_an_image_column_is_a_lossless_png_image_feature() -> None:
    from io import BytesIO

    from PIL import Image

    encoding = encoding_for(_box([32, 40, 3]))
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (3, 32, 40, 3), dtype=np.uint8)
    column = to_arrow(encode_values(list(images), encoding), encoding, mask=np.array([False, False, True]))
    assert column.type == pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])
    rows = column.to_pylist()
    assert rows[2] is None
    for image, row in zip(images[:2], rows[:2], strict=True):
        assert np.array_equal(np.asarray(Image.open(BytesIO(row["bytes"]))), image)
    with pytest.raises(SchemaError, match="shape"):
        encode_values([np.zeros((32, 40), dtype=np.uint8)], encoding)
    with pytest.raises(SchemaError, match="uint8 image"):
        encode_values([np.full((32, 40, 3), 300)], encoding)


def test_a_dict_column_is_a_struct_from_rows_or_stacked_columns() -> None:
    from evoledger.ledger.trajectories import Trajectory, decode_trajectory, encode_trajectory

    space = {
        "type": "Dict",
        "spaces": {
            "image": _box([32, 32, 3]),
            "direction": {"type": "Discrete", "n": 4},
            "mission": {"type": "Text", "max_length": 10},
        },
    }
    encoding = encoding_for(space)
    rows = [{"image": np.full((32, 32, 3), t, dtype=np.uint8), "direction": t, "mission": f"go {t}"} for t in range(3)]
    stacked = decode_trajectory(encode_trajectory(Trajectory(rows, [0, 0], [0.0, 0.0], True, False))).observations
    for values in (rows, stacked):
        column = to_arrow(encode_values(values, encoding), encoding, mask=np.array([False, True, False]))
        assert column.type == encoding.arrow_type
        exported = column.to_pylist()
        assert exported[1] is None
        assert [r["direction"] for r in (exported[0], exported[2])] == [0, 2]
        assert [r["mission"] for r in (exported[0], exported[2])] == ["go 0", "go 2"]
    with pytest.raises(SchemaError, match="without the key 'mission'"):
        encode_values([{"image": rows[0]["image"], "direction": 1}], encoding)
    with pytest.raises(SchemaError, match="not text"):
        encode_values([{**rows[0], "mission": 3}], encoding)
