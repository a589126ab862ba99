"""A sweep directory on disk: the sweep's own ledger, its Runs under ``runs/``, its process logs under ``logs/``.

::

    DIR/
      ledger.sqlite, ledger.head   the sweep's log (sweep-created, sweep-cell-started, -placed, -ended)
      runs/<cell>/                 each cell's Run: a run directory like any other (its own ledger)
      logs/<cell>.log              what each of the cell's processes printed, attempt after attempt

The sweep's ledger is opened for writing for as long as the sweep runs (its writer lock), so a second ``evoledger
sweep`` on the same directory is refused. Each Run's state is read from the Run's own ledger, read-only: the Run's
process is its only writer.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger import __version__
from evoledger.ledger.errors import EvoLedgerError, InputError
from evoledger.ledger.events import (
    RunEndReason,
    SweepCell,
    SweepCellEnded,
    SweepCellOutcome,
    SweepCellPlaced,
    SweepCellStarted,
    SweepCreated,
)
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import RunState
from evoledger.projections.run_state import fold as fold_run
from evoledger.projections.sweep_state import SweepState, fold_sweep

__all__ = [
    "LOGS_DIR",
    "RUNS_DIR",
    "RunSnapshot",
    "RunWatcher",
    "SweepRecord",
    "is_sweep_dir",
    "read_sweep",
    "runs_of",
    "sweep_run_dirs",
]

RUNS_DIR: Final = "runs"
LOGS_DIR: Final = "logs"


def is_sweep_dir(path: Path) -> bool:
    """Whether ``path`` holds a sweep's ledger (its first Event is ``sweep-created``)."""
    if not (path / "ledger.sqlite").is_file():
        return False
    try:
        with Ledger.open(path) as ledger:
            first = next(iter(ledger.records(0)), None)
    except EvoLedgerError:
        return False
    return first is not None and first.kind == "sweep-created"


def read_sweep(path: Path) -> SweepState:
    """The folded state of the sweep in ``path`` (read-only)."""
    with Ledger.open(path) as ledger:
        return fold_sweep(e.event for e in ledger.events())


def sweep_run_dirs(path: Path) -> list[Path]:
    """The run directories of the sweep in ``path`` holding a Run, in cell order (cells never started: left out)."""
    state = read_sweep(path)
    found = [path / RUNS_DIR / name for name in state.cells]
    return [d for d in found if (d / "ledger.sqlite").is_file()]


def runs_of(paths: Sequence[Path]) -> list[Path]:
    """``paths`` with each sweep directory replaced by its run directories (``report`` and ``export`` take both).

    A sweep with no Run yet is refused (:class:`InputError`), naming the command that starts it."""
    found: list[Path] = []
    for path in paths:
        if not is_sweep_dir(path):
            found.append(path)
            continue
        runs = sweep_run_dirs(path)
        if not runs:
            raise InputError(
                f"the sweep in {path} has no Run yet; start it with: evoledger sweep SWEEP.toml --out {path}"
            )
        found.extend(runs)
    return found


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """A Run's state as its ledger holds it now, with the head it was read at (``state`` None: no Run yet)."""

    state: RunState | None
    head_hash: str | None = None
    events: int = 0

    @property
    def ended(self) -> bool:
        return self.state is not None and self.state.ended_reason is not None

    @property
    def reason(self) -> RunEndReason | None:
        return None if self.state is None else self.state.ended_reason


