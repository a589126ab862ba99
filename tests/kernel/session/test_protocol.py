"""Frame bodies and request models: strict parsing, and every malformed request mapped to a rejection code."""

from __future__ import annotations

import json
import time
from typing import Any, get_args

import pytest
from evoledger.kernel.session.protocol import (
    MAX_FINISH_CANDIDATES,
    MAX_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_MESSAGE_CHARS,
    MAX_PROGRAM_CHARS,
    PROTOCOL,
    REJECTION_CODES,
    SESSION_MAX_FRAME,
    TRANSPORT_CODES,
    FinishRequest,
    HostRejection,
    MalformedRequest,
    Rejection,
    RejectionCode,
    SessionUnavailable,
    StatusRequest,
    SubmitRequest,
    decode_request,
    decode_response,
    encode_frame,
    frame_length,
)
from evoledger.kernel.session.selectors import MAX_SELECTOR_LENGTH
from evoledger.ledger.errors import EncodingError, EvoLedgerError, InputError


def _body(**overrides: Any) -> bytes:
    request: dict[str, Any] = {"protocol": PROTOCOL, "id": "r1", "method": "status", "params": {}}
    request.update(overrides)
    return json.dumps(request).encode()


def test_every_rejection_code_is_documented() -> None:
    assert set(REJECTION_CODES) == set(get_args(RejectionCode))
    assert set(REJECTION_CODES) >= TRANSPORT_CODES
    assert all(text.endswith(".") and "\n" not in text for text in REJECTION_CODES.values())


def test_valid_requests_decode_to_their_models() -> None:
    submit = decode_request(_body(method="submit", params={"program": "program", "episodes": "0:2"}))
    assert isinstance(submit, SubmitRequest)
    assert submit.params.program == "program"
    finish = decode_request(_body(method="finish", params={"candidates": ["a", "b"]}))
    assert isinstance(finish, FinishRequest)
    assert finish.params.candidates == ["a", "b"]
    assert isinstance(decode_request(_body()), StatusRequest)
    # whitespace and key order do not matter on the way in
    assert isinstance(
        decode_request(b' { "params" : {} , "method":"status","id":"x","protocol":"%s"} ' % PROTOCOL.encode()),
        StatusRequest,
    )


def _rejected(body: bytes) -> MalformedRequest:
    with pytest.raises(MalformedRequest) as info:
        decode_request(body)
    return info.value


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'"status"', "JSON object"),
        (_body(id=10**30), "int64"),
        (_body(id="x" * 10_000), "at most 128"),
        (_body(params={"x": 2**63}), "int64"),
        (b'{"protocol": "%s", "id": "1", "method": "status", "params": {"x": NaN}}' % PROTOCOL.encode(), "NaN"),
        (
            b'{"protocol": "%s", "id": "1", "method": "status", "params": {"x": -Infinity}}' % PROTOCOL.encode(),
            "Infinity",
        ),
        (b'{"protocol": "%s", "id": "1", "method": "status", "params": {"x": 1e999}}' % PROTOCOL.encode(), "infinity"),
        (_body(params={"x": json.loads("[" * 40 + "]" * 40)}), "nested deeper"),
        (b'{"params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper"),
        (
            b'{"protocol": "%s", "id": "1", "id": "2", "method": "status", "params": {}}' % PROTOCOL.encode(),
            "duplicate object key 'id'",
        ),
        (b'{"protocol": "%s", "id": "\\ud800", "method": "status", "params": {}}' % PROTOCOL.encode(), "surrogate"),
        (_body(method="explode"), "unknown method 'explode'"),
        (_body(method=None), "unknown method None"),
        (_body(extra=1), "extra"),
        (_body(params={"verbose": True}), "params.verbose"),
        (_body(method="submit", params={"program": "p"}), "params.episodes: Field required"),
        (_body(method="submit", params={"program": 5, "episodes": "0"}), "params.program"),
        (_body(method="submit", params={"program": "", "episodes": "0"}), "params.program"),
        (_body(method="finish", params={"candidates": []}), "params.candidates"),
        (_body(method="finish", params={"candidates": "a"}), "params.candidates"),
        (json.dumps({"protocol": PROTOCOL, "method": "status", "params": {}}).encode(), "id: Field required"),
        (json.dumps({"protocol": PROTOCOL, "id": "1", "method": "status"}).encode(), "params: Field required"),
        (json.dumps({"id": "1", "method": "status", "params": {}}).encode(), "missing key 'protocol'"),
    ],
)
def test_malformed_requests_are_invalid_request(body: bytes, needle: str) -> None:
    error = _rejected(body)
    assert error.code == "invalid_request"
    assert needle in error.message
    assert error.retryable is False


def test_the_request_id_is_kept_when_readable() -> None:
    assert _rejected(_body(method="explode")).request_id == "r1"
    assert _rejected(_body(id=7, method="explode")).request_id is None
    assert _rejected(b"{nope").request_id is None


@pytest.mark.parametrize("protocol", ["evoledger.session/2", "other", 1, None])
def test_a_different_protocol_is_protocol_mismatch(protocol: object) -> None:
    error = _rejected(_body(protocol=protocol))
    assert error.code == "protocol_mismatch"
    assert PROTOCOL in error.message
    assert error.request_id == "r1"


