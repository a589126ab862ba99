"""The task text states every fact the Agent may rely on, and nothing private."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from evoledger.kernel.agents import TaskFacts, render_task_text
from evoledger.kernel.authoring import BenchmarkSpec, parameters_digest
from evoledger.ledger.errors import ConfigError

PARAMS = {"gravity": 9.8, "pole_length": 0.5}


def _spec(**overrides: Any) -> BenchmarkSpec:
    fields: dict[str, Any] = {
        "id": "cartpole",
        "description": "Balance a pole on a cart for as long as possible.",
        "observation_space": {"type": "Box", "shape": [4], "dtype": "float32", "low": [None] * 4, "high": [None] * 4},
        "action_space": {"type": "Discrete", "n": 2, "start": 0},
        "metadata": {"render_fps": 50, "family": "classic-control"},
        "environment_parameters": PARAMS,
        "max_episode_steps": 500,
        "primary_metric": "mean_return",
        "score_direction": "maximize",
        "parameters_digest": parameters_digest(PARAMS),
    }
    fields.update(overrides)
    return BenchmarkSpec(**fields)


def _facts(**overrides: Any) -> TaskFacts:
    fields: dict[str, Any] = {
        "benchmark": _spec(),
        "episode_budget": 137,
        "pool_size": 64,
        "max_submissions": 29,
        "max_episodes_per_submission": 16,
        "finish_budget_policy": "allow_early",
        "max_candidates": 3,
        "validation_episodes": 41,
        "bulk_retention_bytes": 5 * 2**20,
    }
    fields.update(overrides)
    return TaskFacts(**fields)


def test_every_fact_appears() -> None:
    text = render_task_text(_facts())
    assert text.startswith("# evoledger task")
    # workspace layout and the feedback mirror
    for fragment in (
        "`program/`",
        "`analysis/`",
        "`feedback/`",
        "feedback/latest.json",
        "feedback/<submission_id>/feedback.json",
        "Host never reads, changes or deletes it",
    ):
        assert fragment in text
    assert "Feedback already present when you start" in text
    assert "after a Host restart" in text
    # the session command is the only way in, with its exit codes
    assert "the only way to touch the environment" in text.lower()
    for fragment in (
        "evoledger-session submit program --episodes 0:2,4:8",
        "evoledger-session finish",
        "evoledger-session status",
        "Exit status 0",
        "1 means the Host refused",
        "`retryable`",
        "2 means",
    ):
        assert fragment in text
    # pool and selector grammar
    assert "The pool has 64 Episodes, indices 0 to 63" in text
    assert "half-open ranges `start:stop`" in text
    assert "strictly increasing" in text
    # budget and limits
    assert "Episode budget: 137 units" in text
    assert "costs one unit every time it is used" in text
    assert "same hidden Episode" in text
    assert "At most 29 submissions and at most 16 Episodes per submission" in text
    assert "budget is refunded" in text
    # finishing and the tie-break
    assert "Finish with 1 to 3 submission ids" in text
    assert "`allow_early`" in text
    assert "same 41 private Validation Episodes" in text
    tie_break = ["best Validation score", "fewer Policy failures", "earlier in your finish list"]
    positions = [text.index(t) for t in tie_break]
    assert positions == sorted(positions)
    assert "Neither Validation nor Assessment results are ever shown to you" in text
    # the Policy contract
    for fragment in (
        "make_policy(context)",
        "act(observation)",
        "context.observation_space",
        "context.action_space",
        "context.metadata",
        "context.environment_parameters",
        "context.policy_seed",
        "numpy arrays of the space's dtype and shape for Box spaces",
        "a str for Text",
        "gives that one value as its `low` or `high`",
    ):
        assert fragment in text
    # retention / eviction warning
    assert "5242880 bytes (5.0 MiB)" in text
    assert "oldest submissions are deleted first" in text
    assert "Copy whatever you may need later into `analysis/`" in text
    # the public spec, as JSON
    block = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    spec = json.loads(block)
    assert spec == _spec().model_dump(mode="json")
    for fragment in (
        "Balance a pole on a cart",
        "`cartpole`",
        "`mean_return`",
        "max Episode steps: 500",
        "higher is better",
        '"gravity": 9.8',
        '"render_fps": 50',
        '"Discrete"',
    ):
        assert fragment in text


def test_budget_exhaustion_policy_and_unlimited_retention() -> None:
    text = render_task_text(_facts(finish_budget_policy="require_budget_exhaustion", bulk_retention_bytes=None))
    assert "`require_budget_exhaustion`" in text
    assert "`finish` is refused while any budget remains" in text
    assert "could no longer be spent" in text
    assert "no limit on bulk Feedback" in text
    assert "allow_early" not in text


def test_resumed_runs_say_so_up_front() -> None:
    plain = render_task_text(_facts())
    resumed = render_task_text(_facts(resumed=True))
    assert "being resumed after a restart" not in plain
    assert "being resumed after a restart" in resumed
    assert resumed.index("being resumed") < resumed.index("## Workspace")
    assert "`evoledger-session status` tells what is left" in resumed


def test_an_evopolicygym_run_states_that_contract_and_the_default_text_is_unchanged() -> None:
    default = render_task_text(_facts())
    assert render_task_text(_facts(policy_abi="evoledger")) == default
    assert "evopolicygym" not in default
    epg = render_task_text(_facts(policy_abi="evopolicygym"))
    contract = epg[epg.index("## Policy contract") : epg.index("## Feedback retention")]
    assert "from evopolicygym.policy import PolicyContext, TensorValue" in contract
    assert "TensorValue(dtype, shape, data)" in contract


def test_minimize_direction_and_custom_names() -> None:
    facts = _facts(benchmark=_spec(score_direction="minimize"), session_command="/opt/bin/evoledger-session")
    text = render_task_text(facts)
    assert "lower is better" in text
    assert "/opt/bin/evoledger-session submit program" in text


def test_text_is_deterministic_and_facts_cannot_carry_seeds() -> None:
    facts = _facts()
    assert render_task_text(facts) == render_task_text(dataclasses.replace(facts))
    assert not [f.name for f in dataclasses.fields(TaskFacts) if "seed" in f.name]
    assert render_task_text(_facts(validation_episodes=7)) != render_task_text(facts)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("episode_budget", 0, "episode_budget must be an integer >= 1"),
        ("pool_size", -1, "pool_size must be"),
        ("max_submissions", 1.5, "max_submissions must be"),
        ("max_episodes_per_submission", True, "max_episodes_per_submission must be"),
        ("max_candidates", 0, "max_candidates must be"),
        ("validation_episodes", -1, "validation_episodes must be"),
        ("bulk_retention_bytes", -5, "bulk_retention_bytes must be an integer >= 0"),
        ("finish_budget_policy", "whenever", "finish_budget_policy must be one of"),
        ("program_dir", " ", "program_dir must be a non-empty name"),
    ],
)
def test_invalid_facts_are_refused(field: str, value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _facts(**{field: value})
