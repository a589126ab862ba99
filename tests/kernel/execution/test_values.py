"""The wire encoding (exact round trips, hostile input refused) and the canonical JSON form of values."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.execution import decode_wire, encode_wire, to_json_value
from evoledger.kernel.execution.values import MAX_WIRE_DEPTH
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = [np.float32, np.float64, np.int8, np.int64, np.uint8, np.uint32, np.bool_]

arrays = st.sampled_from(DTYPES).flatmap(
    lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.binary(max_size=20),
    st.sampled_from(DTYPES).flatmap(lambda dtype: hnp.from_dtype(np.dtype(dtype)).map(lambda v: dtype(v))),
)
values = st.recursive(
    st.one_of(scalars, arrays),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(-5, 5)), inner, max_size=4),
    ),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return bool(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())
    if isinstance(a, np.generic):
        return bool(a.dtype == b.dtype and a.tobytes() == b.tobytes())
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=100, deadline=None)
@given(values)
def test_wire_round_trips_types_dtypes_and_shapes_exactly(value: Any) -> None:
    assert _same(decode_wire(encode_wire(value)), value)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_encoding_error(data: bytes) -> None:
    with contextlib.suppress(EncodingError):
        decode_wire(data)


def test_decoded_arrays_are_writable_copies() -> None:
    array = decode_wire(encode_wire(np.arange(4, dtype=np.float32)))
    array += 1
    assert array.tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "truncated"),
        (b"z", "unknown wire tag"),
        (b"i\x00", "truncated"),
        (b"n\x00", "trailing bytes"),
        (b"l\xff\xff\xff\x7f", "claims"),
        (b"a\x03|O8\x01" + (1).to_bytes(8, "little"), "not a bool/integer/float dtype"),
        (b"a\x03<f4\x01" + (2**40).to_bytes(8, "little"), "needs"),
        (b"I\x02\x00\x00\x00ab", "not a decimal"),
        (b"m\x01\x00\x00\x00nn", "only str and int keys"),
        (b"l\x01\x00\x00\x00" * (MAX_WIRE_DEPTH + 2) + b"n", "deeper"),
    ],
)
def test_hostile_wire_input_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(EncodingError, match=message):
        decode_wire(data)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (object(), "cannot be sent"),
        (np.array(["a"]), "dtype <U1 cannot be sent"),
        (np.array([1 + 2j]), "cannot be sent"),
        ({(1, 2): 3}, "only str and int keys"),
        ([[[[]]]] * 1, None),
    ],
)
def test_unsendable_values_raise_encoding_error(value: Any, message: str | None) -> None:
    if message is None:
        assert decode_wire(encode_wire(value)) == value
        return
    with pytest.raises(EncodingError, match=message):
        encode_wire(value)


def test_array_likes_are_sent_as_arrays() -> None:
    class ArrayLike:
        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return np.array([1, 2], dtype=np.int16)

    decoded = decode_wire(encode_wire(ArrayLike()))
    assert decoded.dtype == np.int16
    assert decoded.tolist() == [1, 2]


def test_json_form_is_canonical_and_uses_null_for_non_finite_floats() -> None:
    value = {
        "box": np.array([[0.5, np.nan], [np.inf, -1.0]], dtype=np.float32),
        "n": np.int64(3),
        "flag": np.bool_(True),
        "pair": (1, 2.0),
        "x": -math.inf,
    }
    converted = to_json_value(value)
    assert converted == {"box": [[0.5, None], [None, -1.0]], "n": 3, "flag": True, "pair": [1, 2.0], "x": None}
    assert type(converted["flag"]) is bool
    assert type(converted["n"]) is int
    canonical_json(converted)  # accepted by the ledger's canonical encoding


def test_float32_values_are_recorded_exactly() -> None:
    assert to_json_value(np.float32(0.1)) == float(np.float32(0.1)) == 0.10000000149011612


@pytest.mark.parametrize("value", [b"bytes", {1: 2}, np.array([1j]), object(), np.datetime64("2020-01-01")])
def test_unrecordable_values_raise_encoding_error(value: Any) -> None:
    with pytest.raises(EncodingError):
        to_json_value(value)
