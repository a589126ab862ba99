"""The toy-text Benchmarks: specs, configuration, outcomes, Feedback, packaged Programs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.toy_text import (
    FROZEN_LAKE_MAPS,
    make_blackjack,
    make_cliff_walking,
    make_frozen_lake,
    make_frozen_lake_8x8,
    make_taxi,
)
from evoledger.kernel.authoring import EpisodeRecord, InvalidAction, Trajectory, benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import ConfigError

TOY = {
    # name: (gymnasium id, default max steps, primary metric, failure return)
    "blackjack": ("Blackjack-v1", 20, "mean_return", -1.0),
    "cliff-walking": ("CliffWalking-v1", 200, "mean_return", -20000.0),
    "frozen-lake": ("FrozenLake-v1", 100, "success_rate", 0.0),
    "frozen-lake-8x8": ("FrozenLake-v1", 200, "success_rate", 0.0),
    "taxi": ("Taxi-v4", 200, "mean_return", -2000.0),
}


def _heuristic(benchmark: Any) -> Path:
    path = benchmark_programs(benchmark).heuristic
    assert path is not None, benchmark.spec.id
    return path


@pytest.mark.parametrize("name", sorted(TOY))
def test_spec_names_the_gymnasium_task_and_the_score(name: str) -> None:
    gym_id, steps, metric, worst = TOY[name]
    spec = default_registry().make(name).spec
    assert spec.id == name
    assert spec.environment_parameters["gymnasium_id"] == gym_id
    assert spec.max_episode_steps == steps
    assert spec.primary_metric == metric
    assert spec.metadata["failure_return"] == worst
    assert f"Score ({metric}, maximize)" in spec.description


def test_frozen_lake_configuration_is_typed_public_and_digested() -> None:
    default = make_frozen_lake()
    assert default.spec.environment_parameters["map"] == list(FROZEN_LAKE_MAPS["4x4"])
    assert default.spec.environment_parameters["is_slippery"] is True
    big = default_registry().make("frozen-lake", {"map_name": "8x8", "is_slippery": False})
    assert big.spec.environment_parameters["map"] == list(FROZEN_LAKE_MAPS["8x8"])
    assert big.spec.max_episode_steps == 200
    assert big.observation_space.n == 64
    assert big.spec.parameters_digest != default.spec.parameters_digest
    convenience = make_frozen_lake_8x8(is_slippery=False)
    assert convenience.spec.environment_parameters == big.spec.environment_parameters


def test_unknown_frozen_lake_map_is_a_config_error_listing_the_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        default_registry().make("frozen-lake", {"map_name": "9x9"})
    message = str(caught.value)
    assert "9x9" in message
    assert "'4x4'" in message
    assert "'8x8'" in message
    assert "frozen-lake" in message


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("frozen-lake-8x8", {"map_name": "4x4"}),
        ("frozen-lake", {"slippery": True}),
        ("taxi", {"is_rainy": "sometimes"}),
        ("blackjack", {"decks": 6}),
        ("cliff-walking", {"max_episode_steps": -5}),
    ],
)
def test_bad_toy_text_configuration_is_a_config_error(name: str, config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=next(iter(config))):
        default_registry().make(name, config)


def _play_actions(benchmark: Any, actions: list[Any], seed: int = 0) -> tuple[Any, list[Any]]:
    env = benchmark.make_environment(benchmark.episodes("train", seed=seed, count=1)[0])
    first = env.reset()
    steps = []
    for action in actions:
        steps.append(env.step(action))
        if steps[-1].terminated or steps[-1].truncated:
            break
    env.close()
    return first, steps


def test_observations_are_plain_ints_and_blackjack_tuples_of_ints() -> None:
    first, _ = _play_actions(make_taxi(), [])
    assert type(first) is int
    assert make_taxi().observation_space.contains(first)
    blackjack = make_blackjack()
    first, _ = _play_actions(blackjack, [])
    assert isinstance(first, tuple)
    assert all(type(v) is int for v in first)
    assert blackjack.observation_space.contains(first)


@pytest.mark.parametrize(
    ("name", "action"), [("taxi", 6), ("frozen-lake", 4), ("blackjack", 2), ("cliff-walking", 1.5)]
)
def test_out_of_range_discrete_actions_are_invalid(name: str, action: Any) -> None:
    benchmark = default_registry().make(name)
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    with pytest.raises(InvalidAction, match=str(action).split(".")[0]):
        env.step(action)
    env.close()


def test_cliff_walking_reports_falls_per_step_and_per_episode() -> None:
    benchmark = make_cliff_walking(max_episode_steps=5)
    _, steps = _play_actions(benchmark, [1, 0, 1, 1, 1])  # right from the start is the cliff
    assert steps[0].reward == -100
    assert steps[0].metrics == {"cliff_fall": 1.0}
    assert steps[1].metrics == {"cliff_fall": 0.0}
    assert steps[-1].truncated
    assert len(steps) == 5
    record = _record(steps, first=36, actions=[1, 0, 1, 1, 1])
    content = benchmark.feedback([record]).content
    assert content["outcome_counts"] == {"timed_out": 1}
    assert content["notes"]["cliff_falls"]["max"] == 1.0


def test_frozen_lake_outcomes_distinguish_goal_hole_and_timeout() -> None:
    benchmark = make_frozen_lake(is_slippery=False, max_episode_steps=8)
    right, down = 2, 1
    _, to_goal = _play_actions(benchmark, [right, right, down, down, down, right])
    _, to_hole = _play_actions(benchmark, [down, right])
    _, dawdle = _play_actions(benchmark, [0] * 8)
    assert to_goal[-1].terminated
    assert to_goal[-1].reward == 1.0
    assert to_goal[-1].metrics == {"success": 1.0}
    records = [
        _record(to_goal, 0, [right, right, down, down, down, right], index=0),
        _record(to_hole, 0, [down, right], index=1),
        _record(dawdle, 0, [0] * 8, index=2),
    ]
    feedback = benchmark.feedback(records)
    assert feedback.content["outcome_counts"] == {"reached_goal": 1, "fell_in_hole": 1, "timed_out": 1}
    assert feedback.score == pytest.approx(1 / 3)


def test_blackjack_outcomes_and_taxi_illegal_actions() -> None:
    blackjack = make_blackjack()
    records = [
        EpisodeRecord("train", 0, "ok", 1.0, 1, True, False),
        EpisodeRecord("train", 1, "ok", 0.0, 1, True, False),
        EpisodeRecord(
            "train", 2, "ok", -1.0, 2, True, False, trajectory=Trajectory([[0, 0, 0]] * 3, [1, 1], [0, -1], True, False)
        ),
        EpisodeRecord(
            "train", 3, "ok", -1.0, 1, True, False, trajectory=Trajectory([[0, 0, 0]] * 2, [0], [-1], True, False)
        ),
        EpisodeRecord("train", 4, "timeout", 0.0, 0, False, False),
    ]
    feedback = blackjack.feedback(records)
    assert feedback.content["outcome_counts"] == {"win": 1, "draw": 1, "bust": 1, "loss": 1}
    assert feedback.score == pytest.approx((1 + 0 - 1 - 1 - 1) / 5)
    taxi = make_taxi(max_episode_steps=3)
    _, steps = _play_actions(taxi, [5, 4, 0])  # drop off / pick up with no passenger aboard are illegal
    assert [s.metrics["illegal_action"] for s in steps[:2]] == [1.0, 1.0]
    content = taxi.feedback([_record(steps, 0, [5, 4, 0])]).content
    assert content["notes"]["illegal_actions"]["max"] >= 2.0


def _record(steps: list[Any], first: Any, actions: list[Any], index: int = 0) -> EpisodeRecord:
    actions = actions[: len(steps)]
    return EpisodeRecord(
        split="train",
        index=index,
        status="ok",
        episode_return=float(sum(s.reward for s in steps)),
        steps=len(steps),
        terminated=steps[-1].terminated,
        truncated=steps[-1].truncated,
        trajectory=Trajectory(
            [first, *(s.observation for s in steps)],
            actions,
            [s.reward for s in steps],
            steps[-1].terminated,
            steps[-1].truncated,
            [dict(s.metrics) for s in steps],
        ),
    )


@pytest.mark.parametrize(
    ("name", "config", "count"),
    [
        ("blackjack", {}, 300),
        ("cliff-walking", {}, 10),
        ("cliff-walking", {"is_slippery": True}, 10),
        ("frozen-lake", {}, 20),
        ("frozen-lake", {"is_slippery": False}, 10),
        ("frozen-lake-8x8", {}, 20),
        ("taxi", {}, 10),
        ("taxi", {"is_rainy": True, "fickle_passenger": True}, 10),
    ],
)
def test_heuristic_program_beats_the_baseline(name: str, config: dict[str, Any], count: int, play_program: Any) -> None:
    benchmark = default_registry().make(name, config)
    baseline = benchmark.feedback(play_program(benchmark, benchmark_programs(benchmark).baseline, count=count))
    heuristic = benchmark.feedback(play_program(benchmark, _heuristic(benchmark), count=count))
    assert baseline.score is not None
    assert heuristic.score is not None
    assert heuristic.score > baseline.score


def test_heuristics_solve_the_deterministic_variants(play_program: Any) -> None:
    cliff = make_cliff_walking()
    assert cliff.feedback(play_program(cliff, _heuristic(cliff), count=3)).score == -13.0
    lake = make_frozen_lake_8x8(is_slippery=False)
    assert lake.feedback(play_program(lake, _heuristic(lake), count=3)).score == 1.0


def test_every_gymnasium_benchmark_carries_its_programs_as_plain_directories() -> None:
    for name in [*TOY, "cartpole", "acrobot", "mountain-car", "mountain-car-continuous", "pendulum"]:
        programs = benchmark_programs(default_registry().make(name))
        for path in (programs.baseline, programs.heuristic, programs.starting):
            assert path is not None
            assert (path / "policy.py").is_file()
            assert not (path / "__init__.py").exists()
        assert programs.starting == (programs.tunable or programs.baseline)


def test_frozen_lake_starts_from_its_map_reading_programs_whatever_the_size() -> None:
    small, large = make_frozen_lake(), make_frozen_lake(map_name="8x8")
    assert benchmark_programs(small) == benchmark_programs(large) == benchmark_programs(make_frozen_lake_8x8())
