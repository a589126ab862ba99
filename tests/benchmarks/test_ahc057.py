"""atcoder/ahc057-molecules: the case generator, the bond rules, the motion and the score on hand-made cases.

By default: the generator against the documented draw order, hand-computed bonds, merges and moves, the whole-Action
rejections, the trivial baseline's score against an independent computation, Feedback. Under ``catalog``:
conformance (whole 1,000-turn games), the heuristic against the baseline through the real evaluate() and a
built-in-Agent Run through the real CLI.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks.ahc057 import NAME, MoleculesEnvironment, make_ahc057
from evoledger.benchmarks.ahc057_game import (
    DOMAIN,
    POINTS,
    SIDE,
    TURNS,
    IllegalBonds,
    MoleculesCase,
    MoleculesGame,
    case_score,
    generate_case,
)
from evoledger.benchmarks.contest_stream import CaseStream
from evoledger.kernel.authoring import EpisodeRecord, InvalidAction, Trajectory, benchmark_programs, check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry

BLOCKS = [[i, i + 1] for i in range(POINTS - 1) if (i + 1) % 30 != 0]
"""The baseline's bonds: the blocks 0-29, 30-59, ... along their indices."""
PAIRS = [(i, j) for i, j in BLOCKS]


def _case(**points: tuple[tuple[int, int], tuple[int, int]]) -> MoleculesCase:
    """300 points resting at (50000, 50000), except ``p<i>=((x, y), (vx, vy))``."""
    positions = [(50_000, 50_000)] * POINTS
    velocities = [(0, 0)] * POINTS
    for key, (position, velocity) in points.items():
        positions[int(key[1:])] = position
        velocities[int(key[1:])] = velocity
    return MoleculesCase(tuple(positions), tuple(velocities))


def test_the_generator_draws_x_y_vx_vy_per_point_in_order() -> None:
    case = generate_case(4242)
    stream = CaseStream(DOMAIN, 4242)
    for i in range(POINTS):
        x, y = stream.below(SIDE), stream.below(SIDE)
        vx, vy = -100 + stream.below(201), -100 + stream.below(201)
        assert (case.positions[i], case.velocities[i]) == ((x, y), (vx, vy)), i
    assert generate_case(4242) == case != generate_case(4243)


def test_a_bond_costs_the_rounded_distance_and_the_molecule_moves_with_the_mean_velocity() -> None:
    game = MoleculesGame(_case(p0=((0, 0), (10, 0)), p1=((3, 4), (-20, 6))))
    assert game.play([(1, 0)]) == [5]  # a 3-4-5 triangle, the pair given in either order
    assert game.total_cost == 5
    assert game.component_count == POINTS - 1
    assert game.components[1] == 0
    assert game.velocities[0].tolist() == game.velocities[1].tolist() == [-5.0, 3.0]
    assert game.positions[0].tolist() == [99_995.0, 3.0]  # moved after the bond, modulo the side
    assert game.positions[1].tolist() == [99_998.0, 7.0]


def test_distances_wrap_around_the_torus_and_halves_round_up() -> None:
    game = MoleculesGame(_case(p0=((0, 0), (0, 0)), p1=((99_999, 0), (0, 0)), p2=((0, 0), (0, 0))))
    game.positions[2] = [0.0, 50_000.5]  # 49,999.5 the short way round: nearest integer 50,000
    assert game.play([(0, 1)]) == [1]
    assert game.play([(0, 2)]) == [50_000]
    assert game.total_cost == 50_001


def test_bonds_of_one_turn_merge_in_sorted_order_with_size_weighted_velocities() -> None:
    game = MoleculesGame(_case(p0=((0, 0), (30, 0)), p1=((0, 0), (0, 30)), p2=((0, 0), (-30, -30))))
    game.play([(2, 1), (0, 1)])  # processed as (0, 1) then (1, 2): (15, 15) of size 2 with (-30, -30)
    assert game.velocities[0].tolist() == game.velocities[2].tolist() == [0.0, 0.0]
    assert set(game.components[:3].tolist()) == {0}


def test_a_rule_breaking_set_is_rejected_whole_and_changes_nothing() -> None:
    game = MoleculesGame(_case(p0=((0, 0), (1, 1)), p1=((3, 4), (1, 1))))
    before = (game.positions.copy(), game.components.copy(), game.total_cost, game.turn)
    with pytest.raises(IllegalBonds, match="already in one component"):
        game.play([(0, 1), (1, 0)])
    with pytest.raises(IllegalBonds, match="31 points"):
        game.play([(i, i + 1) for i in range(30)])
    assert np.array_equal(game.positions, before[0])
    assert np.array_equal(game.components, before[1])
    assert (game.total_cost, game.turn) == before[2:]


def test_the_last_turn_needs_exactly_ten_molecules_of_thirty() -> None:
    game = MoleculesGame(_case())
    for _ in range(TURNS - 1):
        game.play([])
    with pytest.raises(IllegalBonds, match="exactly 10 components of 30"):
        game.play([])
    with pytest.raises(IllegalBonds, match="exactly 10 components of 30"):
        game.play(PAIRS[:-1])
    game.play(PAIRS)
    assert game.done
    assert game.total_cost == 0


