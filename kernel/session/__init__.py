"""The Session: how the Agent talks to the Host.

``protocol`` defines the request/response models (re-exporting ``frames``, the length-prefixed strict
JSON framing, and ``rejections``, the rejection codes and errors); ``selectors`` the episode selector
grammar (``0:2,4:8``); ``server`` the Unix-socket listener the Host coordinator reads requests from,
handing out ``pending.PendingRequest`` handles (``socket_file`` binds and removes the socket file);
``client`` the library client and the ``evoledger-session`` command, which needs only ``wire`` (the protocol
version, the environment variables and the reading of replies, standard library only).

Every name here is imported on first use (PEP 562): ``evoledger-session`` must start without pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.kernel.session.client import CLIENT_ERROR_CODES, ClientInputError, SessionClient, workspace_relative
    from evoledger.kernel.session.frames import SESSION_MAX_FRAME
    from evoledger.kernel.session.pending import PendingRequest
    from evoledger.kernel.session.protocol import (
        MAX_FINISH_CANDIDATES,
        MAX_ID_CHARS,
        MAX_PROGRAM_CHARS,
        METHODS,
        FinishParams,
        FinishRequest,
        Request,
        StatusParams,
        StatusRequest,
        SubmitParams,
        SubmitRequest,
    )
    from evoledger.kernel.session.rejections import (
        MAX_MESSAGE_CHARS,
        REJECTION_CODES,
        TRANSPORT_CODES,
        HostRejection,
        MalformedRequest,
        Rejection,
        RejectionCode,
        SessionUnavailable,
    )
    from evoledger.kernel.session.selectors import (
        MAX_INDEX,
        MAX_SELECTED,
        MAX_SELECTOR_LENGTH,
        SelectorError,
        check_in_pool,
        format_selector,
        normalize_selector,
        parse_selector,
    )
    from evoledger.kernel.session.server import DEFAULT_IDLE_TIMEOUT, SessionServer
    from evoledger.kernel.session.socket_file import MAX_SOCKET_PATH_BYTES
    from evoledger.kernel.session.wire import PROTOCOL, SOCKET_ENV, WORKSPACE_ENV

__all__ = [
    "CLIENT_ERROR_CODES",
    "DEFAULT_IDLE_TIMEOUT",
    "MAX_FINISH_CANDIDATES",
    "MAX_ID_CHARS",
    "MAX_INDEX",
    "MAX_MESSAGE_CHARS",
    "MAX_PROGRAM_CHARS",
    "MAX_SELECTED",
    "MAX_SELECTOR_LENGTH",
    "MAX_SOCKET_PATH_BYTES",
    "METHODS",
    "PROTOCOL",
    "REJECTION_CODES",
    "SESSION_MAX_FRAME",
    "SOCKET_ENV",
    "TRANSPORT_CODES",
    "WORKSPACE_ENV",
    "ClientInputError",
    "FinishParams",
    "FinishRequest",
    "HostRejection",
    "MalformedRequest",
    "PendingRequest",
    "Rejection",
    "RejectionCode",
    "Request",
    "SelectorError",
    "SessionClient",
    "SessionServer",
    "SessionUnavailable",
    "StatusParams",
    "StatusRequest",
    "SubmitParams",
    "SubmitRequest",
    "check_in_pool",
    "format_selector",
    "normalize_selector",
    "parse_selector",
    "workspace_relative",
]

_LAZY: Final = {
    "CLIENT_ERROR_CODES": "evoledger.kernel.session.client",
    "ClientInputError": "evoledger.kernel.session.client",
    "SessionClient": "evoledger.kernel.session.client",
    "workspace_relative": "evoledger.kernel.session.client",
    "SESSION_MAX_FRAME": "evoledger.kernel.session.frames",
    "PendingRequest": "evoledger.kernel.session.pending",
    "MAX_FINISH_CANDIDATES": "evoledger.kernel.session.protocol",
    "MAX_ID_CHARS": "evoledger.kernel.session.protocol",
    "MAX_PROGRAM_CHARS": "evoledger.kernel.session.protocol",
    "METHODS": "evoledger.kernel.session.protocol",
    "FinishParams": "evoledger.kernel.session.protocol",
    "FinishRequest": "evoledger.kernel.session.protocol",
    "Request": "evoledger.kernel.session.protocol",
    "StatusParams": "evoledger.kernel.session.protocol",
    "StatusRequest": "evoledger.kernel.session.protocol",
    "SubmitParams": "evoledger.kernel.session.protocol",
    "SubmitRequest": "evoledger.kernel.session.protocol",
    "MAX_MESSAGE_CHARS": "evoledger.kernel.session.rejections",
    "REJECTION_CODES": "evoledger.kernel.session.rejections",
    "TRANSPORT_CODES": "evoledger.kernel.session.rejections",
    "HostRejection": "evoledger.kernel.session.rejections",
    "MalformedRequest": "evoledger.kernel.session.rejections",
    "Rejection": "evoledger.kernel.session.rejections",
    "RejectionCode": "evoledger.kernel.session.rejections",
    "SessionUnavailable": "evoledger.kernel.session.rejections",
    "MAX_INDEX": "evoledger.kernel.session.selectors",
    "MAX_SELECTED": "evoledger.kernel.session.selectors",
    "MAX_SELECTOR_LENGTH": "evoledger.kernel.session.selectors",
    "SelectorError": "evoledger.kernel.session.selectors",
    "check_in_pool": "evoledger.kernel.session.selectors",
    "format_selector": "evoledger.kernel.session.selectors",
    "normalize_selector": "evoledger.kernel.session.selectors",
    "parse_selector": "evoledger.kernel.session.selectors",
    "DEFAULT_IDLE_TIMEOUT": "evoledger.kernel.session.server",
    "SessionServer": "evoledger.kernel.session.server",
    "MAX_SOCKET_PATH_BYTES": "evoledger.kernel.session.socket_file",
    "PROTOCOL": "evoledger.kernel.session.wire",
    "SOCKET_ENV": "evoledger.kernel.session.wire",
    "WORKSPACE_ENV": "evoledger.kernel.session.wire",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
