"""``evoledger sweep``: many Runs from one sweep file (Benchmarks x Agents x seeds), run concurrently and resumable."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click
from evoledger.kernel.cli.main import INTERRUPTED, Terminated
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import note, verbosity, verbosity_options
from evoledger.kernel.cli.sweep_argv import resume_argv, run_argv
from evoledger.kernel.cli.terminal_text import printable
from evoledger.kernel.execution.backend import BACKENDS, ExecutionBackend, require_ray, shared_backend
from evoledger.kernel.sweep.cells import check_cells, expand
from evoledger.kernel.sweep.plan import plan_sweep
from evoledger.kernel.sweep.record import SweepRecord
from evoledger.kernel.sweep.scheduler import CellView, run_cells
from evoledger.kernel.sweep.spec import read_sweep_file
from evoledger.ledger.errors import ConfigError, InfraError
from evoledger.ledger.events import SweepCell
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from evoledger.kernel.sweep.ray_placement import RunPlacer

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
@click.option(
    "--backend",
    type=click.Choice(list(BACKENDS)),
    default="local",
    show_default=True,
    help="Where the Runs run: processes on this machine, or each placed on a node of a Ray cluster (pip install "
    "'evoledger[ray]'); OUT must then be on storage every node writes at the same path.",
)
@click.option(
    "--episodes-backend",
    type=click.Choice(list(BACKENDS)),
    default="local",
    show_default=True,
    help="Where each Run's Episodes run: worker processes next to the Run (on its node), or Ray actors of the same "
    "cluster.",
)
@click.option(
    "--ray-address",
    metavar="auto|HOST:PORT",
    default=None,
    help="With --backend ray or --episodes-backend ray: the Ray cluster to use (auto: the one this machine belongs "
    "to; ray://HOST:PORT, Ray Client, for --episodes-backend ray only). Default: a private local Ray instance, "
    "started and stopped by the sweep and shared by its Runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@verbosity_options
def sweep_command(
    sweep_file: Path,
    out: Path,
    parallel: int | None,
    backend: str,
    episodes_backend: str,
    ray_address: str | None,
    as_json: bool,
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
      evoledger sweep study.toml --out /shared/study --backend ray   # each Run on a node of a Ray cluster
      evoledger sweep study.toml --out sweeps/study --episodes-backend ray   # Runs here, Episodes on Ray
      evoledger report sweeps/study --out study.html
    """
    on_ray = backend == "ray" or episodes_backend == "ray"
    if ray_address is not None and not on_ray:
        raise ConfigError(f"--ray-address {ray_address!r} needs --backend ray or --episodes-backend ray")
    if backend == "ray" and ray_address is not None and ray_address.startswith("ray://"):
        raise ConfigError(
            f"--backend ray cannot place Runs through Ray Client (--ray-address {ray_address}): run the sweep on a "
            "node of the cluster with --ray-address auto (or the head's HOST:PORT); --episodes-backend ray takes "
            "a ray:// address"
        )
    cluster = ExecutionBackend("ray", ray_address) if on_ray else None
    if on_ray:
        require_ray()
    spec, text = read_sweep_file(sweep_file)
    cells = expand(spec, text)
    check_cells(spec, text)
    cpus = _cpus()
    at_once = parallel or min(cpus, len(cells))
    workers = max(1, cpus // at_once)
    console = Console(stderr=True)
    record = SweepRecord.open(
        out.absolute() if backend == "ray" else out,  # the same path on every node, whatever its working directory
        sweep_id=spec.name_or(sweep_file),
        cells=cells,
        source=text,
        source_name=str(sweep_file),
    )
    try:
        terminate = signal.getsignal(signal.SIGTERM)
        with shared_backend(cluster, cpus=cpus) as shared:
            signal.signal(signal.SIGTERM, terminate)  # ray.init took SIGTERM: the sweep stops its Runs first
            episodes = shared if episodes_backend == "ray" else None
            with _placer(shared if backend == "ray" else None, record, episodes_on_ray=episodes is not None) as placer:
                views = _sweep(
                    record,
                    cells,
                    episodes,
                    sweep_file,
                    out,
                    console,
                    at_once=at_once,
                    workers=workers,
                    as_json=as_json,
                    placer=placer,
                )
        sweep_id = record.state.sweep_id
    finally:
        record.close()
    _report(out, sweep_id, cells, views, as_json=as_json)


@contextmanager
def _placer(
    cluster: ExecutionBackend | None, record: SweepRecord, *, episodes_on_ray: bool
) -> Iterator[RunPlacer | None]:
    """Places the Runs on the Ray cluster ``cluster`` (None: Runs on this machine), once every node is seen to write
    the sweep's folder; connects to it unless this process already is (the private instance it started)."""
    if cluster is None:
        yield None
        return
    import importlib

    from evoledger.kernel.sweep.ray_placement import RunPlacer

    ray = importlib.import_module("ray")
    connected = False
    if not ray.is_initialized():
        terminate = signal.getsignal(signal.SIGTERM)
        try:
            ray.init(address=cluster.ray_address, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InfraError(
                f"cannot connect to the Ray cluster at --ray-address {cluster.ray_address}: {exc}"
            ) from None
        finally:
            signal.signal(signal.SIGTERM, terminate)
        connected = True
    try:
        with RunPlacer(ray, record.root, episodes_on_ray=episodes_on_ray) as placer:
            placer.check_nodes()
            yield placer
    finally:
        if connected:
            ray.shutdown()


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
    placer: RunPlacer | None = None,
) -> Mapping[str, CellView]:
    """Start, resume or skip each cell, showing progress; the cells' views at the end."""
    extra = _backend_flags(backend)

    def _run(cell: SweepCell, run_dir: Path) -> tuple[list[str], int | None]:
        chosen = cell.run.get("workers")
        given = chosen if isinstance(chosen, int) else workers
        return run_argv(cell, run_dir, None if isinstance(chosen, int) else workers, extra), given

    plan = plan_sweep(record, cells, run_argv=_run, resume_argv=lambda cell, run_dir: resume_argv(cell, run_dir, extra))
    if placer is not None:
        placer.check_cpus({j.cell.name: placer.cpus_of(j.workers, record.run_dir(j.cell.name)) for j in plan.jobs})
    if not as_json:
        skipped = len(cells) - len(plan.jobs)
        note(
            console,
            f"sweep {printable(record.state.sweep_id)} in {printable(out)}: {len(cells)} cells; "
            f"{plan.count('run')} to start, {plan.count('resume')} to resume, {skipped} finished before",
        )
        note(console, f"{at_once} at once, --workers {workers} each unless the sweep file sets workers")
        if placer is not None:
            note(
                console, "Runs placed on the Ray cluster's nodes; their run directories and logs in the sweep's folder"
            )
        if extra:
            note(console, f"Episodes on Ray: {' '.join(printable(word) for word in extra)}")
    with _display(console, plan.views, as_json=as_json) as tick, _hint_on_interrupt(sweep_file, out, console):
        run_cells(record, plan.jobs, plan.views, parallel=at_once, on_tick=tick, placer=placer)
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
        "node": view.node,
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
    placed = any(view.node for view in views.values())  # Runs on Ray nodes: which node ran each
    for column in ("cell", "state", "budget", "best", "assessed", "time", *(("node",) if placed else ())):
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
            *((printable(view.node or ""),) if placed else ()),
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
            seen = f"{view.state} {view.node}"
            if view.state in ("waiting", "done earlier") or shown.get(view.name) == seen:
                continue
            shown[view.name] = seen
            tail = f" ({view.reason})" if view.state == "ended" else ""
            tail += f" on {view.node}" if view.node else ""
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
