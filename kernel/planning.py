"""Host-side Episode planning: Environment and Policy seeds from one seed, in separate hash domains.

The Host plans Episodes once, before any Policy or Agent runs; a plan's commitment digest is
recorded so an auditor can check later that the pool was never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evoledger.kernel.authoring import Benchmark, EpisodeSpec, Split, derive_seed
from evoledger.ledger.canonical import canonical_json, digest_of

__all__ = ["PlannedEpisode", "plan_commitment", "plan_episodes"]


@dataclass(frozen=True, slots=True)
class PlannedEpisode:
    """One Host-planned Episode: the Benchmark's Episode spec and the Policy seed for it."""

    spec: EpisodeSpec
    policy_seed: int


def plan_episodes(benchmark: Benchmark, split: Split, *, seed: int, count: int) -> list[PlannedEpisode]:
    """Plan ``count`` Episodes of ``split`` deterministically from ``seed``."""
    if count == 0:
        return []
    environment_seed = derive_seed(seed, "environment", split)
    specs = benchmark.episodes(split, seed=environment_seed, count=count)
    return [PlannedEpisode(spec=s, policy_seed=derive_seed(seed, "policy", split, s.index)) for s in specs]


def plan_commitment(plans: Sequence[PlannedEpisode]) -> str:
    """A digest committing to every planned seed and scenario, recorded before the Agent starts."""
    return digest_of(
        canonical_json(
            [
                {
                    "split": p.spec.split,
                    "index": p.spec.index,
                    "env_seed": p.spec.seed,
                    "policy_seed": p.policy_seed,
                    "scenario": dict(p.spec.scenario or {}),
                }
                for p in plans
            ]
        )
    )
