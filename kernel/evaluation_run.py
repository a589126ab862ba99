"""The body of :func:`~evoledger.kernel.evaluation.evaluate`: build the Benchmark, record and run every Episode.

:func:`run_evaluation` records the Program snapshot, the plan, each Episode and the Feedback in a ledger, running
the Episodes on an executor that :func:`~evoledger.kernel.evaluation.evaluate` started before importing this module
(its workers start while the Event schema, the ledger and the Benchmark load here).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from evoledger import __version__
from evoledger.kernel.authoring import Benchmark, EpisodeRecord, Feedback
from evoledger.kernel.evaluation import EpisodeResult, EvaluationConfig, EvaluationResult
from evoledger.kernel.execution import EpisodeTask, Executor
from evoledger.kernel.planning import plan_episodes, public_seeds
from evoledger.kernel.recording import outcome_events
from evoledger.kernel.registry import BenchmarkRef, BenchmarkRegistry, default_registry
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    BenchmarkIdentity,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    EvaluationFinished,
    EvaluationStarted,
    Signer,
)
from evoledger.ledger.snapshots import materialize_program, snapshot_program
from evoledger.ledger.store import Ledger

if TYPE_CHECKING:
    from evoledger.ledger.signing_keys import SigningKey

__all__ = ["run_evaluation"]


def _evaluation_id(program_digest: str, identity: BenchmarkIdentity, config: EvaluationConfig) -> str:
    basis = canonical_json(
        {
            "program": program_digest,
            "benchmark": identity.params_hash,
            "id": identity.id,
            "config": config.model_dump(mode="json", exclude={"isolation"}),  # results do not depend on it
        }
    )
    return "evaluation-" + digest_of(basis).removeprefix("sha256:")[:16]


@contextmanager
def _ledger_for(record_to: Path | None, ledger: Ledger | None) -> Iterator[Ledger]:
    if ledger is not None:
        yield ledger
        return
    scratch = None
    if record_to is None:
        scratch = Path(tempfile.mkdtemp(prefix="evoledger-eval-"))
        record_to = scratch / "record"
    try:
        with Ledger.create(record_to) as created:
            yield created
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def run_evaluation(
    program: Path | str,
    ref: BenchmarkRef,
    config: EvaluationConfig,
    runner: Executor,
    ledger: Ledger | None,
    record_to: Path | None,
    registry: BenchmarkRegistry | None,
    on_episode: Callable[[EpisodeResult], None] | None,
    signing_key: SigningKey | None,
    built: Benchmark | None = None,
) -> EvaluationResult:
    """Evaluate as :func:`~evoledger.kernel.evaluation.evaluate` describes, on the already started ``runner``.

    ``built``: the Benchmark ``ref`` names, if the caller has built it already (else it is built here, once).
    """
    bench: Benchmark = built if built is not None else (registry or default_registry()).make(ref.name, ref.config)
    spec = bench.spec
    identity = BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters))
    with _ledger_for(record_to, ledger) as book:
        snapshot = snapshot_program(Path(program), book.objects)
        evaluation_id = _evaluation_id(snapshot.digest, identity, config)
        signer = signing_key if ledger is None else None  # a caller's own ledger is signed by its owner
        if signer is not None:
            from evoledger.ledger.signing import HeadSigner  # cryptography: only for a signed record

            book.sign_heads(HeadSigner(signer, evaluation_id))
        plans = plan_episodes(bench, config.split, seeds=public_seeds(config.seed), count=config.episodes)
        book.append(
            [
                snapshot.to_event("evaluation"),
                EvaluationStarted(
                    evaluation_id=evaluation_id,
                    benchmark=identity,
                    program_digest=snapshot.digest,
                    split=config.split,
                    episode_count=config.episodes,
                    seed=config.seed,
                    config=config.model_dump(mode="json"),
                    created_by=f"evoledger {__version__}",
                    signer=None if signer is None else Signer.of(signer.public.hex),
                ),
                *(
                    EpisodePlanned(
                        evaluation_id=evaluation_id,
                        split=config.split,
                        index=p.spec.index,
                        env_seed=p.spec.seed,
                        policy_seed=p.policy_seed,
                        scenario=dict(p.spec.scenario or {}),
                    )
                    for p in plans
                ),
            ]
        )
        workdir = Path(tempfile.mkdtemp(prefix="evoledger-program-"))
        try:
            program_dir = workdir / "program"
            materialize_program(snapshot.digest, book.objects, program_dir)
            tasks = [
                EpisodeTask(
                    episode=p.spec,
                    program_dir=program_dir,
                    policy_seed=p.policy_seed,
                    limits=config.limits,
                    record_trajectory=config.record_trajectories,
                )
                for p in plans
            ]
            records: list[EpisodeRecord] = []
            results: list[EpisodeResult] = []
            for outcome in runner.run(tasks):
                started = EpisodeStarted(evaluation_id=evaluation_id, split=config.split, index=outcome.index)
                finished = outcome_events(outcome, book.objects, evaluation_id=evaluation_id)
                book.append([started, *finished])
                records.append(outcome.to_record(with_trajectory=len(records) < 5))
                digest = getattr(finished[0], "trajectory_digest", None)
                result = EpisodeResult(
                    index=outcome.index,
                    status=outcome.status,
                    episode_return=outcome.episode_return,
                    steps=outcome.steps,
                    failure=outcome.failure_message if outcome.status != "ok" else None,
                    trajectory_digest=digest,
                    traceback=outcome.traceback if outcome.status != "ok" else None,
                )
                results.append(result)
                if on_episode is not None:
                    on_episode(result)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        feedback: Feedback = bench.feedback(records)
        content_digest = book.objects.put(canonical_json(dict(feedback.content)))
        for artifact in feedback.artifacts:
            book.objects.put(artifact.data)
        book.append(
            [
                EvaluationFinished(
                    evaluation_id=evaluation_id,
                    score=feedback.score,
                    content_digest=content_digest,
                    episodes=tuple(
                        EpisodeSummary(
                            index=r.index,
                            status=r.status,  # type: ignore[arg-type]  # infra faults are filtered out below
                            episode_return=r.episode_return,
                            steps=r.steps,
                            trajectory_digest=r.trajectory_digest,
                        )
                        for r in results
                        if r.status != "infra_fault" and r.trajectory_digest is not None
                    ),
                )
            ]
        )
        return EvaluationResult(
            evaluation_id=evaluation_id,
            benchmark_id=spec.id,
            parameters_digest=spec.parameters_digest,
            program_digest=snapshot.digest,
            split=config.split,
            score=feedback.score,
            feedback_content=dict(feedback.content),
            artifact_names=[a.name for a in feedback.artifacts],
            episodes=results,
            ledger_path=None if ledger is None and record_to is None else book.path,
        )
