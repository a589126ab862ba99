"""The Session: how the Agent talks to the Host.

``protocol`` defines the request/response models (re-exporting ``frames``, the length-prefixed strict
JSON framing, and ``rejections``, the rejection codes and errors); ``selectors`` the episode selector
grammar (``0:2,4:8``); ``server`` the Unix-socket listener the Host coordinator reads requests from,
handing out ``pending.PendingRequest`` handles (``socket_file`` binds and removes the socket file);
``client`` the library client and the ``evoledger-session`` command.
"""

from evoledger.kernel.session.client import CLIENT_ERROR_CODES, ClientInputError, SessionClient, workspace_relative
from evoledger.kernel.session.pending import PendingRequest
from evoledger.kernel.session.protocol import (
    MAX_FINISH_CANDIDATES,
    MAX_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_PROGRAM_CHARS,
    METHODS,
    PROTOCOL,
    REJECTION_CODES,
    SESSION_MAX_FRAME,
    SOCKET_ENV,
    TRANSPORT_CODES,
    WORKSPACE_ENV,
    FinishParams,
    FinishRequest,
    HostRejection,
    MalformedRequest,
    Rejection,
    RejectionCode,
    Request,
    SessionUnavailable,
    StatusParams,
    StatusRequest,
    SubmitParams,
    SubmitRequest,
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
