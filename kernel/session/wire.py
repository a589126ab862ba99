"""The client's side of the wire, in the standard library alone: the protocol version, where the Host is, replies.

``evoledger-session`` imports this module and not :mod:`~evoledger.kernel.session.protocol` (whose request
models need pydantic), so that one request costs little more than starting Python. A reply is read as strictly
as a pydantic model would read it: exactly the documented keys, exact types (no coercion), a known rejection code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, NamedTuple

from evoledger.kernel.session.frames import decode_body
from evoledger.kernel.session.rejections import REJECTION_CODES, ErrorBody, MalformedRequest, SessionUnavailable

__all__ = ["PROTOCOL", "SOCKET_ENV", "WORKSPACE_ENV", "ErrorResponse", "OkResponse", "decode_response"]

PROTOCOL: Final = "evoledger.session/1"
"""The protocol version every frame carries; a different value is answered with ``protocol_mismatch``."""

SOCKET_ENV: Final = "EVOLEDGER_SESSION_SOCKET"
"""Environment variable naming the Host's Unix socket (``runs/<name>/control/session.sock``)."""

WORKSPACE_ENV: Final = "EVOLEDGER_WORKSPACE"
"""Environment variable naming the Agent's workspace; submitted Program paths are relative to it."""


class OkResponse(NamedTuple):
    """A successful response: ``{"protocol", "id", "ok": true, "result": {...}}``."""

    protocol: str
    id: str | None
    result: dict[str, Any]
    ok: Literal[True] = True


class ErrorResponse(NamedTuple):
    """A refused request: ``{"protocol", "id", "ok": false, "error": {"code", "message", "retryable"}}``."""

    protocol: str
    id: str | None
    error: ErrorBody
    ok: Literal[False] = False


_OK_KEYS: Final = frozenset({"protocol", "id", "ok", "result"})
_ERROR_KEYS: Final = frozenset({"protocol", "id", "ok", "error"})
_ERROR_BODY_KEYS: Final = frozenset({"code", "message", "retryable"})


def _check_keys(value: Mapping[str, Any], expected: frozenset[str], where: str) -> list[str]:
    problems = [f"{where}{key}: Field required" for key in sorted(expected - value.keys())]
    problems += [f"{where}{key}: Extra inputs are not permitted" for key in sorted(value.keys() - expected)]
    return problems


def _error_body(value: Any) -> tuple[ErrorBody | None, list[str]]:
    if not isinstance(value, dict):
        return None, ["error: Input should be an object"]
    problems = _check_keys(value, _ERROR_BODY_KEYS, "error.")
    code, message, retryable = value.get("code"), value.get("message"), value.get("retryable")
    if "code" in value and code not in REJECTION_CODES:
        problems.append(f"error.code: Input should be one of the rejection codes, not {code!r}")
    if "message" in value and not isinstance(message, str):
        problems.append("error.message: Input should be a valid string")
    if "retryable" in value and not isinstance(retryable, bool):
        problems.append("error.retryable: Input should be a valid boolean")
    if problems:
        return None, problems
    return ErrorBody(code=value["code"], message=value["message"], retryable=value["retryable"]), []


def _malformed(problems: list[str]) -> SessionUnavailable:
    shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
    return SessionUnavailable(f"the Host sent a malformed reply: {shown}")


def decode_response(body: bytes) -> OkResponse | ErrorResponse:
    """Parse one response frame body (client side); anything but a well-formed reply is :class:`SessionUnavailable`."""
    try:
        data = decode_body(body)
    except MalformedRequest as exc:
        raise SessionUnavailable(f"the Host sent an unreadable reply: {exc.message}") from None
    if not isinstance(data, dict):
        raise _malformed([f"reply: Input should be an object, not {type(data).__name__}"])
    if "protocol" in data and data["protocol"] != PROTOCOL:
        raise SessionUnavailable(
            f"the Host speaks protocol {data['protocol']!r}, this client speaks {PROTOCOL!r}; "
            "use the evoledger-session that came with the Host"
        )
    ok = data.get("ok") is True
    problems = _check_keys(data, _OK_KEYS if ok else _ERROR_KEYS, "")
    request_id = data.get("id")
    if "id" in data and request_id is not None and not isinstance(request_id, str):
        problems.append("id: Input should be a valid string or null")
    if not ok and "ok" in data and data["ok"] is not False:
        problems.append("ok: Input should be true or false")
    if ok:
        result = data.get("result")
        if "result" in data and not isinstance(result, dict):
            problems.append("result: Input should be an object")
        if problems or not isinstance(result, dict):
            raise _malformed(problems)
        return OkResponse(protocol=PROTOCOL, id=request_id, result=result)
    error, error_problems = _error_body(data.get("error")) if "error" in data else (None, [])
    problems += error_problems
    if problems or error is None:
        raise _malformed(problems)
    return ErrorResponse(protocol=PROTOCOL, id=request_id, error=error)
