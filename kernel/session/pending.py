"""A request waiting for the Host's decision: the coordinator's handle to answer it exactly once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from evoledger.kernel.session.frames import FRAME_HEADER, encode_frame
from evoledger.kernel.session.protocol import PROTOCOL, FinishRequest, StatusRequest, SubmitRequest
from evoledger.kernel.session.rejections import Rejection, RejectionCode
from evoledger.ledger.errors import InfraError

__all__ = ["PendingRequest"]


class PendingRequest:
    """A valid request waiting for the Host's decision; answer it exactly once, from any thread."""

    def __init__(
        self,
        request: SubmitRequest | FinishRequest | StatusRequest,
        deliver: Callable[[bytes], None],
        max_frame: int,
    ) -> None:
        self.request = request
        self._deliver = deliver
        self._max_frame = max_frame
        self._lock = threading.Lock()
        self._answered = False

    @property
    def answered(self) -> bool:
        """Whether :meth:`reply` or :meth:`reject` has been called."""
        return self._answered

    def reply(self, result: Mapping[str, Any]) -> None:
        """Send ``{"ok": true, "result": result}``; ``result`` must be canonical-JSON encodable.

        Raises :class:`~evoledger.ledger.errors.EncodingError` for non-JSON values and
        :class:`~evoledger.ledger.errors.InfraError` when the reply would exceed the frame limit; in
        both cases the request stays unanswered so the Host can reject it instead.
        """
        self._send({"protocol": PROTOCOL, "id": self.request.id, "ok": True, "result": dict(result)})

    def reject(self, code: RejectionCode, message: str, retryable: bool = False) -> None:
        """Send ``{"ok": false, "error": {...}}`` with a rejection code from :data:`REJECTION_CODES`."""
        body = Rejection(code, message, retryable).body()._asdict()
        self._send({"protocol": PROTOCOL, "id": self.request.id, "ok": False, "error": body})

    def _send(self, response: dict[str, Any]) -> None:
        frame = encode_frame(response)
        if len(frame) - FRAME_HEADER.size > self._max_frame:
            raise InfraError(
                f"the reply to request {self.request.id!r} is {len(frame)} bytes, above the frame limit of "
                f"{self._max_frame}; return a smaller result (the client would refuse it)"
            )
        with self._lock:
            if self._answered:
                raise InfraError(f"request {self.request.id!r} was already answered; answer each request once")
            self._answered = True
        self._deliver(frame)
