"""The classic-control Benchmarks: specs, configuration, strict actions, Feedback, packaged Programs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.classic_control import PENDULUM_MAX_STEP_COST, make_cartpole, make_pendulum
from evoledger.benchmarks.feedback_summary import MAX_FAILURE_CHARS
from evoledger.kernel.authoring import EpisodeRecord, InvalidAction, benchmark_programs, parameters_digest
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import ConfigError, InfraError, InputError

CLASSIC = {
    # name: (gymnasium id, default max steps, failure return at the default limit)
    "cartpole": ("CartPole-v1", 500, 0.0),
    "acrobot": ("Acrobot-v1", 500, -500.0),
    "mountain-car": ("MountainCar-v0", 200, -200.0),
    "mountain-car-continuous": ("MountainCarContinuous-v0", 999, -99.9),
    "pendulum": ("Pendulum-v1", 200, round(-PENDULUM_MAX_STEP_COST * 200, 6)),
}


def _heuristic(benchmark: Any) -> Path:
    path = benchmark_programs(benchmark).heuristic
    assert path is not None, benchmark.spec.id
    return path


@pytest.mark.parametrize("name", sorted(CLASSIC))
def test_spec_describes_the_task_and_its_score(name: str) -> None:
    gym_id, steps, worst = CLASSIC[name]
    spec = default_registry().make(name).spec
    assert spec.id == name
    assert spec.environment_parameters["gymnasium_id"] == gym_id
    assert spec.max_episode_steps == steps == spec.environment_parameters["max_episode_steps"]
    assert spec.primary_metric == "mean_return"
    assert spec.score_direction == "maximize"
    assert spec.parameters_digest == parameters_digest(spec.environment_parameters)
    assert spec.metadata["failure_return"] == pytest.approx(worst)
    assert "Score (mean_return, maximize)" in spec.description
    assert "Episodes the Policy failed count as" in spec.description


@pytest.mark.parametrize("name", sorted(CLASSIC))
def test_max_episode_steps_override_truncates_and_changes_the_digest(name: str) -> None:
    default = default_registry().make(name)
    short = default_registry().make(name, {"max_episode_steps": 7})
    assert short.spec.max_episode_steps == 7
    assert short.spec.parameters_digest != default.spec.parameters_digest
    episode = short.episodes("train", seed=3, count=1)[0]
    env = short.make_environment(episode)
    env.reset()
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        step = env.step(_valid_action(short.action_space, rng))
        steps += 1
        if step.terminated or step.truncated:
            break
    env.close()
    assert steps <= 7
    assert step.truncated or step.terminated


def _valid_action(space: Any, rng: np.random.Generator) -> Any:
    if hasattr(space, "n"):
        return int(rng.integers(int(space.n)))
    return rng.uniform(space.low, space.high).astype(np.float32)


@pytest.mark.parametrize(
    ("name", "config", "fragment"),
    [
        ("cartpole", {"max_episode_steps": 0}, "max_episode_steps"),
        ("cartpole", {"max_episode_steps": 10**9}, "max_episode_steps"),
        ("cartpole", {"pole_length": 2.0}, "pole_length"),
        ("pendulum", {"g": -1.0}, "g"),
        ("pendulum", {"g": "heavy"}, "g"),
        ("mountain-car", {"goal": 0.3}, "goal"),
    ],
)
def test_bad_configuration_is_a_config_error_naming_the_field(name: str, config: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        default_registry().make(name, config)


def test_pendulum_gravity_is_public_and_changes_the_dynamics() -> None:
    light, heavy = make_pendulum(g=2.0), make_pendulum(g=20.0)
    assert light.spec.environment_parameters["g"] == 2.0
    assert light.spec.parameters_digest != heavy.spec.parameters_digest
    episode = light.episodes("train", seed=1, count=1)[0]
    finals = []
    for benchmark in (light, heavy):
        env = benchmark.make_environment(episode)
        env.reset()
        for _ in range(20):
            step = env.step(np.array([0.0], dtype=np.float32))
        finals.append(step.observation)
        env.close()
    assert not np.allclose(finals[0], finals[1])


def test_episodes_are_deterministic_and_split_apart() -> None:
    benchmark = make_cartpole()
    train = benchmark.episodes("train", seed=11, count=5)
    assert train == benchmark.episodes("train", seed=11, count=5)
    assert [e.index for e in train] == [0, 1, 2, 3, 4]
    validation = benchmark.episodes("validation", seed=11, count=5)
    assert not {e.seed for e in train} & {e.seed for e in validation}
    assert benchmark.episodes("train", seed=12, count=5) != train
    env_a, env_b = benchmark.make_environment(train[0]), benchmark.make_environment(train[0])
    np.testing.assert_array_equal(env_a.reset(), env_b.reset())


@pytest.mark.parametrize(("split", "seed", "count"), [("dev", 0, 1), ("train", -1, 1), ("train", 0, -2)])
def test_bad_episode_requests_are_input_errors(split: Any, seed: int, count: int) -> None:
    with pytest.raises(InputError):
        make_cartpole().episodes(split, seed=seed, count=count)


@pytest.mark.parametrize("action", [2, -1, True, 1.0, "1", None, [1], np.float64(0.0)])
def test_cartpole_rejects_actions_outside_discrete_2(action: Any) -> None:
    benchmark = make_cartpole()
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    with pytest.raises(InvalidAction):
        env.step(action)
    env.step(np.int64(1))  # a numpy integer is an integer; the Environment is still usable
    env.close()


@pytest.mark.parametrize(
    "action",
    [[2.5], [-2.0001], [float("nan")], [float("inf")], 0.5, [0.5, 0.5], [[0.5]], ["0.5"], [True]],
)
def test_pendulum_rejects_out_of_space_torques_and_never_clips(action: Any) -> None:
    benchmark = make_pendulum()
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    with pytest.raises(InvalidAction):
        env.step(action)
    env.close()


def test_pendulum_accepts_lists_and_float64_arrays_identically() -> None:
    benchmark = make_pendulum()
    episode = benchmark.episodes("train", seed=4, count=1)[0]
    results = []
    for action in ([1.5], np.array([1.5]), np.array([1.5], dtype=np.float32), [2]):
        env = benchmark.make_environment(episode)
        env.reset()
        results.append(env.step(action))
        env.close()
    np.testing.assert_array_equal(results[0].observation, results[1].observation)
    np.testing.assert_array_equal(results[0].observation, results[2].observation)
    assert results[0].reward == results[1].reward
    assert results[3].reward != results[0].reward


def test_step_before_reset_or_after_the_end_is_an_infra_error_and_close_is_idempotent() -> None:
    benchmark = make_cartpole(max_episode_steps=3)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    with pytest.raises(InfraError, match="reset"):
        env.step(0)
    env.reset()
    for _ in range(3):
        last = env.step(0)
    assert last.truncated or last.terminated
    with pytest.raises(InfraError, match="ended"):
        env.step(0)
    env.close()
    env.close()
    with pytest.raises(InfraError, match="closed"):
        env.reset()


@pytest.mark.parametrize(("name", "count"), [(n, 10) for n in sorted(CLASSIC)])
def test_heuristic_program_beats_the_baseline(name: str, count: int, play_program: Any) -> None:
    benchmark = default_registry().make(name)
    baseline = benchmark.feedback(play_program(benchmark, benchmark_programs(benchmark).baseline, count=count))
    heuristic = benchmark.feedback(play_program(benchmark, _heuristic(benchmark), count=count))
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score
    assert heuristic.content["status_counts"]["ok"] == count


def test_cartpole_feedback_counts_outcomes_scores_failures_as_zero_and_leaves_infra_out(play_program: Any) -> None:
    benchmark = make_cartpole()
    good = play_program(benchmark, _heuristic(benchmark), count=2)
    bad = play_program(benchmark, benchmark_programs(benchmark).baseline, count=1)
    failed = EpisodeRecord(
        "train",
        7,
        "exception",
        12.0,
        12,
        False,
        False,
        failure_message="Traceback\n" + "x" * 5000 + "\nValueError: boom",
    )
    infra = EpisodeRecord("train", 8, "infra_fault", 0.0, 0, False, False, failure_message="worker died")
    records = [*good, *bad, failed, infra]
    feedback = benchmark.feedback(records)
    content = feedback.content
    expected = (good[0].episode_return + good[1].episode_return + bad[0].episode_return + 0.0) / 4
    assert feedback.score == pytest.approx(expected)
    assert content["score"] == feedback.score
    assert content["status_counts"] == {"ok": 3, "exception": 1, "infra_fault": 1}
    assert content["policy_failures"] == 1
    assert content["infra_faults"] == 1
    assert content["outcome_counts"] == {"survived": 2, "pole_fell": 1}
    assert content["returns"]["max"] == 500.0
    assert content["returns"]["min"] == bad[0].episode_return
    # the baseline Episode reuses pool index 0: a repeated index gets a "#2" key instead of overwriting
    assert set(content["per_episode"]) == {"0", "1", "0#2", "7", "8"}
    assert content["per_episode"]["0#2"]["outcome"] == "pole_fell"
    assert content["per_episode"]["7"]["status"] == "exception"
    message = content["failure_messages"]["7"]
    assert message.endswith("ValueError: boom")
    assert len(message) <= MAX_FAILURE_CHARS + 3
    assert "8" not in content["failure_messages"]  # infra faults are not the Policy's failures
    assert "cartpole: mean_return" in content["summary"]
    assert "survived 2" in content["summary"]
    artifacts = {a.name: a for a in feedback.artifacts}
    assert artifacts["episodes.csv"].retention == "permanent"
    assert artifacts["trace.jsonl"].retention == "bulk"
    rows = list(csv.DictReader(io.StringIO(artifacts["episodes.csv"].data.decode())))
    assert [row["status"] for row in rows] == ["ok", "ok", "ok", "exception", "infra_fault"]
    lines = [json.loads(line) for line in artifacts["trace.jsonl"].data.decode().splitlines()]
    traced = {line["episode"] for line in lines}
    assert traced == {r.index for r in records[:3]}
    assert {line["record"] for line in lines} == {0, 1, 2}
    first = [line for line in lines if line["record"] == 0]
    assert len(first) == records[0].steps + 1
    trajectory = records[0].trajectory
    assert trajectory is not None
    assert first[0]["observation"] == trajectory.observations[0]
    assert first[-1]["truncated"] is True


def test_feedback_without_any_policy_run_has_no_score() -> None:
    infra = EpisodeRecord("train", 0, "infra_fault", 0.0, 0, False, False)
    feedback = make_cartpole().feedback([infra])
    assert feedback.score is None
    assert feedback.content["returns"] is None
    assert [a.name for a in feedback.artifacts] == ["episodes.csv"]


def test_mountain_car_and_pendulum_notes_come_from_the_trajectory(play_program: Any) -> None:
    car = default_registry().make("mountain-car")
    content = car.feedback(play_program(car, _heuristic(car), count=3)).content
    assert content["outcome_counts"] == {"reached_goal": 3}
    assert content["notes"]["max_position"]["min"] >= 0.5
    pendulum = make_pendulum()
    content = pendulum.feedback(play_program(pendulum, _heuristic(pendulum), count=3)).content
    assert content["outcome_counts"].get("upright_at_end", 0) == 3
    assert content["notes"]["upright_steps"]["min"] > 100
