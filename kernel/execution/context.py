"""The context a Policy's ``make_policy(context)`` receives: the Benchmark's public description only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["POLICY_CONTEXT_FIELDS", "PolicyContext"]

POLICY_CONTEXT_FIELDS = ("observation_space", "action_space", "metadata", "environment_parameters", "policy_seed")
"""Everything a Policy can learn from its context. Nothing Host-private (no Environment seed, scenario or
pool index) is among them, and the Policy process never holds those values in memory either."""


@dataclass(frozen=True)
class PolicyContext:
    """What ``make_policy(context)`` is given.

    ``observation_space`` / ``action_space`` are the Benchmark's gymnasium Space objects (seeded from
    ``policy_seed``, so ``action_space.sample()`` is reproducible); ``metadata`` and
    ``environment_parameters`` are the Benchmark spec's public fields; ``policy_seed`` is a uint64 the
    Policy may use for its own randomness.
    """

    observation_space: Any
    action_space: Any
    metadata: Mapping[str, Any]
    environment_parameters: Mapping[str, Any]
    policy_seed: int
