"""What a sweep does with each cell this time: skip a finished Run, resume a crashed one, start a missing one.

The decision is read from each Run's own ledger, the truth about that Run:

* its log holds ``run-ended``: the Run is finished (whatever its reason); it is skipped, and if the sweep's log does
  not yet say how it ended (the sweep was killed after the Run ended) that is recorded now;
* its log holds a Run that has not ended: it is resumed (``evoledger resume``, which completes the work in flight);
* there is no Run: it is started (``evoledger run``). A ledger with no Event at all is what a process killed between
  creating the ledger and recording ``run-created`` leaves; nothing was recorded, so that folder is started afresh.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evoledger.kernel.sweep.record import RunWatcher, SweepRecord
from evoledger.kernel.sweep.scheduler import CellJob, CellView, outcome_of
from evoledger.ledger.errors import EvoLedgerError
from evoledger.ledger.events import SweepCell
from evoledger.ledger.store import Ledger

__all__ = ["SweepPlan", "plan_sweep"]


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """The jobs to run (in cell order) and every cell's view, the finished ones already filled in."""

    jobs: tuple[CellJob, ...]
    views: dict[str, CellView]

    def count(self, mode: Literal["run", "resume"]) -> int:
        return sum(1 for job in self.jobs if job.mode == mode)


def _empty_ledger(run_dir: Path) -> bool:
    """Whether ``run_dir``'s ledger holds no Event and no process holds it (its writer lock is taken to look: a
    process creating the Run right now keeps its folder; its cell is then resumed, and refused while it is held)."""
    try:
        with Ledger.open(run_dir, writable=True) as ledger:
            return ledger.head().count == 0
    except EvoLedgerError:
        return False


def plan_sweep(
    record: SweepRecord,
    cells: Sequence[SweepCell],
    *,
    run_argv: Callable[[SweepCell, Path], tuple[list[str], int | None]],
    resume_argv: Callable[[SweepCell, Path], list[str]],
) -> SweepPlan:
    """Decide each cell's job; record the end of a Run found ended that the sweep's log does not show as ended."""
    jobs: list[CellJob] = []
    views: dict[str, CellView] = {}
    for cell in cells:
        run_dir = record.run_dir(cell.name)
        view = views[cell.name] = CellView(cell.name)
        has_ledger = (run_dir / "ledger.sqlite").is_file()
        if has_ledger and _empty_ledger(run_dir):
            shutil.rmtree(run_dir)
            has_ledger = False
        if not has_ledger:
            argv, workers = run_argv(cell, run_dir)
            jobs.append(CellJob(cell, "run", argv, workers))
            continue
        snapshot = RunWatcher(run_dir).look()
        view.absorb(snapshot)
        if snapshot.ended:
            view.state = "done earlier"
            history = record.state.cells[cell.name]
            last = history.last_end
            if history.running or last is None or last.run_head_hash != snapshot.head_hash:
                record.ended(cell.name, outcome_of(snapshot, None, stopping=False), snapshot, exit_code=None)
            continue
        jobs.append(CellJob(cell, "resume", resume_argv(cell, run_dir)))
    return SweepPlan(tuple(jobs), views)
