"""atcoder/ahc058-apple-incremental-game: the case generator, the turn rules and the score on hand-made cases.

By default: the generator against the documented draw order, hand-computed games, the Environment's rejections and
whole-game rewards, Feedback, conformance and one built-in-Agent Run through the real CLI. Under ``catalog``: the
heuristic against the baseline through the real evaluate().
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.ahc058 import NAME, AppleEnvironment, make_ahc058
from evoledger.benchmarks.ahc058_game import (
    DOMAIN,
    TURNS,
    AppleCase,
    AppleGame,
    IllegalUpgrade,
    final_score,
    generate_case,
)
from evoledger.benchmarks.contest_benchmark import contest_episode_seed
from evoledger.benchmarks.contest_stream import CaseStream
from evoledger.kernel.authoring import EpisodeRecord, InvalidAction, Trajectory, benchmark_programs, check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.ledger.errors import ConfigError


def _case(capacity: int = 1) -> AppleCase:
    """A hand-made case: every capacity ``capacity`` (machine 9: 5), every base cost 2 except ``C[0][0] = 1``."""
    costs = tuple(tuple(1 if (level, j) == (0, 0) else 2 for j in range(10)) for level in range(4))
    return AppleCase((capacity,) * 9 + (5,), costs)


def test_the_generator_draws_capacities_then_costs_in_the_documented_order() -> None:
    case = generate_case(12345)
    stream = CaseStream(DOMAIN, 12345)
    capacities = sorted([1] + [math.floor(10 ** (2 * stream.unit()) + 0.5) for _ in range(9)])
    assert list(case.capacities) == capacities
    assert case.costs[0][0] == 1
    for level in range(4):
        for j in range(10):
            if (level, j) != (0, 0):
                expected = math.floor(capacities[j] * 500**level * 10 ** (2 * stream.unit()) + 0.5)
                assert case.costs[level][j] == expected, (level, j)
    assert generate_case(12345) == case
    assert generate_case(12346) != case
    assert all(1 <= a <= 100 for a in case.capacities)


def test_a_hand_made_game_produces_the_apples_computed_by_hand() -> None:
    game = AppleGame(_case())
    assert game.play((0, 0)) == (1, 1)  # pay 1 (apples 0), then B00 * P00 * A0 = 1
    assert game.play(None) == (0, 1)  # apples 2
    assert game.play((0, 0)) == (2, 2)  # the second power costs 1 * 2; production 1 * 2 * 1: apples 2
    assert game.play((1, 0)) == (2, 2)  # pay 2 (apples 0); level 0 makes 2 apples, then level 1 adds 1 machine
    assert game.counts[0][0] == 2
    assert game.play(None) == (0, 4)  # 2 machines x power 2: apples 6; B00 becomes 3
    assert game.play(None) == (0, 6)  # apples 12; B00 becomes 4
    assert (game.apples, game.turn, game.counts[0][0], game.upgrades, game.spent) == (12, 6, 4, 3, 5)
    assert game.powers[0][0] == 2
    assert game.powers[1][0] == 1


def test_production_runs_level_by_level_from_the_bottom() -> None:
    game = AppleGame(_case(), apples=100)
    for upgrade in [(3, 9), (2, 9), (1, 9), (0, 9)]:
        game.play(upgrade)
    # Turn 1: only P39 = 1: B29 += 1 (2). Turn 2: P29 = 1 too: B19 += B29 (2) -> 3, then B29 += 1 -> 3.
    # Turn 3: P19 = 1: B09 += B19 (3) -> 4, B19 += B29 (3) -> 6, B29 -> 4. Turn 4: P09 = 1: 5 * B09 (4) = 20 apples,
    # then B09 += 6 -> 10, B19 += 4 -> 10, B29 -> 5.
    assert [game.counts[level][9] for level in range(4)] == [10, 10, 5, 1]
    assert game.apples == 100 - 2 - 2 - 2 - 2 + 20


def test_an_unaffordable_upgrade_is_refused_and_changes_nothing() -> None:
    game = AppleGame(_case())
    with pytest.raises(IllegalUpgrade, match="costs 2 apples; only 1"):
        game.play((1, 3))
    assert (game.apples, game.turn, game.upgrades) == (1, 0, 0)


def test_the_score_is_round_100000_log2_apples() -> None:
    assert final_score(1) == 0
    assert final_score(0) == 0
    assert final_score(2**20) == 2_000_000
    assert final_score(12) == 358_496  # log2(12) = 3.5849625...
    assert final_score(10**30) == 9_965_784  # beyond 64 bits: 100000 * 30 * log2(10) = 9965784.28...


def _play(env: AppleEnvironment, policy: Any) -> tuple[list[float], Any]:
    observation = env.reset()
    rewards = []
    while True:
        step = env.step(policy(observation))
        rewards.append(step.reward)
        observation = step.observation
        if step.terminated:
            return rewards, step


def test_waiting_all_game_keeps_one_apple_and_scores_zero_on_the_last_turn() -> None:
    rewards, last = _play(AppleEnvironment(7), lambda observation: None)
    assert len(rewards) == TURNS
    assert rewards == [0.0] * TURNS
    assert last.observation["apples"] == 1
    assert last.observation["turns_remaining"] == 0


def test_the_baseline_program_scores_its_final_apples() -> None:
    spec_path = benchmark_programs(make_ahc058()).baseline / "policy.py"
    namespace: dict[str, Any] = {"__name__": "ahc058_baseline"}
    exec(compile(spec_path.read_text(encoding="utf-8"), str(spec_path), "exec"), namespace)
    policy = namespace["make_policy"](None)
    env = AppleEnvironment(contest_episode_seed("apple-incremental-game", "train", 3, 0))
    rewards, last = _play(env, policy.act)
    assert rewards[:-1] == [0.0] * (TURNS - 1)
    assert rewards[-1] == final_score(last.observation["apples"]) > 1_000_000


def test_the_environment_rejects_malformed_and_unaffordable_actions() -> None:
    env = AppleEnvironment(1)
    first = env.reset()
    assert first["initial"]["costs"][0][0] == 1
    assert first["turn"] == 0
    for bad in [{"upgrade": [4, 0]}, {"upgrade": [0]}, {"buy": [0, 0]}, [0, 0], {"upgrade": [0.0, 0]}]:
        with pytest.raises(InvalidAction):
            env.step(bad)
    with pytest.raises(InvalidAction, match="turn 0: upgrading level 3 machine 9"):
        env.step({"upgrade": [3, 9]})
    step = env.step({"upgrade": (0, 0)})
    assert step.observation["powers"][0][0] == 1
    assert step.observation["initial"] is None
    assert step.metrics["cost"] == 1.0


def test_feedback_summarises_and_traces_without_the_case_seed() -> None:
    env = AppleEnvironment(987_654_321)
    observations = [env.reset()]
    actions: list[Any] = [{"upgrade": [0, 0]}] + [None] * (TURNS - 1)
    rewards, metrics = [], []
    for action in actions:
        step = env.step(action)
        observations.append(step.observation)
        rewards.append(step.reward)
        metrics.append(dict(step.metrics))
    trajectory = Trajectory(observations, actions, rewards, True, False, metrics)
    ok = EpisodeRecord("train", 0, "ok", rewards[-1], TURNS, True, False, metrics[-1], None, trajectory)
    failed = EpisodeRecord("train", 1, "invalid_action", 0.0, 3, False, False, {}, "turn 2: too dear", None)
    feedback = make_ahc058().feedback([ok, failed])
    assert feedback.score == rewards[-1] / 2
    assert feedback.content["statuses"] == {"invalid_action": 1, "ok": 1}
    assert feedback.content["failures"][0]["message"] == "turn 2: too dear"
    assert feedback.content["wait_fraction"] == (TURNS - 1) / TURNS
    (trace,) = feedback.artifacts
    lines = [json.loads(line) for line in trace.data.decode().splitlines()]
    assert len(lines) == TURNS
    assert lines[0]["upgrade"] == [0, 0]
    assert lines[0]["cost"] == 1.0
    assert "987654321" not in json.dumps(feedback.content) + trace.data.decode()


def test_the_benchmark_is_registered_takes_no_settings_and_conforms() -> None:
    benchmark = default_registry().make(NAME)
    assert default_registry().entries()  # listed
    assert benchmark.spec.action_space["type"] == "Json"
    with pytest.raises(ConfigError):
        default_registry().make(NAME, {"max_episode_steps": 5})
    report = check_benchmark(benchmark, episodes=2)
    assert report.ok, report.summary()


@pytest.mark.catalog
def test_the_heuristic_beats_the_baseline_through_evaluate() -> None:
    ref = BenchmarkRef(name=NAME)
    programs = benchmark_programs(default_registry().make(NAME))
    assert programs.heuristic is not None
    config = EvaluationConfig(episodes=8, seed=3)
    with LocalExecutor(ref) as executor:
        baseline = evaluate(programs.baseline, ref, config=config, executor=executor)
        heuristic = evaluate(programs.heuristic, ref, config=config, executor=executor)
    assert baseline.failures == 0
    assert heuristic.failures == 0
    assert baseline.score is not None
    assert heuristic.score is not None
    print(f"{NAME}: baseline {baseline.score} heuristic {heuristic.score} (8 Episodes, seed 3)")
    assert heuristic.score > baseline.score * 1.2


def test_the_builtin_agent_completes_a_run_that_replays(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "evoledger", "run", NAME, "--agent", "hill-climb", "--episode-budget", "2"]
    command += ["--max-episodes-per-submission", "1", "--validation-episodes", "1", "--assessment-episodes", "1"]
    command += ["--max-candidates", "1", "--isolation", "local", "--agent-isolation", "local"]
    command += ["--record-to", str(tmp_path / "run")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    replay = subprocess.run(
        [sys.executable, "-m", "evoledger", "replay", str(tmp_path / "run"), "--execute", "--isolation", "local"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert replay.returncode == 0, replay.stdout[-3000:]
