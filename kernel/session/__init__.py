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

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from evoledger.kernel.session.client import CLIENT_ERROR_CODES, ClientInputError, SessionClient, workspace_relative
    from evoledger.kernel.session.frames import DEFAULT_MAX_FRAME
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
    "DEFAULT_MAX_FRAME",
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
    "CLIENT_ERROR_CODES": "client",
    "ClientInputError": "client",
    "SessionClient": "client",
    "workspace_relative": "client",
    "DEFAULT_MAX_FRAME": "frames",
    "PendingRequest": "pending",
    "MAX_FINISH_CANDIDATES": "protocol",
    "MAX_ID_CHARS": "protocol",
    "MAX_PROGRAM_CHARS": "protocol",
    "METHODS": "protocol",
    "FinishParams": "protocol",
    "FinishRequest": "protocol",
    "Request": "protocol",
    "StatusParams": "protocol",
    "StatusRequest": "protocol",
    "SubmitParams": "protocol",
    "SubmitRequest": "protocol",
    "MAX_MESSAGE_CHARS": "rejections",
    "REJECTION_CODES": "rejections",
    "TRANSPORT_CODES": "rejections",
    "HostRejection": "rejections",
    "MalformedRequest": "rejections",
    "Rejection": "rejections",
    "RejectionCode": "rejections",
    "SessionUnavailable": "rejections",
    "MAX_INDEX": "selectors",
    "MAX_SELECTED": "selectors",
    "MAX_SELECTOR_LENGTH": "selectors",
    "SelectorError": "selectors",
    "check_in_pool": "selectors",
    "format_selector": "selectors",
    "normalize_selector": "selectors",
    "parse_selector": "selectors",
    "DEFAULT_IDLE_TIMEOUT": "server",
    "SessionServer": "server",
    "MAX_SOCKET_PATH_BYTES": "socket_file",
    "PROTOCOL": "wire",
    "SOCKET_ENV": "wire",
    "WORKSPACE_ENV": "wire",
}
"""Re-exported name -> the submodule defining it, imported on first access (PEP 562)."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
