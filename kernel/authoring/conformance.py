"""Conformance checks for Benchmarks: ``check_benchmark(benchmark)`` before anyone runs a Run on it.

The checker plays the Host against a Benchmark with random actions and looks for the ways a Benchmark can
silently break evoledger's guarantees. Each finding is a :class:`ConformanceProblem` with a stable code:

==============================  ========================================================================
code                            meaning
==============================  ========================================================================
``protocol.missing``            the object does not implement the Benchmark protocol
``spec.invalid``                ``spec`` is not a BenchmarkSpec, or a field makes no sense
``spec.not_json``               the spec cannot be encoded as canonical JSON
``spec.digest_mismatch``        ``parameters_digest`` is not the digest of ``environment_parameters``
``spec.space_mismatch``         the spec's space descriptions differ from the space objects
``episodes.failed``             ``episodes()`` raised
``episodes.malformed``          wrong count, split, index order, a bad seed or a non-JSON scenario
``episodes.nondeterministic``   the same arguments gave different Episodes
``episodes.prefix_unstable``    Episode ``i`` changed when more Episodes were asked for
``episodes.seed_ignored``       a different Host seed gave the same Episodes
``episodes.duplicate``          two Episodes of one split share a seed
``episodes.split_collision``    two splits share a seed or a scenario
``environment.failed``          ``make_environment``, ``reset`` or ``step`` raised (an infra fault)
``environment.protocol``        the Environment lacks ``reset`` / ``step`` / ``close`` or returned no Step
``observation.outside_space``   an observation is not in the declared observation space
``step.invalid``                a reward that is not a finite number, non-bool flags or bad metrics
``episode.too_long``            an Episode did not end within ``max_episode_steps`` under random actions
``replay.nondeterministic``     the same actions on a fresh Environment gave a different Episode
``action.valid_rejected``       an action sampled from the action space (or legal_action()) raised InvalidAction
``action.invalid_accepted``     an action outside the action space was accepted
``action.invalid_wrong_error``  an action outside the action space raised something other than InvalidAction
``close.failed``                ``close()`` raised (it must be safe to call twice)
``feedback.failed``             ``feedback()`` raised
``feedback.invalid``            ``feedback()`` returned no Feedback, or content/artifacts of the wrong type
``feedback.nondeterministic``   the same records gave different Feedback
``feedback.leaks_seed``         a Host seed's decimal digits appear in the content or an Artifact
``feedback.leaks_scenario``     a scenario (or a distinctive part of one) appears in the Feedback
``feedback.score_rule``         ``feedback()``'s score is not what the spec's declared ``scoring`` rule gives
==============================  ========================================================================

This module checks what a Benchmark declares before any Episode runs (:func:`check_spec`: the spec is a
:class:`BenchmarkSpec` in canonical JSON whose digest and space descriptions match; :func:`check_plans`:
``episodes()`` is deterministic, index-stable and sensitive to the Host seed, and no seed is shared within a split
nor any seed or scenario across splits). The checks that play Episodes (Environments under random actions, replay,
invalid actions, Feedback) live in ``conformance_episodes``; problems are collected in ``conformance_report``.
Seeds shorter than 6 digits cannot be searched for without false alarms and are skipped; the checker hands the
Benchmark large Host seeds (``derive_seed``), so a Benchmark that forwards them is caught.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from evoledger.kernel.authoring.benchmark import Benchmark, BenchmarkSpec, parameters_digest
from evoledger.kernel.authoring.conformance_episodes import (
    check_feedback,
    check_invalid_actions,
    check_replay,
    run_random_episode,
)
from evoledger.kernel.authoring.conformance_report import (
    CONFORMANCE_CODES,
    ConformanceError,
    ConformanceProblem,
    ConformanceReport,
    Findings,
    describe_error,
)
from evoledger.kernel.authoring.episodes import SPLITS, EpisodeSpec, Split
from evoledger.kernel.authoring.seeds import derive_seed
from evoledger.kernel.authoring.spaces import describe_space
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError, InputError, OwnEnvironmentError
from gymnasium import spaces

__all__ = [
    "CONFORMANCE_CODES",
    "ConformanceError",
    "ConformanceProblem",
    "ConformanceReport",
    "PlanCheck",
    "check_benchmark",
    "check_plans",
    "check_spec",
]

_PROTOCOL = ("spec", "observation_space", "action_space", "episodes", "make_environment", "feedback")
_FALLBACK_MAX_STEPS = 10_000


def check_spec(benchmark: Any, findings: Findings) -> BenchmarkSpec | None:
    """Check ``benchmark.spec``; return it when it is a BenchmarkSpec."""
    spec = findings.guarded("spec.invalid", "benchmark.spec", lambda: benchmark.spec)
    if not isinstance(spec, BenchmarkSpec):
        findings.add("spec.invalid", f"spec is a {type(spec).__name__}, not a BenchmarkSpec")
        return None
    if spec.max_episode_steps < 1:
        findings.add("spec.invalid", f"max_episode_steps is {spec.max_episode_steps}; it must be at least 1")
    if not spec.primary_metric or not spec.id:
        findings.add("spec.invalid", "spec.id and spec.primary_metric must be non-empty")
    try:
        canonical_json(spec.model_dump(mode="json"))
        expected = parameters_digest(spec.environment_parameters)
    except EncodingError as exc:
        findings.add("spec.not_json", f"the spec is not canonical JSON: {exc}; use only JSON values in it")
        return spec
    if spec.parameters_digest != expected:
        findings.add(
            "spec.digest_mismatch",
            f"spec.parameters_digest {spec.parameters_digest!r} is not parameters_digest(environment_parameters) "
            f"= {expected!r}; compute it with parameters_digest()",
        )
    for name in ("observation_space", "action_space"):
        declared = dict(getattr(spec, name))
        try:
            described = describe_space(getattr(benchmark, name))
        except Exception as exc:
            findings.add("spec.space_mismatch", f"describe_space(benchmark.{name}) raised {describe_error(exc)}")
            continue
        if canonical_json(described) != canonical_json(declared):
            findings.add("spec.space_mismatch", f"spec.{name} {declared} is not describe_space(): {described}")
    return spec


@dataclass(slots=True)
class PlanCheck:
    """What :func:`check_plans` learnt: the train Episodes to run, and every Host-private value handed out."""

    train: list[EpisodeSpec] = field(default_factory=list)
    seeds: set[int] = field(default_factory=set)
    scenarios: list[dict[str, Any]] = field(default_factory=list)


def _plan(benchmark: Any, findings: Findings, check: PlanCheck, split: Split, seed: int, count: int) -> list[Any]:
    result = findings.guarded(
        "episodes.failed",
        f"episodes({split!r}, count={count})",
        lambda: list(benchmark.episodes(split, seed=seed, count=count)),
    )
    for ep in result or []:
        if isinstance(ep, EpisodeSpec) and isinstance(ep.seed, int):
            check.seeds.add(ep.seed)
        if isinstance(ep, EpisodeSpec) and isinstance(ep.scenario, Mapping):
            check.scenarios.append(dict(ep.scenario))
    return result or []


def _well_formed(findings: Findings, split: Split, episodes: list[Any], count: int) -> bool:
    if len(episodes) != count:
        findings.add("episodes.malformed", f"episodes({split!r}, count={count}) returned {len(episodes)} Episodes")
        return False
    for i, ep in enumerate(episodes):
        if not isinstance(ep, EpisodeSpec) or ep.split != split or ep.index != i:
            findings.add("episodes.malformed", f"Episode {i} of {split!r} is {ep!r:.100}; expected index {i}")
            return False
        if isinstance(ep.seed, bool) or not isinstance(ep.seed, int) or ep.seed < 0:
            findings.add("episodes.malformed", f"Episode {split}/{i} has seed {ep.seed!r}; use an int >= 0")
            return False
        if ep.scenario is not None:
            try:
                canonical_json(dict(ep.scenario))
            except (EncodingError, TypeError, ValueError) as exc:
                findings.add("episodes.malformed", f"Episode {split}/{i} has a non-JSON scenario: {exc}")
                return False
    return True


def _scenario_keys(episodes: list[EpisodeSpec]) -> set[bytes]:
    return {canonical_json(dict(e.scenario)) for e in episodes if e.scenario is not None}


def check_plans(benchmark: Any, findings: Findings, *, seed: int, count: int) -> PlanCheck:
    """Ask for ``count`` Episodes per split (Host seeds derived from ``seed``) and check them."""
    check = PlanCheck()
    plans: dict[Split, list[EpisodeSpec]] = {}
    for split in SPLITS:
        host_seed = derive_seed(seed, "conformance", split, 0)
        first = _plan(benchmark, findings, check, split, host_seed, count)
        if not _well_formed(findings, split, first, count):
            continue
        plans[split] = first
        if _plan(benchmark, findings, check, split, host_seed, count) != first:
            findings.add("episodes.nondeterministic", f"episodes({split!r}) gave different Episodes for the same seed")
        if _plan(benchmark, findings, check, split, host_seed, count + 2)[:count] != first:
            findings.add(
                "episodes.prefix_unstable",
                f"episodes({split!r}): Episode i changed when more Episodes were asked for; derive Episode i from "
                "(seed, split, i) only",
            )
        other = _plan(benchmark, findings, check, split, derive_seed(seed, "conformance", split, 1), count)
        if [e.seed for e in other] == [e.seed for e in first] and _scenario_keys(other) == _scenario_keys(first):
            findings.add("episodes.seed_ignored", f"episodes({split!r}) gave the same Episodes for another Host seed")
        seeds = [e.seed for e in first]
        if len(set(seeds)) != len(seeds):
            findings.add("episodes.duplicate", f"Episodes of {split!r} share seeds: {sorted(seeds)}")
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            if a not in plans or b not in plans:
                continue
            shared_seeds = {e.seed for e in plans[a]} & {e.seed for e in plans[b]}
            if shared_seeds:
                findings.add("episodes.split_collision", f"splits {a!r} and {b!r} share {len(shared_seeds)} seed(s)")
            shared_scenarios = _scenario_keys(plans[a]) & _scenario_keys(plans[b])
            if shared_scenarios:
                findings.add(
                    "episodes.split_collision", f"splits {a!r} and {b!r} share {len(shared_scenarios)} scenario(s)"
                )
    check.train = plans.get("train", [])
    return check


def check_benchmark(
    benchmark: Any, *, episodes: int = 3, seed: int = 0, rng: np.random.Generator | None = None
) -> ConformanceReport:
    """Check ``benchmark`` against the Benchmark contract with ``episodes`` Episodes per split.

    ``seed`` derives the Host seeds handed to ``episodes()``; ``rng`` (default ``numpy.random.default_rng(seed)``)
    drives the random actions. Even-numbered Episodes receive actions as sampled (numpy), odd-numbered ones as JSON
    values (lists, ints), the way they arrive over a process boundary. Returns a :class:`ConformanceReport`; call
    its ``raise_for_problems()`` to fail loudly. Raises :class:`~evoledger.ledger.errors.OwnEnvironmentError` for a
    Benchmark whose family makes its Environments only in its own venv (``evoledger env``) when called outside it.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise InputError(f"episodes must be a positive integer, got {episodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    generator = rng if rng is not None else np.random.default_rng(seed)
    findings = Findings()
    if not isinstance(benchmark, Benchmark):
        missing = [name for name in _PROTOCOL if not hasattr(benchmark, name)]
        findings.add("protocol.missing", f"{type(benchmark).__name__} is not a Benchmark; it lacks {missing}")
        return findings.report("?")
    spec = check_spec(benchmark, findings)
    benchmark_id = spec.id if spec is not None else "?"
    if spec is not None:
        from evoledger.kernel.family_env.families import host_environment_problem  # the registry: only now

        problem = host_environment_problem(spec.id)
        if problem is not None:
            raise OwnEnvironmentError(f"check_benchmark makes Environments in this process, but {problem}")
    max_steps = spec.max_episode_steps if spec is not None and spec.max_episode_steps >= 1 else _FALLBACK_MAX_STEPS
    plans = check_plans(benchmark, findings, seed=seed, count=episodes)
    action_space = findings.guarded("spec.invalid", "benchmark.action_space", lambda: benchmark.action_space)
    if not isinstance(action_space, spaces.Space):
        findings.add("spec.invalid", f"action_space is {type(action_space).__name__}, not a gymnasium Space")
        return findings.report(benchmark_id)
    sampler = copy.deepcopy(action_space)
    sampler.seed(int(generator.integers(2**31)))
    runs = [
        run_random_episode(benchmark, findings, ep, sampler, max_steps=max_steps, as_json=i % 2 == 1)
        for i, ep in enumerate(plans.train)
    ]
    for run in runs:
        if run.terminated or run.truncated:
            check_replay(benchmark, findings, run)
    if plans.train:
        check_invalid_actions(benchmark, findings, plans.train[0])
    check_feedback(benchmark, findings, [run for run in runs if run.observations], plans.seeds, plans.scenarios)
    return findings.report(benchmark_id)
