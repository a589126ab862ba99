"""``evaluate()``: run one Program on one Benchmark for a number of Episodes and record everything.

Every Episode is recorded in a ledger: the Program snapshot, the Host's plan (seeds, ``host``), each
Episode's start and finish with its trajectory Object, and the Evaluation's Feedback. The same
inputs give the same trajectory digests whether Episodes run serially or in parallel.

This module is light to import (it starts the workers first); :mod:`~evoledger.kernel.evaluation_run` does the
recording.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evoledger.kernel.authoring import Split
from evoledger.kernel.execution import (
    ExecutionBackend,
    Executor,
    Isolation,
    IsolationChoice,
    PolicyLimits,
    open_executor,
    resolve_isolation,
)
from evoledger.kernel.execution.abi import PolicyAbi
from evoledger.kernel.policy_abi_setting import policy_abi_field, without_default_policy_abi
from evoledger.kernel.registry import BenchmarkRef, BenchmarkRegistry
from evoledger.ledger.errors import ConfigError
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

if TYPE_CHECKING:
    from evoledger.kernel.authoring import Benchmark
    from evoledger.ledger.signing_keys import SigningKey
    from evoledger.ledger.store import Ledger

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
    policy_abi: PolicyAbi = policy_abi_field()

    @model_serializer(mode="wrap")
    def _omit_default_policy_abi(self, handler: SerializerFunctionWrapHandler) -> Any:
        return without_default_policy_abi(handler(self))


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
    built_benchmark: Benchmark | None = None,
    backend: ExecutionBackend | None = None,
) -> EvaluationResult:
    """Evaluate the Program in directory ``program`` on ``benchmark`` and record every Episode.

    ``benchmark`` is a registry name, an import string ``"pkg.module:factory"`` or a :class:`BenchmarkRef`.
    Records into ``ledger`` if given, else a new ledger at ``record_to``, else a temporary one that is
    discarded. ``on_episode`` is called once per finished Episode, in Episode order (for progress bars).
    With ``signing_key`` a new record (``record_to``) names its public key and every head is signed into ``ledger.sig``.
    ``built_benchmark``: the Benchmark ``benchmark`` names, when the caller has built it already (e.g. to find its
    starting Program); it is then not built again here (the workers always build their own).
    ``backend``: where the Episodes run when no ``executor`` is given (default: locally; it is not recorded).
    """
    config = config or EvaluationConfig()
    used = getattr(executor, "isolation", None) if executor is not None else resolve_isolation(config.isolation)
    if isinstance(used, IsolationChoice):
        config = config.model_copy(update={"isolation": used.isolation})
    ran_under = getattr(executor, "policy_abi", config.policy_abi)
    if ran_under != config.policy_abi:  # the record must name the ABI the Programs ran under
        raise ConfigError(
            f"the executor runs Programs under policy_abi {ran_under!r}, the config names {config.policy_abi!r}"
        )
    ref = _as_ref(benchmark)
    with contextlib.ExitStack() as stack:
        # Started first, waited for at the first Episode: the workers' start-up (a fresh interpreter each, maybe a
        # sandbox) overlaps building the Benchmark, the ledger and the Program snapshot.
        runner = executor or stack.enter_context(
            open_executor(
                backend,
                ref,
                workers=config.workers,
                isolation=config.isolation,
                wait_until_ready=False,
                policy_abi=config.policy_abi,
            )
        )
        # Imported only now: the Event schema, the ledger and the Benchmarks load while the workers start.
        from evoledger.kernel.evaluation_run import run_evaluation

        return run_evaluation(
            program, ref, config, runner, ledger, record_to, registry, on_episode, signing_key, built_benchmark
        )
