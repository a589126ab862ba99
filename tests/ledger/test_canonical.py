"""Canonical JSON: what it refuses, and the EncodedEvent the Event log trusts without re-parsing."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json, is_canonical, parse_canonical
from evoledger.ledger.errors import EncodingError
from evoledger.ledger.log import check_batch
from evoledger.ledger.records import EncodedEvent, PendingEvent
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
    """Why the log may skip re-checking an EncodedEvent: its payload came out of canonical_json."""
    try:
        data = canonical_json(value)
    except EncodingError:
        with pytest.raises(EncodingError):
            PendingEvent.encode("x", 1, "public", value)
        return
    assert _exactly_canonical(data)
    assert is_canonical(data)
    check_batch([PendingEvent("x", 1, "public", data)])  # the full check agrees
    assert PendingEvent.encode("x", 1, "public", value).payload == data


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


def test_an_encoded_event_cannot_be_built_or_changed_to_hold_other_bytes() -> None:
    encoded = PendingEvent.encode("x", 1, "public", {"b": 1, "a": [1.5, None]})
    assert type(encoded) is EncodedEvent
    assert encoded == PendingEvent("x", 1, "public", b'{"a":[1.5,null],"b":1}')  # equal to the plain event
    assert hash(encoded) == hash(PendingEvent("x", 1, "public", b'{"a":[1.5,null],"b":1}'))
    assert EncodedEvent("x", 1, "public", b"[1,2]").payload == b"[1,2]"  # built directly: checked, and fine
    for bad in (b'{"a": 1}', b'{"b":1,"a":2}', b"[1]\n", b"1.0e3", b"{", "{}"):
        with pytest.raises(EncodingError, match="not canonical JSON"):
            EncodedEvent("x", 1, "public", bad)  # type: ignore[arg-type]
        with pytest.raises(EncodingError, match="not canonical JSON"):
            dataclasses.replace(encoded, payload=bad)  # type: ignore[arg-type]  # a str among the bad values
    with pytest.raises(dataclasses.FrozenInstanceError):
        encoded.payload = b"{}"  # type: ignore[misc]
    assert dataclasses.replace(encoded, kind="y").kind == "y"


def test_is_canonical() -> None:
    assert is_canonical(b'{"a":1}')
    assert is_canonical(b"123456789012345678901234567890")  # beyond 64 bits: still JSON
    for bad in (b'{"a": 1}', b"[1] ", b"\xff", b"", b"NaN", "{}", None):
        assert not is_canonical(bad)


def test_plain_payloads_are_checked_in_full_and_encoded_ones_are_not_reparsed() -> None:
    encoded = PendingEvent.encode("x", 1, "public", {"a": 1})
    plain = PendingEvent("x", 1, "public", encoded.payload)
    assert check_batch([encoded, plain]) == [encoded, plain]
    with pytest.raises(EncodingError, match="not canonical"):
        check_batch([encoded, PendingEvent("x", 1, "public", b'{"a": 1}')])


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
