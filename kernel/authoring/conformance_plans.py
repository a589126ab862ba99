"""Conformance of what a Benchmark declares before any Episode runs: its spec and its Episode pools.

:func:`check_spec` checks that the spec is a :class:`BenchmarkSpec` in canonical JSON whose digest and space
descriptions match. :func:`check_plans` checks that ``episodes()`` is deterministic, index-stable and sensitive
to the Host seed, and that no seed is shared within a split nor any seed or scenario across splits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evoledger.kernel.authoring.benchmark import BenchmarkSpec, parameters_digest
from evoledger.kernel.authoring.conformance_report import Findings, describe_error
from evoledger.kernel.authoring.episodes import SPLITS, EpisodeSpec, Split
from evoledger.kernel.authoring.seeds import derive_seed
from evoledger.kernel.authoring.spaces import describe_space
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError

__all__ = ["PlanCheck", "check_plans", "check_spec"]


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
