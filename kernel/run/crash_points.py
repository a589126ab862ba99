"""Crash injection for recovery testing: the Host kills itself right after a chosen append.

``EVOLEDGER_CRASH_AFTER=<event-kind>:<n>`` makes the Host process SIGKILL itself immediately after the
``n``-th Event of that kind is durably appended (counting only this process's appends). It exists so
that tests can stop a real Host at exact points (after a submission is accepted, mid-Episode,
mid-publication, mid-validation, mid-assessment) and prove that ``evoledger resume`` recovers. Unset,
it costs one dictionary lookup per append.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping, Sequence

from evoledger.ledger.errors import ConfigError
from evoledger.ledger.events import EventBase

__all__ = ["CRASH_ENV", "CrashPoint"]

CRASH_ENV = "EVOLEDGER_CRASH_AFTER"


class CrashPoint:
    """Counts appended Events of one kind and kills this process at the chosen count."""

    def __init__(self, kind: str, after: int) -> None:
        if after < 1:
            raise ConfigError(f"{CRASH_ENV} needs a positive count, got {after}")
        self.kind = kind
        self.after = after
        self._seen = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CrashPoint | None:
        """The crash point named by :data:`CRASH_ENV`, if set."""
        raw = (environ if environ is not None else os.environ).get(CRASH_ENV)
        if not raw:
            return None
        kind, sep, count = raw.rpartition(":")
        if not sep or not kind or not count.isdigit():
            raise ConfigError(f"{CRASH_ENV}={raw!r} must look like 'episode-finished:3'")
        return cls(kind, int(count))

    def observe(self, events: Sequence[EventBase]) -> None:
        """Call after ``events`` were durably appended."""
        self._seen += sum(1 for e in events if e.kind == self.kind)
        if self._seen >= self.after:
            os.kill(os.getpid(), signal.SIGKILL)
