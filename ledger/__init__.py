"""The record: canonical encoding, content-addressed Objects, the hash-chained Event log.

The errors are imported eagerly (standard library only); every other name is imported on first use
(PEP 562), so that importing ``evoledger.ledger.errors`` (as ``evoledger-session`` does) stays cheap.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Final

from evoledger.ledger.errors import (
    ConcurrencyError,
    ConfigError,
    EncodingError,
    EvoLedgerError,
    InfraError,
    InputError,
    IntegrityError,
    LedgerError,
    LedgerExistsError,
    LedgerLockedError,
    LedgerNotFoundError,
    ObjectEvictedError,
    ObjectMissingError,
    ObjectOversizeError,
    SchemaError,
    SnapshotError,
    StorageFullError,
    UnknownNameError,
    UnsafePathError,
)
from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.ledger.canonical import canonical_json, digest_of, is_digest, parse_canonical
    from evoledger.ledger.head import Head
    from evoledger.ledger.store import CURRENT_HEAD, Ledger, RecordedEvent
    from evoledger.ledger.verify import Problem, VerifyReport, verify

__all__ = [
    "CURRENT_HEAD",
    "ConcurrencyError",
    "ConfigError",
    "EncodingError",
    "EvoLedgerError",
    "Head",
    "InfraError",
    "InputError",
    "IntegrityError",
    "Ledger",
    "LedgerError",
    "LedgerExistsError",
    "LedgerLockedError",
    "LedgerNotFoundError",
    "ObjectEvictedError",
    "ObjectMissingError",
    "ObjectOversizeError",
    "Problem",
    "RecordedEvent",
    "SchemaError",
    "SnapshotError",
    "StorageFullError",
    "UnknownNameError",
    "UnsafePathError",
    "VerifyReport",
    "canonical_json",
    "digest_of",
    "is_digest",
    "parse_canonical",
    "verify",
]

_LAZY: Final = {
    "canonical_json": "evoledger.ledger.canonical",
    "digest_of": "evoledger.ledger.canonical",
    "is_digest": "evoledger.ledger.canonical",
    "parse_canonical": "evoledger.ledger.canonical",
    "Head": "evoledger.ledger.head",
    "CURRENT_HEAD": "evoledger.ledger.store",
    "Ledger": "evoledger.ledger.store",
    "RecordedEvent": "evoledger.ledger.store",
    "Problem": "evoledger.ledger.verify",
    "VerifyReport": "evoledger.ledger.verify",
    "verify": "evoledger.ledger.verify",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


class _Package(types.ModuleType):
    """Keeps ``evoledger.ledger.verify`` the function when the ``verify`` submodule is imported directly.

    (Importing a submodule binds it on its package under the same name; the eager ``__init__`` this replaces
    rebound the function afterwards, so ``from evoledger.ledger import verify`` always gave the function.)
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            value = value.verify
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
