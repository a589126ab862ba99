"""``registered_spec``: the spec of an evaluation record's Benchmark, vouched for by the registry or not at all."""

from __future__ import annotations

from typing import Any

import pytest
from evoledger.kernel.cli.export_spaces import registered_spec
from evoledger.kernel.registry import default_registry
from evoledger.ledger.events import BenchmarkIdentity


def _identity(name: str, config: dict[str, Any]) -> BenchmarkIdentity:
    spec = default_registry().make(name, config).spec
    return BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters))


@pytest.mark.parametrize(
    ("name", "config", "observation"),
    [
        ("cartpole", {}, {"type": "Box", "shape": [4]}),
        ("cartpole", {"max_episode_steps": 200}, {"type": "Box", "shape": [4]}),
        ("frozen-lake", {"map_name": "8x8"}, {"type": "Discrete", "n": 64}),
    ],
)
def test_a_registered_benchmark_gives_the_spaces_it_was_recorded_with(
    name: str, config: dict[str, Any], observation: dict[str, Any]
) -> None:
    spec = registered_spec(_identity(name, config))
    assert spec is not None
    assert {k: spec["observation_space"][k] for k in observation} == observation
    assert "parameters_digest" not in spec


def test_other_parameters_or_names_give_no_spec() -> None:
    recorded = _identity("cartpole", {})
    changed = BenchmarkIdentity.of("cartpole", {**recorded.params, "gymnasium_id": "CartPole-v0"})
    assert registered_spec(changed) is None  # the registry cannot build what was recorded
    assert registered_spec(BenchmarkIdentity.of("no-such-benchmark", {})) is None
    assert registered_spec(BenchmarkIdentity.of("evoledger.kernel.registry", {})) is None  # a module, not a name