class RunWatcher:
    """Follows one Run's ledger, read-only, folding only the Events appended since the last look."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._state: RunState | None = None
        self._next = 0
        self._head: str | None = None

    def look(self) -> RunSnapshot:
        """The Run's state now; the last one seen when its ledger cannot be read at this moment (it is being created,
        or its writer is between a commit and its head manifest)."""
        if not (self.run_dir / "ledger.sqlite").is_file():
            return self.snapshot()
        try:
            with Ledger.open(self.run_dir) as ledger:
                events = list(ledger.events(self._next))
                head = ledger.head()
        except (EvoLedgerError, OSError, sqlite3.Error):
            return self.snapshot()
        if events:
            self._state = fold_run((e.event for e in events), self._state)
            self._next = events[-1].stored.seq + 1
            self._head = head.hash if head.count == self._next else events[-1].stored.hash
        return self.snapshot()

    def snapshot(self) -> RunSnapshot:
        return RunSnapshot(self._state, self._head, self._next)


class SweepRecord:
    """The sweep's ledger, open for writing: records its cells once, then every cell's start and end."""

    def __init__(self, ledger: Ledger, state: SweepState) -> None:
        self._ledger = ledger
        self.state = state

    @property
    def root(self) -> Path:
        return Path(self._ledger.path)

    @classmethod
    def open(
        cls, root: Path, *, sweep_id: str, cells: Sequence[SweepCell], source: str, source_name: str
    ) -> SweepRecord:
        """The sweep in ``root``: created with ``cells`` if ``root`` is new or empty, else opened, and then its
        recorded cells must be exactly ``cells`` (the same sweep file, or one that expands to the same cells)."""
        if (root / "ledger.sqlite").exists() or (root / "ledger.head").exists():
            ledger = Ledger.open(root, writable=True)
            try:
                first = next(iter(ledger.records(0)), None)
                if first is not None and first.kind != "sweep-created":
                    raise InputError(
                        f"--out {root} holds a record that is not a sweep's (it starts with {first.kind}); give a "
                        "new or empty folder to start a sweep in (or the folder of the sweep to continue)"
                    )
                state = fold_sweep(e.event for e in ledger.events())
                _check_same(root, state, cells, source_name)
            except BaseException:
                ledger.close()
                raise
            return cls(ledger, state)
        if root.exists() and (not root.is_dir() or _has_entries(root)):
            raise InputError(
                f"--out {root} exists and holds no sweep; give a new or empty folder to start a sweep in "
                f"(or the folder of the sweep to continue)"
            )
        root.mkdir(parents=True, exist_ok=True)
        ledger = Ledger.create(root)
        try:
            digest = ledger.objects.put(source.encode("utf-8"))
            ledger.append(
                [
                    SweepCreated(
                        sweep_id=sweep_id,
                        source_digest=digest,
                        cells=tuple(cells),
                        created_by=f"evoledger {__version__}",
                    )
                ]
            )
            state = fold_sweep(e.event for e in ledger.events())
        except BaseException:
            ledger.close()
            raise
        return cls(ledger, state)

    def close(self) -> None:
        self._ledger.close()

    def run_dir(self, cell: str) -> Path:
        return self.root / RUNS_DIR / cell

    def log_path(self, cell: str) -> Path:
        return self.root / LOGS_DIR / f"{cell}.log"

    def started(self, cell: str, mode: str, workers: int | None) -> int:
        """Record that ``cell``'s process started (``mode``: ``run`` or ``resume``); returns its attempt number."""
        attempt = self.state.cells[cell].attempts + 1
        self._append(SweepCellStarted(cell=cell, mode=mode, attempt=attempt, workers=workers))  # type: ignore[arg-type]
        return attempt

    def placed(self, event: SweepCellPlaced) -> None:
        """Record where a cell's process placed on a Ray cluster runs."""
        self._append(event)

    def ended(
        self, cell: str, outcome: SweepCellOutcome, run: RunSnapshot, *, exit_code: int | None, message: str = ""
    ) -> SweepCellEnded:
        """Record how ``cell``'s process ended and its Run's state then."""
        state = run.state
        event = SweepCellEnded(
            cell=cell,
            outcome=outcome,
            exit_code=exit_code,
            reason=None if state is None else state.ended_reason,
            selected_submission_id=None if state is None else state.selected,
            assessment_score=None if state is None else state.assessment_score,
            budget_used=0 if state is None else state.charged - state.refunded,
            run_head_hash=run.head_hash,
            run_events=run.events,
            message=message[-4000:],
        )
        self._append(event)
        return event

    def _append(self, event: SweepCellStarted | SweepCellPlaced | SweepCellEnded) -> None:
        self._ledger.append([event])
        self.state = fold_sweep([event], self.state)


def _has_entries(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return any(True for _ in entries)


def _check_same(root: Path, state: SweepState, cells: Sequence[SweepCell], source_name: str) -> None:
    if state.created is None:
        raise InputError(f"--out {root} holds a ledger that is not a sweep's; give a new or empty folder")
    recorded = list(state.created.cells)
    if recorded == list(cells):
        return
    names = {c.name for c in cells}
    old = {c.name for c in recorded}
    added, gone = sorted(names - old), sorted(old - names)
    changed = sorted(c.name for c in cells if c.name in old and c not in recorded)
    parts = [
        f"{label}: {', '.join(found[:5])}{' ...' if len(found) > 5 else ''}"
        for label, found in (("new cells", added), ("cells no longer in it", gone), ("changed cells", changed))
        if found
    ]
    raise InputError(
        f"{source_name} does not expand to the cells the sweep in {root} was started with ({'; '.join(parts)}); "
        f"run it with the sweep file it was started with (evoledger ledger log {root} --kind sweep-created shows "
        "its source digest), or give a new --out for the new sweep"
    )
