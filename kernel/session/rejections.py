"""Rejection codes and the errors that carry them.

A refused request is answered with ``{"ok": false, "error": {"code", "message", "retryable"}}``. The
transport produces only :data:`TRANSPORT_CODES`; every other code is a Host decision, raised or returned
by the Host coordinator as a :class:`Rejection`. ``internal_error`` is the answer to a request whose handling
failed inside the Host (a bug, never the request's fault): the Host records the failure host-only and goes on.

A message is at most :data:`MAX_MESSAGE_CHARS` characters: a longer one is cut, and says how much was cut, so
that no request can make its own answer (or the Event that records it) grow without bound.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from evoledger.ledger.errors import EvoLedgerError, InputError

__all__ = [
    "MAX_MESSAGE_CHARS",
    "REJECTION_CODES",
    "TRANSPORT_CODES",
    "ErrorBody",
    "HostRejection",
    "MalformedRequest",
    "Rejection",
    "RejectionCode",
    "SessionUnavailable",
    "bounded_message",
]

RejectionCode = Literal[
    "session_closed",
    "invalid_request",
    "episode_limit",
    "submission_limit",
    "budget_exhausted",
    "budget_allocation",
    "program_invalid",
    "unknown_submission",
    "duplicate_submission",
    "candidate_limit",
    "budget_remaining",
    "protocol_mismatch",
    "internal_error",
]

REJECTION_CODES: Final[dict[str, str]] = {
    "session_closed": "The Session is over (finished, or the Run ended); no further request is accepted.",
    "invalid_request": "The frame or request is malformed: bad JSON, wrong keys or types, unknown method, selector.",
    "episode_limit": "The submission selects more Episodes than one submission may use, or indices outside the pool.",
    "submission_limit": "The Run's max_submissions is used up; no further submission is accepted.",
    "budget_exhausted": "The submission costs more Episode budget than remains.",
    "budget_allocation": "The submission would leave budget that can never be spent (require_budget_exhaustion).",
    "program_invalid": "The Program path is missing, outside the workspace, or cannot be snapshotted.",
    "unknown_submission": "A finish names a submission the Host never accepted or never published Feedback for.",
    "duplicate_submission": "A finish names the same submission more than once.",
    "candidate_limit": "A finish names more Candidates than the Run allows.",
    "budget_remaining": "Finish refused while Episode budget remains (finish_budget_policy require_budget_exhaustion).",
    "protocol_mismatch": "The request's protocol version is not the one this Host speaks.",
    "internal_error": "The Host failed while deciding this request (a Host bug, recorded for the operator).",
}
"""Every rejection code with its one-line meaning."""

MAX_MESSAGE_CHARS: Final = 1024
"""Longest rejection message, in characters; a longer one is cut (see :func:`bounded_message`)."""

TRANSPORT_CODES: Final = frozenset({"invalid_request", "protocol_mismatch"})
"""The codes the transport itself produces; every other code is a Host decision."""


def bounded_message(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` cut to ``limit`` characters, saying how many were left out."""
    if len(message) <= limit:
        return message
    keep = max(limit - 48, 0)  # room for the note
    return f"{message[:keep]} ... ({len(message) - keep} more characters)"


class ErrorBody(NamedTuple):
    """The ``error`` member of a failed response (``_asdict()`` gives its wire form)."""

    code: RejectionCode
    message: str
    retryable: bool


class Rejection(EvoLedgerError):
    """A refused request: ``code`` (a :data:`RejectionCode`), ``message`` and whether retrying can help.

    The Host coordinator raises or returns this; ``PendingRequest.reject`` sends it to the client.
    """

    exit_code = 1

    def __init__(self, code: RejectionCode, message: str, retryable: bool = False) -> None:
        if code not in REJECTION_CODES:
            raise InputError(f"unknown rejection code {code!r}; use one of {', '.join(sorted(REJECTION_CODES))}")
        message = bounded_message(message)
        super().__init__(f"{code}: {message}")
        self.code: RejectionCode = code
        self.message = message
        self.retryable = retryable

    def body(self) -> ErrorBody:
        """The wire form of this rejection."""
        return ErrorBody(code=self.code, message=self.message, retryable=self.retryable)


class MalformedRequest(Rejection):
    """A transport-level rejection; ``request_id`` is the request's id when it could be read."""

    def __init__(self, code: RejectionCode, message: str, request_id: str | None = None) -> None:
        super().__init__(code, message, retryable=False)
        self.request_id = request_id


class HostRejection(Rejection):
    """The client's view of a rejection the Host (or its transport) sent back. Exit code 1."""


class SessionUnavailable(InputError):
    """The client could not reach the Host or got no usable reply (no socket, refused, timeout). Exit code 2."""
