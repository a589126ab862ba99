"""Check 4 of replay (``--execute``): re-run every recorded Episode and compare it with the record.

Each training Episode (``episode-finished`` of a Submission), Validation Episode
(``validation-episode-finished``) and Assessment Episode (``assessment-finished``) is run again
through the real :class:`~evoledger.kernel.execution.LocalExecutor`, from the Program snapshot it
recorded (materialised from the ledger's Objects into a temporary folder, never into the Run) and
the Host seeds of its ``episode-planned`` Event, with the Run's Policy limits. An Episode
reproduces when its trajectory digest, return and status equal the recorded ones; every one that
does not is reported with both digests (a non-deterministic Benchmark or Policy, or a record that
does not describe what ran).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evoledger.kernel.authoring import EpisodeSpec, Split
from evoledger.kernel.execution import (
    EpisodeTask,
    ExecutionBackend,
    PolicyLimits,
    bounded_limits,
    bounded_workers,
    open_executor,
)
from evoledger.kernel.replay.record import RunRecord
from evoledger.kernel.replay.report import CheckResult, Finding
from evoledger.kernel.run.private_copies import ProgramCache
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import EvoLedgerError, LedgerError
from evoledger.ledger.events import (
    AssessmentFinished,
    EpisodeFinished,
    SubmissionAccepted,
    ValidationEpisodeFinished,
    from_stored,
)
from evoledger.ledger.records import StoredEvent
from evoledger.projections.audit import AuditReport, PlannedSeed

__all__ = ["RecordedEpisode", "check_execution", "recorded_episodes"]

_KINDS = frozenset({"submission-accepted", "episode-finished", "validation-episode-finished", "assessment-finished"})


@dataclass(frozen=True, slots=True)
class RecordedEpisode:
    """One Episode as the log records it: where, whose Program, and its outcome."""

    seq: int
    split: Split
    index: int
    owner: str
    program_digest: str
    trajectory_digest: str
    episode_return: float
    status: str


def recorded_episodes(record: RunRecord) -> tuple[list[RecordedEpisode], list[Finding]]:
    """Every training, Validation and Assessment Episode of the record, in log order."""
    programs: dict[str, str] = {}
    found: list[RecordedEpisode] = []
    problems: list[Finding] = []
    for seq, kind, version, visibility, payload, prev_hash, digest, recorded_at in record.rows:
        if kind not in _KINDS:
            continue
        try:
            event = from_stored(StoredEvent(seq, kind, version, visibility, payload, prev_hash, digest, recorded_at))
        except LedgerError as exc:
            problems.append(Finding("schema", f"cannot read this Episode record: {exc}", seq=seq))
            continue
        if isinstance(event, SubmissionAccepted):
            programs[event.submission_id] = event.program_digest
        elif isinstance(event, EpisodeFinished) and event.submission_id is not None:
            program = programs.get(event.submission_id)
            if program is None:
                problems.append(Finding("unknown_submission", f"{event.submission_id} was never accepted", seq=seq))
                continue
            found.append(
                RecordedEpisode(
                    seq,
                    "train",
                    event.index,
                    event.submission_id,
                    program,
                    event.trajectory_digest,
                    event.episode_return,
                    event.status,
                )
            )
        elif isinstance(event, ValidationEpisodeFinished):
            found.append(
                RecordedEpisode(
                    seq,
                    "validation",
                    event.index,
                    event.submission_id,
                    event.program_digest,
                    event.trajectory_digest,
                    event.episode_return,
                    event.status,
                )
            )
        elif isinstance(event, AssessmentFinished):
            found.extend(
                RecordedEpisode(
                    seq,
                    "assessment",
                    e.index,
                    event.submission_id,
                    event.program_digest,
                    e.trajectory_digest,
                    e.episode_return,
                    e.status,
                )
                for e in event.episodes
            )
    return found, problems


def _task(episode: RecordedEpisode, plan: PlannedSeed, cache: ProgramCache, limits: PolicyLimits) -> EpisodeTask:
    spec = EpisodeSpec(
        split=episode.split,
        index=episode.index,
        seed=plan.env_seed,
        scenario=plan.scenario or None,
    )
    return EpisodeTask(
        episode=spec, program_dir=cache.materialize(episode.program_digest), policy_seed=plan.policy_seed, limits=limits
    )


def check_execution(
    record: RunRecord,
    audit: AuditReport,
    *,
    workers: int | None = None,
    isolation: str = "auto",
    trust_benchmark: bool = False,
    on_episode: Callable[[int, int], None] | None = None,
    backend: ExecutionBackend | None = None,
) -> CheckResult:
    """Check 4 (see the module docstring); Programs run under ``isolation`` (never the record's own choice).

    ``on_episode(done, total)`` is called once before the first Episode is re-run (``done`` 0) and once after each
    (``total``: the Episodes that can be re-run).

    ``workers`` (else the recorded count) and the recorded Policy memory cap are bounded by this machine.
    ``trust_benchmark``: the workers may import a Benchmark the record names by import string (else they refuse
    it and a finding says so). ``backend``: where the Episodes are re-run (default: locally).
    """
    start = time.perf_counter()
    config = record.config
    if config is None:
        why = record.config_error or "the log has no run-created Event"
        return CheckResult.of(
            "execution",
            "nothing re-run",
            [Finding("config_unreadable", f"cannot re-run: {why}")],
            seconds=time.perf_counter() - start,
        )
    episodes, findings = recorded_episodes(record)
    planned = {(p.split, p.index): p for p in audit.planned}
    reproduced = 0
    with tempfile.TemporaryDirectory(prefix="evoledger-replay-") as tmp:
        cache = ProgramCache(Path(tmp), record.objects)
        runnable: list[tuple[RecordedEpisode, EpisodeTask]] = []
        for episode in episodes:
            plan = planned.get((episode.split, episode.index))
            if plan is None:
                findings.append(
                    Finding(
                        "unplanned",
                        f"{episode.split} Episode {episode.index} of {episode.owner} "
                        "has no episode-planned seeds: it cannot be re-run",
                        seq=episode.seq,
                    )
                )
                continue
            try:
                runnable.append((episode, _task(episode, plan, cache, bounded_limits(config.limits))))
            except EvoLedgerError as exc:
                findings.append(
                    Finding(
                        "program_unavailable",
                        f"Program {episode.program_digest} of {episode.owner} cannot be materialised: {exc}",
                        seq=episode.seq,
                        digest=episode.program_digest,
                    )
                )
        try:
            with open_executor(
                backend,
                config.benchmark,
                workers=bounded_workers(config.workers, workers),
                isolation=isolation,
                allow_import=trust_benchmark,
                policy_abi=config.policy_abi,  # the recorded one: the Programs were written to it
            ) as executor:
                outcomes = executor.run([task for _, task in runnable])
                if on_episode is not None:
                    on_episode(0, len(runnable))
                for done, ((episode, _), outcome) in enumerate(zip(runnable, outcomes, strict=True), start=1):
                    digest = digest_of(outcome.trajectory or b"")
                    where = f"{episode.split} Episode {episode.index} of {episode.owner}"
                    if outcome.status == "infra_fault":
                        findings.append(
                            Finding(
                                "not_rerun",
                                f"{where} could not be re-run (infra fault: "
                                f"{outcome.failure_message}); its reproduction is unconfirmed",
                                seq=episode.seq,
                                digest=episode.trajectory_digest,
                            )
                        )
                    elif (digest, outcome.episode_return, outcome.status) != (
                        episode.trajectory_digest,
                        episode.episode_return,
                        episode.status,
                    ):
                        findings.append(
                            Finding(
                                "not_reproduced",
                                f"{where} did not reproduce: recorded trajectory {episode.trajectory_digest} (return "
                                f"{episode.episode_return}, {episode.status}), re-run {digest} (return "
                                f"{outcome.episode_return}, {outcome.status}). The Benchmark or the Policy is not "
                                "deterministic in its seeds, or the record does not describe what ran",
                                seq=episode.seq,
                                digest=episode.trajectory_digest,
                            )
                        )
                    else:
                        reproduced += 1
                    if on_episode is not None:
                        on_episode(done, len(runnable))
        except EvoLedgerError as exc:
            findings.append(Finding("executor_failed", f"the Episodes could not be re-run: {exc}"))
    counts = {split: sum(1 for e in episodes if e.split == split) for split in ("train", "validation", "assessment")}
    summary = (
        f"{reproduced} of {len(episodes)} Episodes reproduced ({counts['train']} training, "
        f"{counts['validation']} validation, {counts['assessment']} assessment)"
    )
    return CheckResult.of("execution", summary, findings, seconds=time.perf_counter() - start)
