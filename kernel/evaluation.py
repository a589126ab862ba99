"""``evaluate()``: run one Program on one Benchmark for a number of Episodes and record everything.

Every Episode is recorded in a ledger: the Program snapshot, the Host's plan (seeds, ``host``), each
Episode's start and finish with its trajectory Object, and the Evaluation's Feedback. The same
inputs give the same trajectory digests whether Episodes run serially or in parallel.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evoledger import __version__
from evoledger.kernel.authoring import Benchmark, EpisodeRecord, Feedback, Split
from evoledger.kernel.execution import (
    EpisodeTask,
    Executor,
    Isolation,
    IsolationChoice,
    LocalExecutor,
    PolicyLimits,
    resolve_isolation,
)
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
from evoledger.ledger.signing import HeadSigner
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.snapshots import materialize_program, snapshot_program
from evoledger.ledger.store import Ledger
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EpisodeResult", "EvaluationConfig", "EvaluationResult", "evaluate"]


class EvaluationConfig(BaseModel):
    """How to evaluate: which split, how many Episodes, the seed, Policy limits and parallelism."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: Split = Field(default="train", description="Which of the Benchmark's Episode splits to plan from.")
    episodes: int = Field(default=20, ge=1, le=1_000_000, description="How many Episodes to run.")
    seed: int = Field(
        default=0,
        ge=0,
        lt=2**63,
        description="Plans the Episodes (a public hash of it: anyone who knows the seed can compute them).",
    )
    limits: PolicyLimits = Field(default_factory=PolicyLimits)
    workers: int = Field(default=1, ge=1, le=256, description="Episodes run in parallel (results are identical).")
    record_trajectories: bool = Field(default=True, description="Record every step of every Episode.")
    isolation: Isolation = Field(
        default="auto",
        description="How Policies are isolated: bwrap (a bubblewrap sandbox per worker: no view of the Host, its "
        "/proc or the record directory), local (plain processes), auto (bwrap where it is installed and works, else "
        "local). The record keeps the one used.",
    )


class EpisodeResult(BaseModel):
    """One Episode's outcome as reported to the caller."""

    model_config = ConfigDict(frozen=True)

    index: int
    status: str
    episode_return: float
    steps: int
    failure: str | None = None
    trajectory_digest: str | None = None
    traceback: str | None = None
    """The bounded traceback of a Policy failure (file and line), when there is one."""


class EvaluationResult(BaseModel):
    """The result of :func:`evaluate`."""

    model_config = ConfigDict(frozen=True)

    evaluation_id: str
    benchmark_id: str
    parameters_digest: str
    program_digest: str
    split: Split
    score: float | None
    feedback_content: dict[str, Any]
    artifact_names: list[str]
    episodes: list[EpisodeResult]
    ledger_path: Path | None

    @property
    def failures(self) -> int:
        """How many Episodes ended with a Policy failure."""
        return sum(1 for e in self.episodes if e.status not in ("ok", "infra_fault"))


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


def _as_ref(benchmark: str | BenchmarkRef | Mapping[str, Any]) -> BenchmarkRef:
    if isinstance(benchmark, BenchmarkRef):
        return benchmark
    if isinstance(benchmark, str):
        return BenchmarkRef(name=benchmark)
    return BenchmarkRef.model_validate(dict(benchmark))


def evaluate(
    program: Path | str,
    benchmark: str | BenchmarkRef | Mapping[str, Any],
    *,
    config: EvaluationConfig | None = None,
    ledger: Ledger | None = None,
    record_to: Path | None = None,
    registry: BenchmarkRegistry | None = None,
    executor: Executor | None = None,
    on_episode: Callable[[EpisodeResult], None] | None = None,
    signing_key: SigningKey | None = None,
) -> EvaluationResult:
    """Evaluate the Program in directory ``program`` on ``benchmark`` and record every Episode.

    ``benchmark`` is a registry name, an import string ``"pkg.module:factory"`` or a :class:`BenchmarkRef`.
    Records into ``ledger`` if given, else a new ledger at ``record_to``, else a temporary one that is
    discarded. ``on_episode`` is called once per finished Episode, in Episode order (for progress bars).
    With ``signing_key`` a new record (``record_to``) names its public key and every head is signed into ``ledger.sig``.
    """
    config = config or EvaluationConfig()
    used = getattr(executor, "isolation", None) if executor is not None else resolve_isolation(config.isolation)
    if isinstance(used, IsolationChoice):
        config = config.model_copy(update={"isolation": used.isolation})
    ref = _as_ref(benchmark)
    bench: Benchmark = (registry or default_registry()).make(ref.name, ref.config)
    spec = bench.spec
    identity = BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters))
    with _ledger_for(record_to, ledger) as book:
        snapshot = snapshot_program(Path(program), book.objects)
        evaluation_id = _evaluation_id(snapshot.digest, identity, config)
        signer = signing_key if ledger is None else None  # a caller's own ledger is signed by its owner
        if signer is not None:
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
            own_executor = executor is None
            runner = executor or LocalExecutor(ref, workers=config.workers, isolation=config.isolation)
            records: list[EpisodeRecord] = []
            results: list[EpisodeResult] = []
            try:
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
                if own_executor:
                    runner.close()
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