def test_frame_length_refuses_empty_and_oversize_frames() -> None:
    assert frame_length((100).to_bytes(4, "big"), SESSION_MAX_FRAME) == 100
    assert frame_length(SESSION_MAX_FRAME.to_bytes(4, "big"), SESSION_MAX_FRAME) == SESSION_MAX_FRAME
    with pytest.raises(MalformedRequest, match="exceeds the limit"):
        frame_length((SESSION_MAX_FRAME + 1).to_bytes(4, "big"), SESSION_MAX_FRAME)
    with pytest.raises(MalformedRequest, match="length prefix is 0"):
        frame_length(bytes(4), SESSION_MAX_FRAME)


def test_encode_frame_is_length_prefixed_canonical_json() -> None:
    data = encode_frame({"b": 1, "a": "é"})
    assert data[:4] == (len(data) - 4).to_bytes(4, "big")
    assert data[4:] == '{"a":"é","b":1}'.encode()
    with pytest.raises(EncodingError):
        encode_frame({"x": float("nan")})


def test_rejection_carries_code_message_and_retryable() -> None:
    rejection = Rejection("budget_exhausted", "3 units left, 4 requested", retryable=True)
    assert (rejection.code, rejection.message, rejection.retryable) == (
        "budget_exhausted",
        "3 units left, 4 requested",
        True,
    )
    assert rejection.body()._asdict() == {
        "code": "budget_exhausted",
        "message": "3 units left, 4 requested",
        "retryable": True,
    }
    assert isinstance(rejection, EvoLedgerError)
    assert HostRejection("session_closed", "over").exit_code == 1
    with pytest.raises(InputError, match="unknown rejection code 'nope'"):
        Rejection("nope", "x")  # type: ignore[arg-type]
    assert issubclass(SessionUnavailable, InputError)
    assert SessionUnavailable("x").exit_code == 2


def test_decode_response() -> None:
    ok = decode_response(json.dumps({"protocol": PROTOCOL, "id": "1", "ok": True, "result": {"a": 1}}).encode())
    assert ok.ok
    assert ok.result == {"a": 1}
    error = {"code": "session_closed", "message": "over", "retryable": False}
    failed = decode_response(json.dumps({"protocol": PROTOCOL, "id": None, "ok": False, "error": error}).encode())
    assert not failed.ok
    assert failed.error.code == "session_closed"
    for bad, needle in [
        (b"nope", "unreadable"),
        (json.dumps({"protocol": "x/9", "id": "1", "ok": True, "result": {}}).encode(), "x/9"),
        (json.dumps({"protocol": PROTOCOL, "id": "1", "ok": True}).encode(), "malformed"),
        (
            json.dumps({"protocol": PROTOCOL, "id": "1", "ok": False, "error": {**error, "code": "??"}}).encode(),
            "malformed",
        ),
    ]:
        with pytest.raises(SessionUnavailable, match=needle):
            decode_response(bad)


def test_depth_limit_is_exact() -> None:
    nested: Any = {}
    for _ in range(MAX_JSON_DEPTH - 2):  # the request object and params already use two levels
        nested = {"x": nested}
    decode_error = _rejected(_body(params={"x": nested}))  # one level too deep for params to be valid anyway
    assert "nested deeper" in decode_error.message
    within: Any = {}
    for _ in range(MAX_JSON_DEPTH - 3):
        within = {"x": within}
    assert "params.x" in _rejected(_body(params={"x": within})).message  # parsed fine, then refused as extra key


# -- bounds: every field is bounded and checked before any work --------------------------------------------


def _submit(program: str = "program", episodes: str = "0:2") -> bytes:
    return _body(method="submit", params={"program": program, "episodes": episodes})


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_submit(program="p" * (MAX_PROGRAM_CHARS + 1)), f"at most {MAX_PROGRAM_CHARS} characters"),
        (_submit(episodes="0," * 400_000 + "1"), f"at most {MAX_SELECTOR_LENGTH} characters"),
        (
            _body(method="finish", params={"candidates": ["submission-000001"] * 50_000}),
            f"at most {MAX_FINISH_CANDIDATES} items",
        ),
        (_body(method="finish", params={"candidates": ["x" * (MAX_ID_CHARS + 1)]}), f"at most {MAX_ID_CHARS}"),
    ],
)
def test_every_field_is_bounded_before_any_work(body: bytes, needle: str) -> None:
    began = time.monotonic()
    error = _rejected(body)
    assert error.code == "invalid_request"
    assert needle in error.message
    assert len(error.message) <= MAX_MESSAGE_CHARS
    assert time.monotonic() - began < 10  # linear: a megabyte request is refused in milliseconds


@pytest.mark.parametrize("char", ["\x00", "\n", "\t", "\r", "\x1b", "\x7f", "\x85", "\x9f"])
def test_a_control_character_in_the_program_path_is_named(char: str) -> None:
    error = _rejected(_submit(program=f"prog{char}ram"))
    assert error.code == "invalid_request"
    assert f"control character U+{ord(char):04X} at position 4" in error.message
    assert "params.program" in error.message


def test_the_bounds_themselves_are_accepted() -> None:
    request = decode_request(
        _submit(program="é" * MAX_PROGRAM_CHARS, episodes="0:2," + "9" * (MAX_SELECTOR_LENGTH - 4))
    )
    assert isinstance(request, SubmitRequest)
    finish = decode_request(_body(method="finish", params={"candidates": ["c" * MAX_ID_CHARS] * MAX_FINISH_CANDIDATES}))
    assert isinstance(finish, FinishRequest)


def test_a_long_rejection_message_is_cut_and_says_so() -> None:
    rejection = Rejection("unknown_submission", "x" * 100_000)
    assert len(rejection.message) <= MAX_MESSAGE_CHARS
    assert rejection.message.endswith("more characters)")
    assert len(rejection.body().message) <= MAX_MESSAGE_CHARS
