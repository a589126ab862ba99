"""Creating a Run: the directory, the ledger, the secret key, the Host's Episode plan and the initial Program.

Every Host seed of a Run is an HMAC of its secret key (:mod:`evoledger.kernel.authoring.keyed_seeds`): a random
key unless the configuration gives a seed to derive it from. The key is recorded only in the host-only
``run-key`` Event, right after ``run-created``; :func:`recorded_run_key` reads it back (for ``resume``, the
Agent's seed and ``replay``), never generating a new one.
"""

from __future__ import annotations

import re
import secrets
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from evoledger import __version__
from evoledger.kernel.authoring import Benchmark, starting_program
from evoledger.kernel.authoring.keyed_seeds import new_run_key, run_key_from_seed
from evoledger.kernel.execution.abi import check_abi_program
from evoledger.kernel.planning import PlannedEpisode, plan_commitment, plan_episodes, secret_seeds
from evoledger.kernel.registry import BenchmarkRegistry, default_registry
from evoledger.kernel.run.config import RunConfig
from evoledger.kernel.run.layout import RunLayout
from evoledger.ledger.errors import InputError, LedgerExistsError
from evoledger.ledger.events import BenchmarkIdentity, EpisodePlanned, EventBase, RunCreated, RunKey, Signer
from evoledger.ledger.signing import HeadSigner
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.snapshots import ProgramSnapshot, materialize_program, snapshot_program
from evoledger.ledger.store import Ledger

__all__ = [
    "CreatedRun",
    "RunPlan",
    "create_run",
    "plan_run",
    "planned_events",
    "recorded_run_key",
    "run_key_for",
]


@dataclass(frozen=True, slots=True)
class RunPlan:
    """The Host's Episode plan for a Run: the training pool, validation and assessment Episodes."""

    train: tuple[PlannedEpisode, ...]
    validation: tuple[PlannedEpisode, ...]
    assessment: tuple[PlannedEpisode, ...]

    @property
    def commitment(self) -> str:
        """A digest committing to every planned seed, recorded in ``run-created``."""
        return plan_commitment([*self.train, *self.validation, *self.assessment])


@dataclass(frozen=True, slots=True)
class CreatedRun:
    """A Run :func:`create_run` just recorded: its open ledger (the caller closes it), layout, Benchmark and plan."""

    ledger: Ledger
    layout: RunLayout
    benchmark: Benchmark
    plan: RunPlan
    initial: ProgramSnapshot
    """The initial Program's snapshot, also materialized as ``workspace/program``."""


def run_key_for(config: RunConfig, random_bytes: Callable[[int], bytes] = secrets.token_bytes) -> bytes:
    """A new Run's secret key: derived from ``config.seed`` when it gives one, else random (``random_bytes``)."""
    return new_run_key(random_bytes) if config.seed is None else run_key_from_seed(config.seed)


def recorded_run_key(events: Iterable[EventBase], where: Path | str) -> bytes:
    """The secret key a Run recorded in its ``run-key`` Event (a Run without one cannot be continued)."""
    for event in events:
        if isinstance(event, RunKey):
            return bytes.fromhex(event.key)
    raise InputError(
        f"{where} records no run-key Event, so its Host seeds cannot be re-derived: it was created by an older "
        "evoledger or the Event was removed; audit it with 'evoledger replay' and start a new Run"
    )


def plan_run(benchmark: Benchmark, config: RunConfig, key: bytes) -> RunPlan:
    """Plan every Episode of a Run from its secret ``key`` (deterministic; a separate HMAC label per seed)."""
    seeds = secret_seeds(key)
    return RunPlan(
        train=tuple(plan_episodes(benchmark, "train", seeds=seeds, count=config.pool_size)),
        validation=tuple(plan_episodes(benchmark, "validation", seeds=seeds, count=config.validation.episodes)),
        assessment=tuple(plan_episodes(benchmark, "assessment", seeds=seeds, count=config.assessment.episodes)),
    )


def _run_id(root: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "-", root.resolve().name).lstrip("-._") or "run"
    return name[:128]


def planned_events(plan: RunPlan) -> list[EventBase]:
    """The host-only ``episode-planned`` Events recording every Episode of ``plan`` (train, validation, assessment)."""
    return [
        EpisodePlanned(
            split=p.spec.split,
            index=p.spec.index,
            env_seed=p.spec.seed,
            policy_seed=p.policy_seed,
            scenario=dict(p.spec.scenario or {}),
        )
        for p in (*plan.train, *plan.validation, *plan.assessment)
    ]


def create_run(
    root: Path,
    config: RunConfig,
    *,
    initial_program: Path | None = None,
    registry: BenchmarkRegistry | None = None,
    random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    signing_key: SigningKey | None = None,
) -> CreatedRun:
    """Create the Run directory and record ``run-created``, the secret key, the plan and the initial Program snapshot.

    The key is random (drawn from ``random_bytes``) unless ``config.seed`` is given. Refuses a directory that
    already holds a Run (resume it instead). With ``signing_key`` the Run names its public key in ``run-created``
    and every head manifest is signed into ``ledger.sig`` (``ledger.signing``).
    """
    check_abi_program(config.policy_abi, initial_program)  # --policy-abi: the starting Programs fit the default only
    layout = RunLayout(Path(root).resolve())  # absolute: the Agent runs elsewhere and gets these paths
    if (layout.root / "ledger.sqlite").exists() or (layout.root / "ledger.head").exists():
        raise LedgerExistsError(
            f"{layout.root} already holds a Run; continue it with 'evoledger resume {layout.root}' "
            f"or audit it with 'evoledger replay {layout.root}', or choose another --record-to directory"
        )
    benchmark = (registry or default_registry()).make(config.benchmark.name, config.benchmark.config)
    spec = benchmark.spec
    key = run_key_for(config, random_bytes)
    plan = plan_run(benchmark, config, key)
    source = initial_program or starting_program(benchmark)
    fresh = not layout.root.exists()
    layout.root.mkdir(parents=True, exist_ok=True)
    ledger = Ledger.create(layout.root)
    run_id = _run_id(layout.root)
    try:
        if signing_key is not None:
            ledger.sign_heads(HeadSigner(signing_key, run_id))
        layout.create_dirs()
        snapshot = snapshot_program(source, ledger.objects)
        materialize_program(snapshot.digest, ledger.objects, layout.program, overwrite=True)
        ledger.append(
            [
                RunCreated(
                    run_id=run_id,
                    benchmark=BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters)),
                    episode_budget=config.episode_budget,
                    max_submissions=config.submission_limit,
                    finish_budget_policy=config.finish_budget_policy,
                    config=config.model_dump(mode="json"),
                    # parameters_digest is a hash, not an Object: it is benchmark.params_hash already
                    benchmark_spec=spec.model_dump(mode="json", exclude={"parameters_digest"}),
                    pool_commitment=plan.commitment,
                    seed=config.seed,
                    created_by=f"evoledger {__version__}",
                    signer=None if signing_key is None else Signer.of(signing_key.public.hex),
                ),
                RunKey(key=key.hex()),
                *planned_events(plan),
                snapshot.to_event("initial"),
            ]
        )
    except BaseException:
        ledger.close()
        if fresh:  # nothing was recorded that is worth keeping: no half-created Run is left behind
            shutil.rmtree(layout.root, ignore_errors=True)
        raise
    return CreatedRun(ledger=ledger, layout=layout, benchmark=benchmark, plan=plan, initial=snapshot)
