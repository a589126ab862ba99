"""What the Host records when deciding a Session request fails unexpectedly (a Host bug).

No request can crash the Host: the coordinator answers ``internal_error`` and the Run goes on. The
failure is recorded in one batch by :func:`failure_events`: a host-only ``request-failed`` with the
exception's type, message and traceback (bounded: the traceback keeps its innermost frames), and, when the
Agent is answered, a public ``submission-rejected``/``finish-rejected`` with code ``internal_error`` and
:data:`INTERNAL_ERROR_MESSAGE` -- what the Agent was told, never the Host's details.

A failure of the ledger itself (:data:`LEDGER_FAILURES`: full disk, lost lock, damage) is not a request's
failure: nothing can be decided without a record, so it stops the Host and ``resume`` continues the Run.
"""

from __future__ import annotations

import traceback
from typing import Any, Final

from evoledger.kernel.session import Rejection
from evoledger.ledger.errors import ConcurrencyError, IntegrityError, LedgerLockedError, StorageFullError
from evoledger.ledger.events import EventBase, FinishRejected, RequestFailed, SubmissionRejected, request_summary

__all__ = ["FAILURE_TEXT_CHARS", "INTERNAL_ERROR_MESSAGE", "LEDGER_FAILURES", "failure_events"]

INTERNAL_ERROR_MESSAGE: Final = (
    "the Host failed while deciding this request (a Host bug, not your request's fault); it was recorded for "
    "the operator. Check `evoledger-session status` before you go on: part of the request may have taken effect."
)
"""What the Agent is told about an ``internal_error`` (the details stay host-only)."""

LEDGER_FAILURES: Final = (StorageFullError, ConcurrencyError, LedgerLockedError, IntegrityError)
"""Failures of the record itself: they stop the Host rather than become ``internal_error``."""

FAILURE_TEXT_CHARS: Final = 4096
"""Longest exception message / traceback kept in a ``request-failed`` Event, in characters."""

_PUBLIC: Final[dict[str, type[SubmissionRejected] | type[FinishRejected]]] = {
    "submit": SubmissionRejected,
    "finish": FinishRejected,
}


def failure_events(method: str, params: Any, error: Exception, *, answered: bool) -> tuple[Rejection, list[EventBase]]:
    """The ``internal_error`` to answer and the Events that record ``error`` while deciding a ``method`` request.

    ``params`` is the request's params model (or a plain dict); ``answered``: the Agent gets the answer (a
    live request), so the public rejection is recorded too.
    """
    if isinstance(params, dict):
        request = params
    else:
        request = params.model_dump(mode="json") if hasattr(params, "model_dump") else {}
    summary = request_summary(request)
    rejection = Rejection("internal_error", INTERNAL_ERROR_MESSAGE)
    events: list[EventBase] = [
        RequestFailed(
            method=method if method in ("submit", "finish", "status") else "unknown",
            request=summary,
            error_type=type(error).__qualname__[:256] or "Exception",
            message=str(error)[:FAILURE_TEXT_CHARS],
            traceback=_tail("".join(traceback.format_exception(error)), FAILURE_TEXT_CHARS),
        )
    ]
    public = _PUBLIC.get(method) if answered else None
    if public is not None:
        events.append(public(code="internal_error", message=rejection.message, retryable=False, request=summary))
    return rejection, events


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text`` (a traceback's innermost frames), marked when cut."""
    if len(text) <= limit:
        return text
    return f"[{len(text) - limit} characters cut] " + text[-limit:]
