"""The Session protocol: version, request and response models (frames and rejections re-exported).

The Agent talks to the Host only through ``evoledger-session``, which sends one request per frame over a
Unix socket and reads one response frame back.

**Frame**: a 4-byte big-endian unsigned length, then that many bytes of UTF-8 JSON (written as canonical
JSON; read leniently as far as whitespace goes, strictly otherwise). Frames longer than the receiver's
``max_frame`` (default :data:`SESSION_MAX_FRAME`) are refused from their header alone.

**Request**::

    {"protocol": "evoledger.session/1", "id": "<1-128 chars>", "method": "submit" | "finish" | "status",
     "params": {...}}

**Response**::

    {"protocol": ..., "id": ..., "ok": true, "result": {...}}
    {"protocol": ..., "id": ..., "ok": false, "error": {"code": ..., "message": ..., "retryable": false}}

``id`` echoes the request's id, or is ``null`` when the request was too broken to read one. The ``result`` of
each method is a model of :mod:`~evoledger.kernel.session.answers` (server side; the client reads plain JSON).

**Bounds.** Every field of a request is bounded, and checked here, by the listener, before the Host does any
work (a request outside them is answered ``invalid_request`` and never reaches the Host or its ledger):

==================== ==========================================================================================
frame body           at most ``max_frame`` bytes (default :data:`SESSION_MAX_FRAME`, 1 MiB), JSON nesting at most
                     :data:`MAX_JSON_DEPTH`, strict JSON (see :mod:`~evoledger.kernel.session.frames`)
``id``               1 to :data:`MAX_ID_CHARS` characters
``submit.program``   1 to :data:`MAX_PROGRAM_CHARS` characters, no control character (U+0000-U+001F,
                     U+007F-U+009F: NUL, newline, escape, ...)
``submit.episodes``  1 to :data:`~evoledger.kernel.session.selectors.MAX_SELECTOR_LENGTH` characters (the
                     selector grammar then bounds the Episodes it selects and their indices)
``finish.candidates`` 1 to :data:`MAX_FINISH_CANDIDATES` ids of 1 to :data:`MAX_ID_CHARS` characters each
``status``           no parameters
==================== ==========================================================================================

Every check is linear in the size of the request. The Host's own decisions (a rejection message quoting
what was asked) are bounded too: a message is at most :data:`MAX_MESSAGE_CHARS` characters, and what the
ledger keeps of a refused request is its digest and a short prefix (``ledger.events.request_summary``).

The body is read strictly (see :mod:`~evoledger.kernel.session.frames`); rejection codes and their
errors live in :mod:`~evoledger.kernel.session.rejections`; the protocol version, the environment variables
and the client's reading of replies live in :mod:`~evoledger.kernel.session.wire` (standard library only, so
``evoledger-session`` never imports pydantic). All are re-exported here.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, get_args

from evoledger.kernel.session.frames import (
    FRAME_HEADER,
    MAX_JSON_DEPTH,
    SESSION_MAX_FRAME,
    decode_body,
    encode_frame,
    frame_length,
)
from evoledger.kernel.session.rejections import (
    MAX_MESSAGE_CHARS,
    REJECTION_CODES,
    TRANSPORT_CODES,
    ErrorBody,
    HostRejection,
    MalformedRequest,
    Rejection,
    RejectionCode,
    SessionUnavailable,
)
from evoledger.kernel.session.selectors import MAX_SELECTOR_LENGTH
from evoledger.kernel.session.wire import (
    PROTOCOL,
    SOCKET_ENV,
    WORKSPACE_ENV,
    ErrorResponse,
    OkResponse,
    decode_response,
)
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "FRAME_HEADER",
    "MAX_FINISH_CANDIDATES",
    "MAX_ID_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_MESSAGE_CHARS",
    "MAX_PROGRAM_CHARS",
    "METHODS",
    "PROTOCOL",
    "REJECTION_CODES",
    "SESSION_MAX_FRAME",
    "SOCKET_ENV",
    "TRANSPORT_CODES",
    "WORKSPACE_ENV",
    "ErrorBody",
    "ErrorResponse",
    "FinishParams",
    "FinishRequest",
    "HostRejection",
    "MalformedRequest",
    "Method",
    "OkResponse",
    "Rejection",
    "RejectionCode",
    "Request",
    "Response",
    "SessionUnavailable",
    "StatusParams",
    "StatusRequest",
    "SubmitParams",
    "SubmitRequest",
    "decode_body",
    "decode_request",
    "decode_response",
    "encode_frame",
    "frame_length",
]

MAX_ID_CHARS: Final = 128
"""Longest request id and longest submission id in a ``finish``, in characters."""

MAX_PROGRAM_CHARS: Final = 4096
"""Longest Program path in a ``submit``, in characters (Linux's PATH_MAX)."""

MAX_FINISH_CANDIDATES: Final = 256
"""Most submission ids one ``finish`` may name (a Run allows at most 100 Candidates)."""

_ID_MAX: Final = MAX_ID_CHARS
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _printable_path(value: str) -> str:
    found = _CONTROL.search(value)
    if found is not None:
        raise ValueError(
            f"the Program path contains the control character U+{ord(found.group()):04X} at position "
            f"{found.start()}; name the Program folder with printable characters, e.g. 'program'"
        )
    return value


Method = Literal["submit", "finish", "status"]
METHODS: Final[tuple[str, ...]] = get_args(Method)


# --------------------------------------------------------------------------------------------- models


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SubmitParams(_Frozen):
    """``submit``: the Program directory (relative to the workspace) and an episode selector like ``0:2,4:8``."""

    program: Annotated[str, Field(min_length=1, max_length=MAX_PROGRAM_CHARS), AfterValidator(_printable_path)]
    episodes: str = Field(min_length=1, max_length=MAX_SELECTOR_LENGTH)


class FinishParams(_Frozen):
    """``finish``: the submission ids to publish as Candidates, in order of preference."""

    candidates: list[Annotated[str, Field(min_length=1, max_length=_ID_MAX)]] = Field(
        min_length=1, max_length=MAX_FINISH_CANDIDATES
    )


class StatusParams(_Frozen):
    """``status``: no parameters."""


class _RequestBase(_Frozen):
    protocol: Literal["evoledger.session/1"]
    id: str = Field(min_length=1, max_length=_ID_MAX)


class SubmitRequest(_RequestBase):
    """A ``submit`` request."""

    method: Literal["submit"]
    params: SubmitParams


class FinishRequest(_RequestBase):
    """A ``finish`` request."""

    method: Literal["finish"]
    params: FinishParams


class StatusRequest(_RequestBase):
    """A ``status`` request."""

    method: Literal["status"]
    params: StatusParams


Request = Annotated[SubmitRequest | FinishRequest | StatusRequest, Field(discriminator="method")]
"""Any valid request; dispatch on ``request.method``."""

_REQUEST_MODELS: Final[dict[str, type[SubmitRequest | FinishRequest | StatusRequest]]] = {
    "submit": SubmitRequest,
    "finish": FinishRequest,
    "status": StatusRequest,
}


Response = OkResponse | ErrorResponse
"""Any reply, as the client reads it (:func:`~evoledger.kernel.session.wire.decode_response`, standard library only)."""


def _summarize(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "request"
        parts.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def decode_request(body: bytes) -> SubmitRequest | FinishRequest | StatusRequest:
    """Parse and validate one request frame body; :class:`MalformedRequest` when it is not a valid request."""
    data = decode_body(body)
    if not isinstance(data, dict):
        raise MalformedRequest(
            "invalid_request", f"a request is a JSON object, not {type(data).__name__}; send {_EXAMPLE}"
        )
    raw_id = data.get("id")
    request_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= _ID_MAX else None
    if "protocol" not in data:
        raise MalformedRequest("invalid_request", f"missing key 'protocol'; send {_EXAMPLE}", request_id)
    if data["protocol"] != PROTOCOL:
        raise MalformedRequest(
            "protocol_mismatch",
            f"this Host speaks protocol {PROTOCOL!r}, the request says {data['protocol']!r}; "
            "use the evoledger-session client that came with this Host",
            request_id,
        )
    method = data.get("method")
    model = _REQUEST_MODELS.get(method) if isinstance(method, str) else None
    if model is None:
        raise MalformedRequest(
            "invalid_request",
            f"unknown method {method!r}; use one of {', '.join(repr(m) for m in METHODS)}",
            request_id,
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise MalformedRequest("invalid_request", f"invalid {method} request: {_summarize(exc)}", request_id) from None


_EXAMPLE: Final = (
    '{"protocol": "evoledger.session/1", "id": "1", "method": "status", "params": {}} behind a 4-byte big-endian length'
)
