"""The coordinator loop of a live Run: Session requests in, Host decisions out, Agent supervised.

The listener thread (``SessionServer``) only moves frames; this loop, on the coordinator thread, takes
each request, lets the :class:`RunHost` decide it, and answers. It ends when the Agent finishes (then
the Agent gets a grace period and its process group is stopped), exits, or times out.

No request can stop the Host: an unexpected exception while deciding one is answered ``internal_error``
and recorded host-only (``request-failed``), and the loop goes on. Only a failure of the ledger itself
(full disk, lost lock, damage) stops the Host, since nothing can be decided without a record; ``resume``
continues such a Run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from evoledger.kernel.agents import AgentExit, AgentSupervisor
from evoledger.kernel.agents.transcripts import transcript_event
from evoledger.kernel.run.host import RunHost
from evoledger.kernel.session import PendingRequest, Rejection, SessionServer
from evoledger.ledger.errors import ConfigError, EvoLedgerError, InfraError
from evoledger.ledger.events import AgentExited, AgentStarted
from evoledger.ledger.store import Ledger

__all__ = ["AgentOutcome", "AgentStartFailed", "describe_failure", "drive_session"]

_POLL_SECONDS = 0.05

_HOST_STOPPED: Final = "the Host cannot record this request (its ledger failed); the Run stopped and can be resumed"


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """How Agent authority ended: the terminal reason it implies and the Agent's exit."""

    reason: str
    exit: AgentExit


class AgentStartFailed(EvoLedgerError):
    """The Agent's process could not be started (its program is missing, not executable or not a program, or its
    sandbox cannot be built). Nothing of the attempt is recorded; the Run ends ``agent_failed`` with this message."""


def describe_failure(outcome: AgentOutcome) -> str:
    """How a failed Agent ended, in words for the terminal Event (no duration: the record stays deterministic)."""
    if outcome.exit.signal is not None:
        return f"the Agent was ended by signal {outcome.exit.signal}"
    return f"the Agent exited with status {outcome.exit.exit_code}"


def _answer(host: RunHost, pending: PendingRequest) -> None:
    """Decide one request and answer it. No request can stop the Host: an unexpected error while deciding it
    (a Host bug) is recorded host-only (``request-failed``) and answered ``internal_error``, and the Run goes on.
    """
    request = pending.request
    try:
        result = host.handle(request.method, request.params)
    except Rejection as rejection:
        pending.reject(rejection.code, rejection.message, rejection.retryable)
    except Exception as error:
        try:
            internal = host.record_failure(request.method, request.params, error)
        except BaseException:  # the ledger itself failed (full disk, lost lock): the Host cannot go on
            pending.reject("internal_error", _HOST_STOPPED)
            raise
        pending.reject(internal.code, internal.message, internal.retryable)
    else:
        try:
            pending.reply(result.wire())
        except EvoLedgerError as exc:  # the answer could not be encoded or is over the frame limit
            pending.reject("invalid_request", f"the Host's answer could not be sent: {exc}")


def _reason(host: RunHost, exit_info: AgentExit) -> str:
    if host.state.finished:
        return "finished"
    if exit_info.timed_out:
        return "agent_timeout"
    if host.state.budget_left == 0:
        return "budget_exhausted"
    return "agent_exited" if exit_info.exit_code == 0 else "agent_failed"


def drive_session(
    *,
    host: RunHost,
    server: SessionServer,
    supervisor: AgentSupervisor,
    ledger: Ledger,
    agent_name: str,
    attempt: int,
    grace_seconds: float,
    on_tick: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    skills: bytes | None = None,
) -> AgentOutcome:
    """Start the Agent, serve its requests until authority ends, and record the Agent's start and exit.

    ``skills`` is the Object of the Agent Skills placed in the workspace (``kernel.agents.agent_skills``), recorded
    with the task text in ``agent-started``.
    """
    task_digest = ledger.objects.put(supervisor.task.task_text.encode("utf-8"))
    skills_digest = None if skills is None else ledger.objects.put(skills)
    try:
        pid = supervisor.start()
    except (ConfigError, InfraError) as exc:  # not installed, not executable, not a program, no sandbox
        raise AgentStartFailed(str(exc)) from exc
    host.append(
        [
            AgentStarted(
                agent=agent_name,
                command=tuple(supervisor.command.argv),
                pid=pid,
                attempt=attempt,
                task_digest=task_digest,
                skills_digest=skills_digest,
            )
        ]
    )
    exit_info: AgentExit | None = None
    grace_ends: float | None = None
    while exit_info is None:
        pending = server.next_request(timeout=_POLL_SECONDS)
        if pending is not None:
            _answer(host, pending)  # after finish the Host answers session_closed
        if on_tick is not None:
            on_tick()
        exit_info = supervisor.poll()
        if exit_info is None and host.state.finished:
            # Agent authority has ended: a grace period to exit on its own, then its process group is stopped.
            now = clock()
            grace_ends = now + grace_seconds if grace_ends is None else grace_ends
            if now >= grace_ends:
                exit_info = supervisor.stop(1.0)  # SIGTERM, then SIGKILL a second later
    # Requests that raced the end of authority are refused, never decided.
    while (late := server.next_request(timeout=0)) is not None:
        late.reject("session_closed", "Agent authority has ended; no further requests are accepted")
    reason = _reason(host, exit_info)
    stdout = exit_info.stdout_path.read_bytes() if exit_info.stdout_path.exists() else None
    stdout_digest = ledger.objects.put(stdout) if stdout is not None else None
    # the CLI's transcript (kernel.agents.transcripts), when its adapter asked it to print one
    parsed = transcript_event(
        supervisor.command.transcript,
        stdout,
        ledger.objects,
        pid=pid,
        attempt=attempt,
        stdout_path=exit_info.stdout_path,
    )
    transcript = [parsed] if parsed is not None else []
    stderr_digest = ledger.objects.put(exit_info.stderr_path.read_bytes()) if exit_info.stderr_path.exists() else None
    host.append(
        [
            AgentExited(
                pid=pid,
                attempt=attempt,
                exit_code=exit_info.exit_code,
                signal=exit_info.signal,
                stdout_digest=stdout_digest,
                stderr_digest=stderr_digest,
                duration_ms=int(exit_info.duration * 1000),
                reason=reason,
            ),
            *transcript,
        ]
    )
    return AgentOutcome(reason=reason, exit=exit_info)
