"""``run()``: a complete Run from creation to the terminal Event, and the Python API behind ``evoledger run``."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from evoledger.kernel.agents import AgentSupervisor, AgentTask, make_agent
from evoledger.kernel.agents.agent_skills import SKILLS_DIR, place_skills, skills_for, skills_object
from evoledger.kernel.agents.sandbox import AgentSandbox, evoledger_key_folders, resolve_agent_isolation
from evoledger.kernel.authoring import Benchmark
from evoledger.kernel.authoring.keyed_seeds import keyed_seed
from evoledger.kernel.execution import ExecutionBackend, open_executor, resolve_isolation
from evoledger.kernel.registry import BenchmarkRegistry, default_registry
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.judging import OnJudged, judge_run
from evoledger.kernel.run.layout import RunLayout, write_report
from evoledger.kernel.run.live import LiveRun
from evoledger.kernel.run.session_loop import AgentStartFailed, describe_failure, drive_session
from evoledger.kernel.run.session_place import SessionPlace, session_place
from evoledger.kernel.run.setup import RunPlan, create_run, recorded_run_key
from evoledger.kernel.run.task import task_text_for
from evoledger.kernel.session import SOCKET_ENV, WORKSPACE_ENV, SessionServer
from evoledger.ledger.errors import ConfigError, EvoLedgerError
from evoledger.ledger.events import RunEnded, RunEndReason
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.store import Ledger
from evoledger.projections.run_state import RunState
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RunResult", "SubmissionRow", "ValidationRow", "continue_run", "run", "summarize"]


class SubmissionRow(BaseModel):
    """One accepted Submission in a :class:`RunResult`: its public score and how its Policy fared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    submission_id: str
    score: float | None
    episodes: int
    policy_failures: int


class ValidationRow(BaseModel):
    """One validated Candidate in a :class:`RunResult`, best first (the ranking that selects)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    submission_id: str
    score: float | None
    policy_failures: int


class RunResult(BaseModel):
    """What a Run ended with (also written to ``host/report.json``, never into the workspace)."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    reason: RunEndReason | Literal["running"]
    selected: str | None
    validation: list[ValidationRow]
    assessment_score: float | None
    submissions: list[SubmissionRow]
    budget_total: int
    budget_used: int
    budget_left: int
    seed: int | None = None
    """The user-given seed the Run's key was derived from; ``None``: a random secret key."""
    held_out_episodes: Literal["secret", "predictable"] = "secret"
    """``predictable`` when a known seed derived the key: anyone who knows it can compute the held-out Episodes."""
    signer: str | None = None
    """The fingerprint of the key that signs the Run's head (``ledger.sig``); ``None``: unsigned. The Host cannot vouch
    for its own signature: check it with ``evoledger ledger verify RUN --trusted-key <fingerprint>``."""
    message: str = Field(default="", exclude=True)
    """What the terminal Event says beyond its reason (why the Agent failed, a fallback selection); ``""``: nothing.
    Read from ``run-ended`` by :func:`continue_run`; not written to the report (Runs recorded before had none)."""
    validated: bool = Field(default=True, exclude=True)
    """Whether ``validation`` holds Validation scores; ``False``: no Validation was configured and its one row is
    the Candidate's public score. Derived from the recorded configuration, so not written to the report."""


def summarize(layout: RunLayout, state: RunState) -> RunResult:
    """The :class:`RunResult` of a Run in ``state`` (its Validation rows: the run state's judged Candidates)."""
    seed = state.config.get("seed")
    seed = seed if type(seed) is int else None
    return RunResult(
        run_dir=layout.root,
        reason=state.ended_reason or "running",
        selected=state.selected,
        validation=[
            ValidationRow(submission_id=c.submission_id, score=c.score, policy_failures=c.policy_failures)
            for c in state.ranking
        ],
        assessment_score=state.assessment_score,
        submissions=[
            SubmissionRow(
                submission_id=sid,
                score=state.submissions[sid].score,
                episodes=len(state.submissions[sid].episodes),
                policy_failures=state.submissions[sid].policy_failures,
            )
            for sid in state.submission_order
        ],
        budget_total=state.episode_budget,
        budget_used=state.charged - state.refunded,
        budget_left=state.budget_left,
        seed=seed,
        held_out_episodes="secret" if seed is None else "predictable",
        signer=state.signer,
        validated=state.validated,
    )


