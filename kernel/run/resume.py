"""``resume()``: continue a Run whose Host process died, from its ledger alone.

Opening the ledger for writing takes the single-writer lock (a live Host refuses a second one) and
repairs a head manifest that lags a committed append (a crash between the commit and the manifest
write); a manifest *ahead* of the log is a truncated record and refuses to resume. Then the log is
folded: an Agent that was running when the Host died is stopped and its exit recorded, Episodes in
flight are completed without charging budget twice, the Agent is restarted if its authority was still
open, and judging continues from whatever the log already holds. The Episode plan is re-derived from
the secret key the Run recorded in its ``run-key`` Event (never a new one) and checked against the
recorded pool commitment.

Nothing the record names is run unless the user says so: a Benchmark named by an import string needs
``trust_benchmark`` and an Agent that is a ``command:`` or an import string needs ``trust_agent`` (or the user
re-stating it as ``agent``); otherwise :class:`UntrustedRecordError` before anything is started. The recorded
worker count and Policy memory cap are bounded by this machine, and the Agent's timeout and finish grace
by sane maxima (7 days, 1 hour).

The run directory may come from someone else: before anything is opened for writing, a ``workspace``,
``host`` or ``control`` that is a link, and any Host-written file there that is a link, fifo or device,
refuses the resume (:meth:`RunLayout.check_safe`); so does a ``ledger.sqlite`` whose schema has anything
beyond the ledger's tables (a planted trigger would run on the first append).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from evoledger.kernel.agents.adapters import COMMAND_PREFIX
from evoledger.kernel.agents.marked import end_marked_processes
from evoledger.kernel.agents.sandbox import AgentIsolation, resolve_agent_isolation
from evoledger.kernel.agents.stale import stop_stale_agent_group
from evoledger.kernel.execution import ExecutionBackend, Isolation, bounded_limits, bounded_workers
from evoledger.kernel.registry import BenchmarkRegistry, UntrustedRecordError, default_registry, is_import_string
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.judging import OnJudged
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.runner import RunResult, continue_run, summarize
from evoledger.kernel.run.setup import plan_run, recorded_run_key
from evoledger.kernel.session import WORKSPACE_ENV
from evoledger.ledger.errors import ConfigError, InputError
from evoledger.ledger.events import AgentExited, AgentStarted, RunCreated
from evoledger.ledger.signing import HeadSigner
from evoledger.ledger.signing_keys import SigningKey
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


def _sign(ledger: Ledger, created: RunCreated, key: SigningKey | None, ended: bool) -> None:
    """Sign the head again (and every later one) with the key the Run names; refuse another key.

    An unsigned Run stays unsigned: its ``run-created`` names no key, so no later signature could be checked.
    """
    if created.signer is None:
        return
    if key is None and ended:
        return
    if key is None or key.fingerprint != created.signer.fingerprint:
        given = "no signing key" if key is None else f"the key {key.fingerprint} ({key.path or 'in memory'})"
        raise ConfigError(
            f"{ledger.path} is signed by {created.signer.fingerprint}, but resume was given {given}; signing it with "
            "another key would break its signature. Resume it with --signing-key <the key file of that fingerprint>"
        )
    ledger.sign_heads(HeadSigner(key, created.run_id))


def _check_trust(config: RunConfig, root: Path, trust_benchmark: bool, trust_agent: bool, agent: str | None) -> None:
    """Refuse a record that names code (import strings, a ``command:`` Agent) the user has not vouched for."""
    name = config.benchmark.name
    if is_import_string(name) and not trust_benchmark:
        raise UntrustedRecordError(
            f"{root} names its Benchmark by the import string {name!r}: resuming would import and run that code. "
            "If you trust whoever wrote this record, pass --trust-recorded-benchmark"
        )
    recorded = config.agent.name
    if agent is not None and agent != recorded:
        raise ConfigError(
            f"--agent {agent!r} is not the Agent {root} recorded ({recorded!r}); a resumed Run keeps its Agent: "
            "re-state it exactly or leave --agent out"
        )
    if (recorded.startswith(COMMAND_PREFIX) or is_import_string(recorded)) and not (trust_agent or agent == recorded):
        raise UntrustedRecordError(
            f"{root} records the Agent {recorded!r}: resuming would run that command as you. If you trust whoever "
            f"wrote this record, pass --trust-recorded-agent (or re-state it: --agent {recorded!r})"
        )
    if config.agent.executable is not None and not trust_agent:
        raise UntrustedRecordError(
            f"{root} records the Agent program {config.agent.executable!r} (--agent-option executable): resuming "
            "would run it as you. If you trust whoever wrote this record, pass --trust-recorded-agent"
        )


_MAX_AGENT_SECONDS: Final = 7 * 86_400
_MAX_GRACE_SECONDS: Final = 3_600.0


def _bounded(config: RunConfig) -> RunConfig:
    """The recorded configuration with every resource figure bounded by this machine and sane limits."""
    return config.model_copy(
        update={
            "workers": bounded_workers(config.workers),
            "limits": bounded_limits(config.limits),
            "agent_timeout_seconds": min(config.agent_timeout_seconds, _MAX_AGENT_SECONDS),
            "finish_grace_seconds": min(config.finish_grace_seconds, _MAX_GRACE_SECONDS),
        }
    )


def resume(
    run_dir: Path,
    *,
    registry: BenchmarkRegistry | None = None,
    on_update: Callable[[RunState], None] | None = None,
    isolation: Isolation | None = None,
    agent_isolation: AgentIsolation = "auto",
    signing_key: SigningKey | None = None,
    trust_benchmark: bool = False,
    trust_agent: bool = False,
    agent: str | None = None,
    on_judged: OnJudged | None = None,
    backend: ExecutionBackend | None = None,
) -> RunResult:
    """Continue the Run in ``run_dir`` to its end. A Run that already ended is returned as it is.

    Policies run under the recorded isolation unless ``isolation`` overrides it. The restarted Agent runs under
    ``agent_isolation`` (``auto``: bwrap where it works), never under the record's own choice. A signed Run is signed
    again with ``signing_key``, which must be the key its ``run-created`` names. ``trust_benchmark`` / ``trust_agent``:
    the user trusts the record's author, so a Benchmark named by an import string may be imported and a recorded
    ``command:`` (or import-string) Agent run; ``agent``, when given, must equal the recorded Agent name and
    vouches for it. ``on_update``, ``on_judged`` and ``backend`` mean what they mean for
    :func:`~evoledger.kernel.run.run`.
    """
    layout = RunLayout(Path(run_dir).resolve())
    layout.check_safe()
    with Ledger.open(layout.root, writable=True) as ledger:
        created = _run_created(ledger)
        try:
            config = RunConfig.model_validate(created.config)
        except ValueError as exc:
            raise ConfigError(f"the recorded configuration of {layout.root} cannot be read: {exc}") from exc
        if isolation is not None:
            config = config.model_copy(update={"isolation": isolation})
        state = fold(r.event for r in ledger.events())
        if state.ended_reason is None:  # refused before anything is written, the signature included
            _check_trust(config, layout.root, trust_benchmark, trust_agent, agent)
            agent_choice = resolve_agent_isolation(agent_isolation).isolation  # never the record's own value
            config = config.model_copy(update={"agent_isolation": agent_choice})
        _sign(ledger, created, signing_key, ended=state.ended_reason is not None)
        if state.ended_reason is not None:
            return summarize(layout, state)
        config = _bounded(config)
        key = recorded_run_key((r.event for r in ledger.events(kinds=["run-key"])), layout.root)
        stale = _stop_stale_agent(ledger, state, layout)
        if stale is not None:
            ledger.append([stale])
        benchmark = (registry or default_registry()).make(
            config.benchmark.name, config.benchmark.config, allow_import=trust_benchmark
        )
        plan = plan_run(benchmark, config, key)
        if plan.commitment != created.pool_commitment:
            raise ConfigError(
                f"the Benchmark {config.benchmark.name!r} now plans different Episodes than when {layout.root} was "
                "created (pool commitment differs); resume it with the same evoledger and Benchmark versions"
            )
        layout.create_dirs()
        return continue_run(
            ledger=ledger,
            layout=layout,
            config=config,
            benchmark=benchmark,
            plan=plan,
            on_update=on_update,
            signing_key=signing_key,
            on_judged=on_judged,
            backend=backend,
        )