def test_the_score_is_round_1e6_log2_of_the_cost_ratio() -> None:
    assert case_score(28_999_999) == 0  # 100000 * 290 / 29,000,000 = 1
    assert case_score(453_124) == 6_000_000  # 29,000,000 / 453,125 = 64
    assert case_score(0) == round(1_000_000 * math.log2(29_000_000))


def _toroidal(a: tuple[int, int], b: tuple[int, int]) -> float:
    dx, dy = abs(a[0] - b[0]), abs(a[1] - b[1])
    return math.hypot(min(dx, SIDE - dx), min(dy, SIDE - dy))


def test_the_baseline_blocks_score_their_independently_computed_cost() -> None:
    env = MoleculesEnvironment(777)
    env.reset()
    rewards = [env.step({"bonds": BLOCKS}).reward]
    rewards += [env.step({"bonds": []}).reward for _ in range(TURNS - 1)]
    case = generate_case(777)
    expected = sum(math.floor(_toroidal(case.positions[i], case.positions[j]) + 0.5) for i, j in BLOCKS)
    assert rewards[:-1] == [0.0] * (TURNS - 1)
    assert rewards[-1] == case_score(expected)
    assert 1_000_000 < rewards[-1] < 2_000_000  # random pairs: a third of the side apart on average


def test_the_environment_rejects_malformed_actions_and_the_unfinished_last_turn() -> None:
    env = MoleculesEnvironment(5)
    first = env.reset()
    assert first["positions"].shape == (POINTS, 2)
    assert first["initial"]["target_size"] == 30
    for bad in [{"bonds": [[0, 300]]}, {"bonds": [[0]]}, {"bond": []}, None, {"bonds": [[0, 1]] * 291}]:
        with pytest.raises(InvalidAction):
            env.step(bad)
    with pytest.raises(InvalidAction, match="turn 0: bond \\(0, 1\\) joins points already"):
        env.step({"bonds": [[0, 1], [1, 0]]})
    for _ in range(TURNS - 1):
        env.step({"bonds": []})
    with pytest.raises(InvalidAction, match="turn 999: on the last turn"):
        env.step({"bonds": []})


def test_feedback_reports_costs_and_traces_bonds_with_their_cost() -> None:
    env = MoleculesEnvironment(31_337_000)
    observations = [env.reset()]
    actions: list[Any] = [{"bonds": BLOCKS}] + [{"bonds": []}] * (TURNS - 1)
    rewards, metrics = [], []
    for action in actions:
        step = env.step(action)
        observations.append(step.observation)
        rewards.append(step.reward)
        metrics.append(dict(step.metrics))
    trajectory = Trajectory(observations, actions, rewards, True, False, metrics)
    record = EpisodeRecord("train", 0, "ok", rewards[-1], TURNS, True, False, metrics[-1], None, trajectory)
    feedback = make_ahc057().feedback([record])
    content = feedback.content
    assert feedback.score == rewards[-1]
    assert content["mean_bonds"] == 290
    assert content["mean_first_complete_turn"] == 0
    assert content["empty_turn_fraction"] == (TURNS - 1) / TURNS
    assert content["cost_per_bond"] == metrics[-1]["total_cost"] / 290
    (trace,) = feedback.artifacts
    events = [json.loads(line) for line in trace.data.decode().splitlines()]
    assert len(events) == 256  # bounded
    assert [[e["i"], e["j"]] for e in events] == BLOCKS[:256]
    assert {e["turn"] for e in events} == {0}
    assert [e["cost"] for e in events] == [_cost(observations[0], pair) for pair in BLOCKS[:256]]
    assert sum(_cost(observations[0], pair) for pair in BLOCKS) == metrics[0]["turn_cost"]
    assert "31337000" not in json.dumps(content) + trace.data.decode()


def _cost(observation: dict[str, Any], pair: list[int]) -> int:
    a, b = observation["positions"][pair[0]], observation["positions"][pair[1]]
    dx, dy = abs(a[0] - b[0]), abs(a[1] - b[1])
    return math.floor(math.hypot(min(dx, SIDE - dx), min(dy, SIDE - dy)) + 0.5)


@pytest.mark.catalog
def test_the_benchmark_conforms() -> None:
    report = check_benchmark(default_registry().make(NAME), episodes=2)
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
    assert heuristic.score > baseline.score * 2


@pytest.mark.catalog
def test_the_builtin_agent_completes_a_run_that_replays(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "evoledger", "run", NAME, "--agent", "hill-climb", "--episode-budget", "2"]
    command += ["--max-episodes-per-submission", "1", "--validation-episodes", "1", "--assessment-episodes", "1"]
    command += ["--max-candidates", "1", "--isolation", "local", "--agent-isolation", "local"]
    command += ["--record-to", str(tmp_path / "run")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    replay = subprocess.run(
        [sys.executable, "-m", "evoledger", "replay", str(tmp_path / "run"), "--execute", "--isolation", "local"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert replay.returncode == 0, replay.stdout[-3000:]
