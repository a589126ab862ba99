"""``evoledger sweep``: many Runs from one sweep file (Benchmarks x Agents x seeds), run concurrently and resumable."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import click
from evoledger.kernel.cli.backend_options import backend_options, chosen_backend
from evoledger.kernel.cli.main import INTERRUPTED, Terminated
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import note, verbosity, verbosity_options
from evoledger.kernel.cli.sweep_argv import resume_argv, run_argv
from evoledger.kernel.cli.terminal_text import printable
from evoledger.kernel.execution.backend import ExecutionBackend, shared_backend
from evoledger.kernel.sweep.cells import check_cells, expand
from evoledger.kernel.sweep.plan import plan_sweep
from evoledger.kernel.sweep.record import SweepRecord
from evoledger.kernel.sweep.scheduler import CellView, run_cells
from evoledger.kernel.sweep.spec import read_sweep_file
from evoledger.ledger.events import SweepCell
from rich.console import Console
from rich.table import Table

__all__ = ["SWEEP_FAILED", "sweep_command"]

SWEEP_FAILED: Final = 5
"""The exit code when a cell's process failed before its Run ended (run the sweep again to resume it)."""

_NOT_SELECTED: Final = 6

EXIT_HELP: Final = (
    "Exit codes: 0 every Run finished with a selected Candidate; 6 every Run ended, some without one; 5 some cell's "
    "process failed before its Run ended (its log's last lines are printed; run the sweep again to resume it); "
    "2 a wrong sweep file or option (its line and key are named); 4 another process holds the sweep; 130 "
    "interrupted (Ctrl-C; SIGTERM ends it by SIGTERM): the Runs are kept, run the same command to continue."
)


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@click.command("sweep", epilog=EXIT_HELP)
@click.argument("sweep_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="SWEEP.toml")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The sweep's folder: its ledger, runs/<cell>/ (one run directory per cell) and logs/. New or empty to "
    "start a sweep; the folder of an earlier one to continue it.",
)
@click.option(
    "--parallel",
    "-p",
    type=click.IntRange(1, 256),
    default=None,
    help="Runs at once, each in its own process [default: the CPUs available, at most one per cell].",
)
@backend_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@verbosity_options
def sweep_command(
    sweep_file: Path, out: Path, parallel: int | None, backend: str, ray_address: str | None, as_json: bool
) -> None:
    """Run every cell of a sweep file (Benchmarks x Agents x seeds), one Run each, several at once; resumable.

    Each cell is a Run in OUT/runs/<benchmark>--<agent>--seed-<seed>/, started as 'evoledger run' would start it,
    in its own process. Running the same command again skips the finished Runs, resumes the crashed ones and
    starts the missing ones; the sweep's own ledger in OUT records which Run is which cell and how each ended.
    Every Run gets --workers CPUs/parallel unless the sweep file sets workers. Then 'evoledger report OUT' gives
    the leaderboard across the sweep and 'evoledger export OUT --out DATASET' one dataset of every Run.

    \b
    A sweep file (TOML):
      [sweep]
      seeds = [0, 1]
      [run]                          # evoledger run's settings, as TOML keys
      episode_budget = 20
      validation = { episodes = 4 }
      [[benchmark]]
      name = "frozen-lake"
      set = { map_name = "8x8" }     # its --set settings
      [[agent]]
      name = "hill-climb"
      [[agent]]
      name = "claude-code"
      options = { model = "opus" }   # its --agent-option values

    \b
    Examples:
      evoledger sweep study.toml --out sweeps/study --parallel 4
      evoledger sweep study.toml --out sweeps/study          # again: continues where it stopped
      evoledger sweep study.toml --out sweeps/study --backend ray   # every Run's Episodes on one Ray instance
      evoledger report sweeps/study --out study.html
    """
    episodes_on = chosen_backend(backend, ray_address)
    spec, text = read_sweep_file(sweep_file)
    cells = expand(spec, text)
    check_cells(spec, text)
    cpus = _cpus()
    at_once = parallel or min(cpus, len(cells))
    workers = max(1, cpus // at_once)
    console = Console(stderr=True)
    record = SweepRecord.open(
        out, sweep_id=spec.name_or(sweep_file), cells=cells, source=text, source_name=str(sweep_file)
    )
    try:
        with shared_backend(episodes_on, cpus=cpus) as shared:
            views = _sweep(
                record, cells, shared, sweep_file, out, console, at_once=at_once, workers=workers, as_json=as_json
            )
        sweep_id = record.state.sweep_id
    finally:
        record.close()
    _report(out, sweep_id, cells, views, as_json=as_json)


def _backend_flags(backend: ExecutionBackend | None) -> tuple[str, ...]:
    """The flags that give every Run of the sweep its Episodes' backend (none for local)."""
    if backend is None or backend.name == "local":
        return ()
    return ("--backend", backend.name, *(("--ray-address", backend.ray_address) if backend.ray_address else ()))


def _sweep(
    record: SweepRecord,
    cells: tuple[SweepCell, ...],
    backend: ExecutionBackend | None,
    sweep_file: Path,
    out: Path,
    console: Console,
    *,
    at_once: int,
    workers: int,
    as_json: bool,
) -> Mapping[str, CellView]:
    """Start, resume or skip each cell, showing progress; the cells' views at the end."""
    extra = _backend_flags(backend)

    def _run(cell: SweepCell, run_dir: Path) -> tuple[list[str], int | None]:
        chosen = cell.run.get("workers")
        given = chosen if isinstance(chosen, int) else workers
        return run_argv(cell, run_dir, None if isinstance(chosen, int) else workers, extra), given

    plan = plan_sweep(record, cells, run_argv=_run, resume_argv=lambda cell, run_dir: resume_argv(cell, run_dir, extra))
    if not as_json:
        skipped = len(cells) - len(plan.jobs)
        note(
            console,
            f"sweep {printable(record.state.sweep_id)} in {printable(out)}: {len(cells)} cells; "
            f"{plan.count('run')} to start, {plan.count('resume')} to resume, {skipped} finished before",
        )
        note(console, f"{at_once} at once, --workers {workers} each unless the sweep file sets workers")
        if extra:
            note(console, f"Episodes on Ray: {' '.join(printable(word) for word in extra)}")
    with _display(console, plan.views, as_json=as_json) as tick, _hint_on_interrupt(sweep_file, out, console):
        run_cells(record, plan.jobs, plan.views, parallel=at_once, on_tick=tick)
    return plan.views


def _outcomes(views: Mapping[str, CellView]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for view in views.values():
        state = _settled(view)
        counts[state] = counts.get(state, 0) + 1
    return counts


def _settled(view: CellView) -> str:
    if view.state == "done earlier":
        return "finished" if view.reason == "finished" and view.selected else "ended"
    return view.state


def _report(
    out: Path, sweep_id: str, cells: tuple[SweepCell, ...], views: Mapping[str, CellView], *, as_json: bool
) -> None:
    counts = _outcomes(views)
    if as_json:
        echo_json(
            {
                "sweep_id": sweep_id,
                "out": str(out),
                "counts": counts,
                "cells": [_cell_json(out, cell, views[cell.name]) for cell in cells],
            }
        )
    else:
        stdout = Console()
        if not stdout.is_terminal:  # a log or a pipe: wide enough for the cell names and scores, never cut
            stdout = Console(width=max(stdout.width, 120))
        stdout.print(_table(views, title=f"sweep {sweep_id}"))
        err = Console(stderr=True)
        for view in views.values():
            if view.state == "failed":
                err.print(
                    f"error: cell {view.name}'s process failed (exit {view.exit_code}) before its Run ended; "
                    f"its log: {printable(out / 'logs' / (view.name + '.log'))}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
                for line in view.message.splitlines()[-8:]:
                    err.print(f"  {printable(line)}", highlight=False, markup=False, soft_wrap=True)
        if verbosity() >= 0:
            Console().print(f"leaderboard: evoledger report {printable(out)}", highlight=False, soft_wrap=True)
    if counts.get("failed"):
        raise SystemExit(SWEEP_FAILED)
    if counts.get("ended"):
        raise SystemExit(_NOT_SELECTED)


def _cell_json(out: Path, cell: SweepCell, view: CellView) -> dict[str, Any]:
    return {
        "cell": cell.name,
        "run_dir": str(out / "runs" / cell.name),
        "benchmark": cell.benchmark,
        "agent": cell.agent,
        "seed": cell.seed,
        "state": view.state,
        "outcome": _settled(view),
        "reason": view.reason,
        "selected": view.selected,
        "assessment_score": view.assessment,
        "best_public_score": view.best_public,
        "budget_used": view.budget_used,
        "budget_total": view.budget_total,
        "exit_code": view.exit_code,
        "seconds": None if view.seconds is None else round(view.seconds, 3),
    }


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def _live_rows(views: Mapping[str, CellView], room: int) -> tuple[list[CellView], str]:
    """The rows the live table has room for (running first, then the latest ends, then the waiting) and a line
    counting every cell by state when some are left out."""
    rank = {"running": 0, "resuming": 0, "failed": 1, "interrupted": 1, "ended": 2, "finished": 2, "waiting": 3}
    ordered = sorted(views.values(), key=lambda v: rank.get(v.state, 4))
    if len(ordered) <= room:
        return list(views.values()), ""
    counts: dict[str, int] = {}
    for view in views.values():
        counts[view.state] = counts.get(view.state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    return ordered[: max(1, room - 1)], f"{len(views)} cells: {summary}"


def _table(views: Mapping[str, CellView], *, title: str, room: int | None = None) -> Table:
    table = Table(title=printable(title), show_edge=False, pad_edge=False)
    for column in ("cell", "state", "budget", "best", "assessed", "time"):
        table.add_column(column, no_wrap=column in ("cell", "state"))
    shown, summary = (list(views.values()), "") if room is None else _live_rows(views, room)
    if summary:
        table.caption = summary
    for view in shown:
        state = _settled(view)
        if state == "ended":
            state = f"ended: {view.reason}"
        elif state == "failed" and view.exit_code is not None:
            state = f"failed (exit {view.exit_code})"
        seconds = view.seconds if view.seconds is not None else view.extra.get("elapsed")
        budget = f"{view.budget_used}/{view.budget_total}" if view.budget_total else ""
        when = "earlier" if view.state == "done earlier" else ""
        table.add_row(
            printable(view.name),
            printable(state),
            budget,
            _score(view.best_public),
            _score(view.assessment),
            f"{seconds:.0f} s" if isinstance(seconds, float) else when,
        )
    return table


@contextmanager
def _display(console: Console, views: Mapping[str, CellView], *, as_json: bool) -> Iterator[Any]:
    """The live table (a terminal, no ``--json``/``-q``), else a line per change of a cell's state (unless ``-q``)."""
    if console.is_terminal and not as_json and verbosity() >= 0:
        from rich.live import Live

        with Live(console=console, refresh_per_second=4, transient=True) as live:
            yield lambda: live.update(_table(views, title="sweep", room=max(3, console.height - 6)))
        return
    shown: dict[str, str] = {}

    def lines() -> None:
        if as_json or verbosity() < 0:
            return
        for view in views.values():
            if view.state in ("waiting", "done earlier") or shown.get(view.name) == view.state:
                continue
            shown[view.name] = view.state
            tail = f" ({view.reason})" if view.state == "ended" else ""
            score = f", assessment {_score(view.assessment)}" if view.assessment is not None else ""
            console.print(f"{view.name}: {view.state}{tail}{score}", highlight=False, markup=False, soft_wrap=True)

    yield lines


@contextmanager
def _hint_on_interrupt(sweep_file: Path, out: Path, console: Console) -> Iterator[None]:
    try:
        yield
    except KeyboardInterrupt as exc:
        console.print(
            f"interrupted: the sweep's Runs in {printable(out)} are kept; continue it with: evoledger sweep "
            f"{printable(sweep_file)} --out {printable(out)}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        if isinstance(exc, Terminated):
            raise
        raise SystemExit(INTERRUPTED) from None
