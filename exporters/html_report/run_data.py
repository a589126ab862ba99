"""What the report reads of one Run: its learning curve (a fold of its log), Program diffs, and an audit verdict."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import takewhile
from pathlib import Path
from typing import Any

from evoledger.exporters.html_report.program_diff import program_diff
from evoledger.exporters.runs import open_run
from evoledger.ledger.errors import InputError, LedgerNotFoundError
from evoledger.ledger.store import RecordedEvent
from evoledger.projections import learning_curve
from evoledger.projections.learning_curve import LearningCurve

__all__ = ["ReportRun", "read_report_run"]


@dataclass(frozen=True)
class ReportRun:
    """One Run as the report shows it."""

    path: Path
    curve: LearningCurve
    diffs: Mapping[str, str] = field(default_factory=dict)
    """Per Submission, the unified diff of its Program against the previous Submission's (the first: against the
    starting Program); ``""`` when the Program did not change."""
    audit: Mapping[str, Any] | None = None
    """The ``evoledger replay`` verdict as ``ReplayReport.to_dict()`` gives it (``None``: not audited)."""

    @property
    def label(self) -> str:
        """The Run's id, and its directory when that is not named after it."""
        return self.curve.run_id if self.path.name == self.curve.run_id else f"{self.curve.run_id} ({self.path})"


def read_report_run(run_dir: str | os.PathLike[str], *, audit: Mapping[str, Any] | None = None) -> ReportRun:
    """Fold the Run in ``run_dir`` up to the head read when it was opened, and diff its consecutive Programs.

    Raises :class:`~evoledger.ledger.errors.LedgerNotFoundError` (no such directory, or no ledger in it) and
    :class:`~evoledger.ledger.errors.InputError` (a file, or an evaluation record rather than a Run).
    """
    path = Path(run_dir)
    if path.is_dir() and not (path / "ledger.sqlite").exists():
        raise LedgerNotFoundError(
            f"{path} is not a run directory (it holds no ledger.sqlite); pass a directory written by `evoledger run`"
        )
    ledger = open_run(path)
    try:
        count = ledger.head().count
        recorded: Iterator[RecordedEvent] = takewhile(lambda r: r.stored.seq < count, ledger.events())
        curve = learning_curve.fold(recorded)
        if not curve.state.created:
            raise InputError(
                f"{path} is an evaluation record (evoledger evaluate --record-to), not a Run; "
                "evoledger report draws Runs recorded by `evoledger run`"
            )
        diffs: dict[str, str] = {}
        previous = curve.initial_program
        for point in curve.points:
            before = curve.programs.get(previous) if previous is not None else None
            after = curve.programs.get(point.program_digest, {})
            diffs[point.submission_id] = (
                "" if previous == point.program_digest else program_diff(ledger.objects, before, after)
            )
            previous = point.program_digest
    finally:
        ledger.close()
    return ReportRun(path=path, curve=curve, diffs=diffs, audit=audit)
