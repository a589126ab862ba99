"""The record: canonical encoding, content-addressed Objects, the hash-chained Event log."""

from evoledger.ledger.canonical import canonical_json, digest_of, is_digest, parse_canonical
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
    SchemaError,
    SnapshotError,
    StorageFullError,
    UnknownNameError,
)
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
    "Problem",
    "RecordedEvent",
    "SchemaError",
    "SnapshotError",
    "StorageFullError",
    "UnknownNameError",
    "VerifyReport",
    "canonical_json",
    "digest_of",
    "is_digest",
    "parse_canonical",
    "verify",
]
