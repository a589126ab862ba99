"""Tasks, limits and outcomes: validation, records, and their coordinator <-> worker messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, PolicyContext, PolicyLimits
from evoledger.kernel.execution.context import POLICY_CONTEXT_FIELDS
from evoledger.kernel.execution.messages import outcome_from_frame, outcome_to_frame, task_from_json, task_to_json
from evoledger.ledger.errors import ConfigError, InfraError
from evoledger.ledger.trajectories import Trajectory, encode_trajectory
from pydantic import ValidationError

EPISODE = EpisodeSpec("validation", 3, 2**64 - 1, {"level": [1, 2]})


def test_limits_derive_a_cpu_backstop_and_refuse_nonsense() -> None:
    limits = PolicyLimits(make_policy_timeout_seconds=10, episode_policy_seconds=20.5)
    assert limits.effective_cpu_seconds == 36
    assert PolicyLimits(cpu_seconds=3).effective_cpu_seconds == 3
    with pytest.raises(ValidationError):
        PolicyLimits(act_timeout_seconds=0)
    with pytest.raises(ValidationError):
        PolicyLimits(memory_bytes=1024)
    with pytest.raises(ValidationError):
        PolicyLimits(unknown=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.0, "3"])
def test_tasks_refuse_policy_seeds_outside_uint64(seed: object) -> None:
    with pytest.raises(ConfigError, match="policy_seed must be an integer"):
        EpisodeTask(episode=EPISODE, program_dir=Path("p"), policy_seed=seed)  # type: ignore[arg-type]


def test_tasks_refuse_wrong_field_types() -> None:
    with pytest.raises(ConfigError, match="episode must be an EpisodeSpec"):
        EpisodeTask(episode={"split": "train"}, program_dir=Path("p"), policy_seed=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="program_dir must be a path"):
        EpisodeTask(episode=EPISODE, program_dir=3, policy_seed=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="limits must be PolicyLimits"):
        EpisodeTask(episode=EPISODE, program_dir=Path("p"), policy_seed=1, limits={})  # type: ignore[arg-type]
    assert EpisodeTask(episode=EPISODE, program_dir="p", policy_seed=1).program_dir == Path("p")  # type: ignore[arg-type]


def test_tasks_survive_the_trip_to_a_worker() -> None:
    task = EpisodeTask(
        episode=EPISODE,
        program_dir=Path("/tmp/x"),
        policy_seed=2**64 - 1,
        limits=PolicyLimits(act_timeout_seconds=0.5, memory_bytes=None),
        record_trajectory=False,
    )
    task_id, back = task_from_json(task_to_json(task, 41))
    assert task_id == 41
    assert back == task


def test_outcomes_survive_the_trip_back_and_become_records() -> None:
    trajectory = Trajectory(observations=[[0.5], [1.0]], actions=[1], rewards=[0.25], terminated=True, truncated=False)
    outcome = EpisodeOutcome(
        split="train",
        index=7,
        status="ok",
        episode_return=0.25,
        steps=1,
        terminated=True,
        metrics={"distance": 0.1},
        policy_log=b"\x00\xffbinary log",
        trajectory=encode_trajectory(trajectory),
        policy_seconds=0.1,
        environment_seconds=0.2,
        wall_seconds=0.3,
    )
    task_id, back = outcome_from_frame(outcome_to_frame(outcome, 9))
    assert task_id == 9
    assert back == outcome
    record = back.to_record(with_trajectory=True)
    assert record.trajectory == Trajectory(
        observations=[[0.5], [1.0]],
        actions=[1],
        rewards=[0.25],
        terminated=True,
        truncated=False,
        metrics=[{}],
    )
    failed = EpisodeOutcome(split="train", index=1, status="timeout", failure_message="slow")
    assert outcome_from_frame(outcome_to_frame(failed, 1))[1] == failed
    assert failed.failed
    assert failed.to_record(with_trajectory=True).trajectory is None
    assert not EpisodeOutcome(split="train", index=1, status="infra_fault").failed


def test_a_malformed_outcome_frame_is_an_infra_error() -> None:
    with pytest.raises(InfraError, match="malformed outcome frame"):
        outcome_from_frame(b"O\x05\x00\x00\x00{}")


def test_the_context_has_exactly_the_public_fields() -> None:
    context = PolicyContext(
        observation_space=None, action_space=None, metadata={}, environment_parameters={}, policy_seed=1
    )
    assert sorted(vars(context)) == sorted(POLICY_CONTEXT_FIELDS)
    with pytest.raises(AttributeError):
        context.policy_seed = 2  # type: ignore[misc]
