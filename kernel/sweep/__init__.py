"""Sweeps: many Runs (Benchmarks x Agents x seeds) from one sweep file, run concurrently, resumable, recorded.

``spec`` reads and checks the sweep file; ``cells`` expands it into one cell per Run; ``record`` is the sweep's own
ledger and its directory; ``plan`` decides, from each Run's own ledger, which cells to start, resume or skip;
``scheduler`` runs them, each in its own process (or, with ``ray_placement``, each started by a Ray task on a
cluster node). ``evoledger sweep`` (``kernel/cli/sweep_command.py``) ties them up.

Every name is imported on first use (PEP 562): ``report`` and ``export`` only ask whether a folder is a sweep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.kernel.sweep.cells import check_cells, expand, run_config_of
    from evoledger.kernel.sweep.plan import SweepPlan, plan_sweep
    from evoledger.kernel.sweep.ray_placement import RunPlacer, SharedStorageError
    from evoledger.kernel.sweep.record import (
        LOGS_DIR,
        RUNS_DIR,
        RunSnapshot,
        RunWatcher,
        SweepRecord,
        is_sweep_dir,
        read_sweep,
        runs_of,
        sweep_run_dirs,
    )
    from evoledger.kernel.sweep.scheduler import CellJob, CellView, run_cells
    from evoledger.kernel.sweep.spec import SweepFile, SweepFileError, read_sweep_file

__all__ = [
    "LOGS_DIR",
    "RUNS_DIR",
    "CellJob",
    "CellView",
    "RunPlacer",
    "RunSnapshot",
    "RunWatcher",
    "SharedStorageError",
    "SweepFile",
    "SweepFileError",
    "SweepPlan",
    "SweepRecord",
    "check_cells",
    "expand",
    "is_sweep_dir",
    "plan_sweep",
    "read_sweep",
    "read_sweep_file",
    "run_cells",
    "run_config_of",
    "runs_of",
    "sweep_run_dirs",
]

_LAZY: Final = {
    "LOGS_DIR": "evoledger.kernel.sweep.record",
    "RUNS_DIR": "evoledger.kernel.sweep.record",
    "CellJob": "evoledger.kernel.sweep.scheduler",
    "CellView": "evoledger.kernel.sweep.scheduler",
    "RunPlacer": "evoledger.kernel.sweep.ray_placement",
    "RunSnapshot": "evoledger.kernel.sweep.record",
    "RunWatcher": "evoledger.kernel.sweep.record",
    "SharedStorageError": "evoledger.kernel.sweep.ray_placement",
    "SweepFile": "evoledger.kernel.sweep.spec",
    "SweepFileError": "evoledger.kernel.sweep.spec",
    "SweepPlan": "evoledger.kernel.sweep.plan",
    "SweepRecord": "evoledger.kernel.sweep.record",
    "check_cells": "evoledger.kernel.sweep.cells",
    "expand": "evoledger.kernel.sweep.cells",
    "is_sweep_dir": "evoledger.kernel.sweep.record",
    "plan_sweep": "evoledger.kernel.sweep.plan",
    "read_sweep": "evoledger.kernel.sweep.record",
    "read_sweep_file": "evoledger.kernel.sweep.spec",
    "run_cells": "evoledger.kernel.sweep.scheduler",
    "run_config_of": "evoledger.kernel.sweep.cells",
    "runs_of": "evoledger.kernel.sweep.record",
    "sweep_run_dirs": "evoledger.kernel.sweep.record",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
