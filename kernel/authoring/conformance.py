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
``action.valid_rejected``       an action sampled from the action space raised InvalidAction
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

The checks live in ``conformance_plans`` (spec and Episode pools), ``conformance_runs`` (Environments under random
actions, replay, invalid actions) and ``conformance_feedback`` (Feedback). Seeds shorter than 6 digits cannot be
searched for without false alarms and are skipped; the checker hands the Benchmark large Host seeds
(``derive_seed``), so a Benchmark that forwards them is caught.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from evoledger.kernel.authoring.benchmark import Benchmark
from evoledger.kernel.authoring.conformance_feedback import check_feedback
from evoledger.kernel.authoring.conformance_plans import check_plans, check_spec
from evoledger.kernel.authoring.conformance_report import (
    CONFORMANCE_CODES,
    ConformanceError,
    ConformanceProblem,
    ConformanceReport,
    Findings,
)
from evoledger.kernel.authoring.conformance_runs import check_invalid_actions, check_replay, run_random_episode
from evoledger.ledger.errors import InputError
from gymnasium import spaces

__all__ = ["CONFORMANCE_CODES", "ConformanceError", "ConformanceProblem", "ConformanceReport", "check_benchmark"]

_PROTOCOL = ("spec", "observation_space", "action_space", "episodes", "make_environment", "feedback")
_FALLBACK_MAX_STEPS = 10_000


def check_benchmark(
    benchmark: Any, *, episodes: int = 3, seed: int = 0, rng: np.random.Generator | None = None
) -> ConformanceReport:
    """Check ``benchmark`` against the Benchmark contract with ``episodes`` Episodes per split.

    ``seed`` derives the Host seeds handed to ``episodes()``; ``rng`` (default ``numpy.random.default_rng(seed)``)
    drives the random actions. Even-numbered Episodes receive actions as sampled (numpy), odd-numbered ones as JSON
    values (lists, ints), the way they arrive over a process boundary. Returns a :class:`ConformanceReport`; call
    its ``raise_for_problems()`` to fail loudly.
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