def continue_run(
    *,
    ledger: Ledger,
    layout: RunLayout,
    config: RunConfig,
    benchmark: Benchmark,
    plan: RunPlan,
    on_update: Callable[[RunState], None] | None = None,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    signing_key: SigningKey | None = None,
    on_judged: OnJudged | None = None,
    backend: ExecutionBackend | None = None,
) -> RunResult:
    """Drive a created (or resumed) Run to its end: Agent session, judging, ``run-ended``.

    ``random_bytes`` draws the Agent's own seed when the Run has no user-given seed. The Agent runs under
    ``config.agent_isolation`` (``auto`` is resolved here if the caller has not); a sandboxed Agent never sees
    ``signing_key``'s file nor the user's evoledger folders.
    """
    with open_executor(
        backend, config.benchmark, workers=config.workers, isolation=config.isolation, policy_abi=config.policy_abi
    ) as executor:
        live = LiveRun.open(
            ledger=ledger, layout=layout, config=config, benchmark=benchmark, plan=plan, executor=executor
        )
        failure = None
        if live.session_open:
            live.complete_in_flight()  # work in flight at a crash (resume)
            failure = _agent_session(live, on_update, random_bytes, signing_key)
            live.host.refresh_feedback(full=True)  # undo anything the Agent did to feedback/ before judging
        judge_run(live, on_judged=on_judged, agent_failure=failure)
    ended = [r.event for r in ledger.events(kinds=["run-ended"])]
    result = summarize(layout, live.host.state)
    if ended and isinstance(ended[-1], RunEnded) and ended[-1].message:
        result = result.model_copy(update={"message": ended[-1].message})
    write_report(layout, (json.dumps(result.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode())
    return result


def _agent_session(
    live: LiveRun,
    on_update: Callable[[RunState], None] | None,
    random_bytes: Callable[[int], bytes],
    signing_key: SigningKey | None,
) -> str | None:
    """Start the Agent's next attempt and serve its Session until its authority ends; its process group is stopped.

    Returns why the Agent failed (it could not be started, or it exited with an error), else ``None``. An Agent
    that could not be started leaves no trace of the attempt but this message, which ``run-ended`` records.
    """
    host, config, layout = live.host, live.config, live.layout
    attempt = host.state.agent_attempts + 1
    coding_agent = make_agent(config.agent.name, config.agent.adapter_options())
    skills = skills_for(_family(config))
    place_skills(layout.workspace, skills)  # afresh for every attempt: whatever the Agent did to them is undone
    task = AgentTask(
        task_text=task_text_for(live.benchmark, config, resumed=attempt > 1, skills=tuple(skills)),
        workspace=layout.workspace,
        model=config.agent.model,
        extra_args=config.agent.args,
        timeout=config.agent_timeout_seconds,
        task_file=layout.task_file,
    )
    agent_seed = _agent_seed(config, live.ledger, layout, random_bytes)
    with session_place(layout) as place:
        try:
            supervisor = AgentSupervisor(
                coding_agent,
                task,
                log_dir=layout.host / f"agent-{attempt}",
                marker=f"{WORKSPACE_ENV}={layout.workspace}",  # finds its setsid() children too
                sandbox=_agent_sandbox(config, layout, signing_key, place),
                path_first=(place.bin_dir,),  # the Host's own evoledger-session, activated venv or not
                host_env={
                    SOCKET_ENV: str(place.socket),
                    WORKSPACE_ENV: str(layout.workspace),
                    "EVOLEDGER_AGENT_SEED": str(agent_seed),
                    "EVOLEDGER_TASK_FILE": str(layout.task_file),
                },
            )
        except ConfigError as exc:  # the adapter cannot build its command, or the sandbox cannot be had
            return f"the Agent could not be started: {exc}"
        place.socket.unlink(missing_ok=True)
        with SessionServer(place.socket) as server:
            tick = (lambda: on_update(host.state)) if on_update is not None else None
            try:
                outcome = drive_session(
                    host=host,
                    server=server,
                    supervisor=supervisor,
                    ledger=live.ledger,
                    agent_name=coding_agent.name,
                    attempt=attempt,
                    grace_seconds=config.finish_grace_seconds,
                    on_tick=tick,
                    skills=skills_object(skills),
                )
            except AgentStartFailed as exc:
                return f"the Agent could not be started: {exc}"
            finally:
                # Whatever ended the Session (including a Host error): the Agent's authority ends with it.
                if supervisor.pid is not None:
                    supervisor.stop(grace_seconds=1.0)
                place_skills(layout.workspace, skills)  # as recorded, whatever an unsandboxed root Agent did
    return describe_failure(outcome) if outcome.reason == "agent_failed" else None


def _family(config: RunConfig) -> str | None:
    """The family of the Run's Benchmark (``classic-control`` for ``cartpole``), ``None`` when it has no entry."""
    try:
        return default_registry().entry(config.benchmark.name).family
    except EvoLedgerError:
        return None


def _agent_sandbox(
    config: RunConfig, layout: RunLayout, signing_key: SigningKey | None, place: SessionPlace
) -> AgentSandbox | None:
    """The Agent's bubblewrap sandbox, or ``None`` when it runs as a plain process (``agent_isolation`` local)."""
    if resolve_agent_isolation(config.agent_isolation).isolation != "bwrap":
        return None
    key_file = None if signing_key is None else signing_key.path
    return AgentSandbox(
        run_root=layout.root,
        workspace=layout.workspace,
        readable=(layout.control, layout.task_file),
        hidden_folders=tuple(evoledger_key_folders()),
        hidden_files=() if key_file is None else (key_file,),
        outside_readable=(place.private,),
        read_only=(layout.workspace / SKILLS_DIR,),
    )


def _agent_seed(config: RunConfig, ledger: Ledger, layout: RunLayout, random_bytes: Callable[[int], bytes]) -> int:
    """The Agent's own seed: fresh random bits, or with a user-given seed the key's HMAC under label ``agent``.

    Neither lets the Agent compute a Host seed: random bits are independent of the key, and an HMAC output
    reveals neither the key nor the HMAC under any other label.
    """
    if config.seed is None:
        return int.from_bytes(random_bytes(4), "big")
    key = recorded_run_key((r.event for r in ledger.events(kinds=["run-key"])), layout.root)
    return keyed_seed(key, "agent") % 2**32


def run(
    config: RunConfig | None = None,
    *,
    record_to: Path,
    initial_program: Path | None = None,
    registry: BenchmarkRegistry | None = None,
    on_update: Callable[[RunState], None] | None = None,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    signing_key: SigningKey | None = None,
    on_judged: OnJudged | None = None,
    backend: ExecutionBackend | None = None,
) -> RunResult:
    """Run a complete Run: create it in ``record_to``, let ``config.agent`` evolve the Program, judge, record the end.

    Without ``config.seed`` the Run's secret key (and the Agent's seed) come from ``random_bytes``. With
    ``signing_key`` every head of the log is signed into ``ledger.sig`` (the CLI passes the Host's key).
    ``on_update`` sees the run state as the Agent works; ``on_judged(phase, done, total)`` each Validation and
    Assessment Episode that ends (``kernel.run.judging``). ``backend``: where Episodes run (default: locally;
    ``ExecutionBackend("ray")`` on a Ray cluster); it is not recorded.

    >>> run(RunConfig(episode_budget=40), record_to=Path("runs/demo"))  # doctest: +SKIP
    """
    config = config or RunConfig()
    # an unknown Agent, or an option it does not take, is refused before anything is created
    make_agent(config.agent.name, config.agent.adapter_options())
    # ``auto`` is resolved before run-created records the config: the record says which isolation was used.
    config = config.model_copy(
        update={
            "isolation": resolve_isolation(config.isolation).isolation,
            "agent_isolation": resolve_agent_isolation(config.agent_isolation).isolation,
        }
    )
    created = create_run(
        record_to,
        config,
        initial_program=initial_program,
        registry=registry,
        random_bytes=random_bytes,
        signing_key=signing_key,
    )
    with created.ledger:
        return continue_run(
            ledger=created.ledger,
            layout=created.layout,
            config=config,
            benchmark=created.benchmark,
            plan=created.plan,
            on_update=on_update,
            random_bytes=random_bytes,
            signing_key=signing_key,
            on_judged=on_judged,
            backend=backend,
        )
