"""Canonical JSON: what it refuses, and the CanonicalJSON witness the Event log trusts without re-parsing."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from evoledger.ledger.canonical import CanonicalJSON, canonical_json, parse_canonical
from evoledger.ledger.errors import EncodingError
from evoledger.ledger.log import check_batch
from evoledger.ledger.records import PendingEvent
from hypothesis import given
from hypothesis import strategies as st

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64)  # beyond orjson's range: the slow key walk decides
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
# Keys are mostly strings; some are the other types the stdlib encoder would silently stringify.
_keys = st.text(max_size=4) | st.integers(-20, 20) | st.booleans() | st.none() | st.floats(allow_nan=False)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
        | st.dictionaries(_keys, inner, max_size=3)
    ),
    max_leaves=12,
)


def _exactly_canonical(data: bytes) -> bool:
    """The definition, spelled out slowly: parsing and re-encoding gives the same bytes."""
    return canonical_json(parse_canonical(data)) == data


@given(_values)
def test_whatever_canonical_json_returns_is_canonical(value: Any) -> None:
    """The witness is sound: the log may skip re-checking a CanonicalJSON payload because of this."""
    try:
        data = canonical_json(value)
    except EncodingError:
        return
    assert type(data) is CanonicalJSON
    assert _exactly_canonical(data)
    check_batch([PendingEvent("x", 1, "public", bytes(data))])  # the full check agrees


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({10: 1, 9: 2}, "dict key 10 is a int"),  # would sort as numbers: {"9":..,"10":..} is not canonical
        ({"a": [{True: 1}]}, "dict key True is a bool"),
        ({"a": {None: 1}}, "dict key None is a NoneType"),
        ({"big": 2**70, "nested": {1.5: 0}}, "dict key 1.5 is a float"),  # orjson fails first on 2**70
        ({1: "a", "1": "b"}, "dict keys must be strings"),  # mixed key types cannot even be sorted
        ({"s": "\ud800"}, "lone surrogate"),
        ({"x": float("nan")}, "NaN"),
        ({"x": b"bytes"}, "type bytes"),
    ],
)
def test_values_that_have_no_canonical_encoding_are_refused(value: object, message: str) -> None:
    with pytest.raises(EncodingError, match=message):
        canonical_json(value)


def test_string_subclass_keys_are_fine() -> None:
    class Name(str):
        pass

    assert canonical_json({Name("b"): 1, "a": 2}) == b'{"a":2,"b":1}'


def test_building_a_witness_from_bytes_checks_them() -> None:
    assert CanonicalJSON(b'{"a":1}') == b'{"a":1}'
    assert type(CanonicalJSON(b"[1,2]")) is CanonicalJSON
    witness = canonical_json([1])
    assert CanonicalJSON(witness) is witness
    for bad in (b'{"a": 1}', b'{"b":1,"a":2}', b"[1]\n", b"1.0e3"):
        with pytest.raises(EncodingError, match="not canonical"):
            CanonicalJSON(bad)
    with pytest.raises(EncodingError, match="not valid canonical JSON"):
        CanonicalJSON(b"{")
    with pytest.raises(EncodingError, match="takes bytes"):
        CanonicalJSON("{}")  # type: ignore[arg-type]


def test_changing_a_witness_gives_plain_bytes() -> None:
    data = canonical_json({"a": [1, 2]})
    for changed in (data[:-1], data + b" ", data.replace(b"1", b"3"), b"" + data, bytes(data)):
        assert type(changed) is bytes
    assert type(pickle.loads(pickle.dumps(data))) is CanonicalJSON


def test_plain_bytes_are_checked_in_full_and_witnesses_are_not_reparsed() -> None:
    good = canonical_json({"a": 1})
    batch = check_batch([PendingEvent("x", 1, "public", good), PendingEvent("x", 1, "public", bytes(good))])
    assert [e.payload for e in batch] == [good, good]
    with pytest.raises(EncodingError, match="not canonical"):
        check_batch([PendingEvent("x", 1, "public", good), PendingEvent("x", 1, "public", b'{"a": 1}')])


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (PendingEvent("x", True, "public", b"{}"), "non-negative int"),  # True == 1 and hashes like it
        (PendingEvent(["x"], 1, "public", b"{}"), "kind must be"),  # type: ignore[arg-type]
        (PendingEvent("x", 1, ["public"], b"{}"), "visibility"),  # type: ignore[arg-type]
    ],
)
def test_known_headers_do_not_let_lookalikes_through(event: PendingEvent, message: str) -> None:
    check_batch([PendingEvent("x", 1, "public", b"{}")])  # ("x", 1, "public") is now a known header
    with pytest.raises(Exception, match=message) as raised:
        check_batch([event])
    assert raised.type.__name__ == "InputError"
