"""Host-side Episode planning: Environment and Policy seeds from one seed source, in separate domains.

The Host plans Episodes once, before any Policy or Agent runs; a plan's commitment digest is
recorded so an auditor can check later that the pool was never changed. A Run plans from its secret
key (:func:`secret_seeds`: HMACs under separate labels, unknowable to the Agent and its Policies); an
evaluation plans from its user-given seed (:func:`public_seeds`: a public hash of it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from evoledger.kernel.authoring import Benchmark, EpisodeSpec, Split, derive_seed
from evoledger.kernel.authoring.keyed_seeds import keyed_seed
from evoledger.ledger.canonical import canonical_json, digest_of

__all__ = ["PlannedEpisode", "SeedSource", "plan_commitment", "plan_episodes", "public_seeds", "secret_seeds"]

SeedSource = Callable[..., int]
"""Host seeds by domain path: ``seeds("environment", split)`` and ``seeds("policy", split, index)`` -> uint64."""


def public_seeds(seed: int) -> SeedSource:
    """Seeds that anyone who knows ``seed`` can compute (:func:`derive_seed`): for evaluations, not Runs."""
    return partial(derive_seed, seed)


def secret_seeds(key: bytes) -> SeedSource:
    """Seeds that are HMACs of a Run's secret ``key`` (:func:`keyed_seed`), e.g. label ``policy/assessment/3``."""
    return partial(keyed_seed, key)


@dataclass(frozen=True, slots=True)
class PlannedEpisode:
    """One Host-planned Episode: the Benchmark's Episode spec and the Policy seed for it."""

    spec: EpisodeSpec
    policy_seed: int


def plan_episodes(benchmark: Benchmark, split: Split, *, seeds: SeedSource, count: int) -> list[PlannedEpisode]:
    """Plan ``count`` Episodes of ``split`` deterministically from ``seeds``.

    The Benchmark is handed the split's Environment seed ``seeds("environment", split)`` (from which it
    derives each Episode's seed and scenario); each Policy seed is ``seeds("policy", split, index)``.
    """
    if count == 0:
        return []
    environment_seed = seeds("environment", split)
    specs = benchmark.episodes(split, seed=environment_seed, count=count)
    return [PlannedEpisode(spec=s, policy_seed=seeds("policy", split, s.index)) for s in specs]


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
