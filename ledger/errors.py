"""The one error tree of evoledger.

Every error the library raises on purpose derives from :class:`EvoLedgerError`. Each family maps
to a process exit code so the CLI can translate errors without knowing every class::

    EvoLedgerError                      exit 1   anything we raise on purpose
    ├── InputError                      exit 2   the caller gave us something wrong; fix the input
    │   ├── EncodingError                        a value cannot be encoded canonically
    │   ├── UnknownNameError                     a registry name does not exist ("did you mean ...?")
    │   ├── ConfigError                          a configuration value is invalid
    │   │   ├── MissingExtraError                a Benchmark family's optional extra is not installed
    │   │   └── OwnEnvironmentError              a family's Environments run only in its own venv, not in the Host
    │   └── SnapshotError                        a Program directory cannot be snapshotted
    ├── LedgerError                     exit 3   the record on disk is absent, damaged or contested
    │   ├── LedgerNotFoundError                  no ledger at that path
    │   ├── LedgerExistsError                    a ledger already exists where one was to be created
    │   ├── IntegrityError                       bytes do not match their hash / chain / manifest
    │   │   └── ObjectOversizeError              an Object decompresses past its recorded size or the global cap
    │   ├── UnsafePathError                      a run-directory entry is a link, fifo, device or wrong kind
    │   ├── ObjectMissingError                   an Object digest has no bytes and no eviction record
    │   ├── ObjectEvictedError                   an Object's bytes were evicted on purpose (bulk retention)
    │   ├── SchemaError                          a stored event cannot be parsed or upcast
    │   ├── StorageFullError                     the disk is full: nothing was recorded; free space, resume
    │   ├── ConcurrencyError            exit 4   a stale expected head: someone else appended first
    │   └── LedgerLockedError           exit 4   another process holds the single-writer lock
    └── InfraError                      exit 5   an Environment, Benchmark or Host fault (never the Policy's)

Messages state the value that was wrong and what to do about it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "ConcurrencyError",
    "ConfigError",
    "EncodingError",
    "EvoLedgerError",
    "InfraError",
    "InputError",
    "IntegrityError",
    "LedgerError",
    "LedgerExistsError",
    "LedgerLockedError",
    "LedgerNotFoundError",
    "MissingExtraError",
    "ObjectEvictedError",
    "ObjectMissingError",
    "ObjectOversizeError",
    "OwnEnvironmentError",
    "SchemaError",
    "SnapshotError",
    "StorageFullError",
    "UnknownNameError",
    "UnsafePathError",
]


class EvoLedgerError(Exception):
    """Root of every error evoledger raises on purpose."""

    exit_code: int = 1


class InputError(EvoLedgerError):
    """The caller supplied something invalid; the message says what and how to fix it."""

    exit_code = 2


class EncodingError(InputError):
    """A value cannot be turned into canonical JSON (NaN, infinity, an unsupported type, ...)."""


class ConfigError(InputError):
    """A configuration value is invalid or inconsistent with another one."""


class MissingExtraError(ConfigError):
    """A Benchmark family needs an optional extra that is not installed; the message is the install command."""

    def __init__(self, what: str, extra: str, missing: str, *, install: str | None = None, why: str = "") -> None:
        """``install``: the command that installs it (default: pip install 'evoledger[<extra>]'); ``why``: detail."""
        where = f"module {missing!r} is not installed" + (f"; {why}" if why else "")
        command = install if install is not None else f"pip install 'evoledger[{extra}]'"
        super().__init__(f"{what} needs the optional extra {extra!r} ({where}); install it with: {command}")
        self.extra = extra
        self.missing = missing


class OwnEnvironmentError(ConfigError):
    """Something would make a Benchmark's Environment in the Host, but its family runs Environments only in workers
    started from its own venv (``evoledger env install FAMILY``): the message says what cannot be done and why."""


class SnapshotError(InputError):
    """A Program directory cannot be captured as a snapshot (symlink, too large, missing entry point, ...)."""


class UnknownNameError(InputError, LookupError):
    """A name looked up in a registry does not exist."""

    def __init__(
        self, what: str, name: str, known: Iterable[str], *, close: list[str] | None = None, see: str | None = None
    ) -> None:
        """``known`` are listed in full, unless ``see`` says where to find them: then only ``close``, the nearest."""
        known_list = sorted(known)
        if close is None:
            close = difflib.get_close_matches(name, known_list, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        if see is None:
            listing = ", ".join(known_list) if known_list else "(none registered)"
            super().__init__(f"unknown {what} {name!r}.{hint} Known {what}s: {listing}.")
        else:
            others = f" Close matches: {', '.join(close)}." if len(close) > 1 else ""
            super().__init__(f"unknown {what} {name!r}.{hint}{others} {see}")
        self.what = what
        self.name = name
        self.suggestion = close[0] if close else None


class LedgerError(EvoLedgerError):
    """The record on disk is missing, damaged or held by someone else."""

    exit_code = 3


class LedgerNotFoundError(LedgerError):
    """No ledger exists at the given path."""


class LedgerExistsError(LedgerError):
    """A ledger already exists where a new one was to be created."""


class IntegrityError(LedgerError):
    """Stored bytes do not match their digest, the hash chain or the head manifest."""


class ObjectOversizeError(IntegrityError):
    """An Object's zstd frame declares or yields more bytes than its recorded size or the global cap allows."""


class UnsafePathError(LedgerError):
    """An entry of a run directory is a symbolic link, fifo, device or otherwise not what the tools may open."""

    path: str | None = None
    """The offending entry, when known."""


class ObjectMissingError(LedgerError, KeyError):
    """An Object digest has no stored bytes and no eviction record."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ObjectEvictedError(LedgerError, KeyError):
    """An Object's bytes were deliberately evicted by bulk retention; its digest remains in the log."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SchemaError(LedgerError):
    """A stored event cannot be parsed, or no upcaster leads from its version to the current one."""


class StorageFullError(LedgerError):
    """The disk (or quota) is full. The refused write was rolled back whole; free space, then resume."""


class ConcurrencyError(LedgerError):
    """An append named a stale expected head: another append happened first. Re-read and retry."""

    exit_code = 4


class LedgerLockedError(LedgerError):
    """Another process holds the ledger's single-writer lock."""

    exit_code = 4


class InfraError(EvoLedgerError):
    """An Environment, Benchmark or Host fault. Recorded as an infra fault; never blamed on the Policy."""

    exit_code = 5
