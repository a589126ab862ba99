"""``resume()``: continue a Run whose Host process died, from its ledger alone.

Opening the ledger for writing takes the single-writer lock (a live Host refuses a second one) and
repairs a head manifest that lags a committed append (a crash between the commit and the manifest
write); a manifest *ahead* of the log is a truncated record and refuses to resume. Then the log is
folded: an Agent that was running when the Host died is stopped and its exit recorded, Episodes in
flight are completed without charging budget twice, the Agent is restarted if its authority was still
open, and judging continues from whatever the log already holds. The Episode plan is re-derived from
the secret key the Run recorded in its ``run-key`` Event (never a new one) and checked against the
recorded pool commitment.

The run directory may come from someone else: before anything is opened for writing, a ``workspace``,
``host`` or ``control`` that is a link, and any Host-written file there that is a link, fifo or device,
refuses the resume (:meth:`RunLayout.check_safe`); so does a ``ledger.sqlite`` whose schema has anything
beyond the ledger's tables (a planted trigger would run on the first append).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evoledger.kernel.agents.marked import end_marked_processes
from evoledger.kernel.agents.stale import stop_stale_agent_group
from evoledger.kernel.registry import BenchmarkRegistry, default_registry
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.runner import RunResult, continue_run, summarize
from evoledger.kernel.run.setup import plan_run, recorded_run_key
from evoledger.kernel.session import WORKSPACE_ENV
from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import AgentExited, AgentStarted, RunCreated
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import RunState, fold

__all__ = ["resume"]


def _run_created(ledger: Ledger) -> RunCreated:
    first = next(iter(ledger.events(kinds=["run-created"])), None)
    if first is None or not isinstance(first.event, RunCreated):
        raise InputError(
            f"{ledger.path} is not a Run (it has no run-created Event); an evaluation record cannot be resumed"
        )
    return first.event


def _stop_stale_agent(ledger: Ledger, state: RunState, layout: RunLayout) -> AgentExited | None:
    """End an Agent process group left running by the dead Host, and the Event recording its end.

    The group (pgid == the recorded pid) is stopped only if that pid still belongs to this Run's Agent
    (``kernel.agents.stale``): a pid reused by an unrelated process is left alone. Every process whose environment
    carries this Run's workspace marker is stopped in any case (no Host is alive: the ledger lock says so), even
    when the log already records the Agent's exit.
    """
    marker = f"{WORKSPACE_ENV}={layout.workspace}"
    if not state.agent_running:
        end_marked_processes(marker)
        return None
    started = [r.event for r in ledger.events(kinds=["agent-started"])]
    last = started[-1]
    if not isinstance(last, AgentStarted):
        return None
    stop_stale_agent_group(last.pid, marker)
    return AgentExited(
        pid=last.pid, attempt=last.attempt, exit_code=None, signal=None, duration_ms=0, reason="host_crashed"
    )


def resume(
    run_dir: Path,
    *,
    registry: BenchmarkRegistry | None = None,
    on_update: Callable[[RunState], None] | None = None,
) -> RunResult:
    """Continue the Run in ``run_dir`` to its end. A Run that already ended is returned as it is."""
    layout = RunLayout(Path(run_dir).resolve())
    layout.check_safe()
    with Ledger.open(layout.root, writable=True) as ledger:
        created = _run_created(ledger)
        try:
            config = RunConfig.model_validate(created.config)
        except ValueError as exc:
            raise ConfigError(f"the recorded configuration of {layout.root} cannot be read: {exc}") from exc
        state = fold(r.event for r in ledger.events())
        if state.ended_reason is not None:
            return summarize(layout, state, [])
        key = recorded_run_key((r.event for r in ledger.events(kinds=["run-key"])), layout.root)
        stale = _stop_stale_agent(ledger, state, layout)
        if stale is not None:
            ledger.append([stale])
        benchmark = (registry or default_registry()).make(config.benchmark.name, config.benchmark.config)
        plan = plan_run(benchmark, config, key)
        if plan.commitment != created.pool_commitment:
            raise ConfigError(
                f"the Benchmark {config.benchmark.name!r} now plans different Episodes than when {layout.root} was "
                "created (pool commitment differs); resume it with the same evoledger and Benchmark versions"
            )
        layout.create_dirs()
        return continue_run(
            ledger=ledger, layout=layout, config=config, benchmark=benchmark, plan=plan, on_update=on_update
        )
