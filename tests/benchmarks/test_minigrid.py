"""MiniGrid, WFC and BabyAI Benchmarks: names, the missing extra, the public observation, Feedback, one real Episode.

Everything that needs many Episodes (heuristic beats baseline for every task, check_benchmark for every task) is
in test_minigrid_catalog.py under the ``catalog`` marker.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from evoledger.benchmarks import babyai, minigrid
from evoledger.benchmarks.minigrid_adapter import RoomCoverage
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.ledger.errors import ConfigError
from gymnasium import spaces
from pydantic import ValidationError

pytest.importorskip("minigrid")

ROOT = Path(__file__).resolve().parents[2]


def test_every_upstream_id_has_one_kebab_case_name_and_one_catalog_row() -> None:
    import minigrid as upstream  # noqa: F401  (registers the ids)

    names = [*minigrid.BENCHMARKS, *babyai.BENCHMARKS]
    assert len(minigrid.BENCHMARKS) == 76 + 22
    assert len(babyai.BENCHMARKS) == 40
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"(minigrid|babyai)/[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)
    assert [e.name for e in (*minigrid.CATALOG, *babyai.CATALOG)] == names
    assert {e.family for e in minigrid.CATALOG} == {"minigrid"}
    assert {e.family for e in babyai.CATALOG} == {"babyai"}
    standard = {f"MiniGrid-{upstream_id}" for upstream_id, _ in minigrid.STANDARD_TASKS}
    registered = {k for k in gym.registry if k.startswith("MiniGrid-") and "-WFC-" not in k}
    assert standard == registered  # every upstream standard id, each once
    assert {"minigrid/door-key-8x8", "minigrid/key-corridor-s3r1", "minigrid/wfc-maze-simple"} <= set(names)
    assert {"babyai/go-to-red-ball", "babyai/put-next-s7n4", "minigrid/memory-s13-random"} <= set(names)


def test_the_modules_import_and_list_without_minigrid_and_building_says_how_to_install() -> None:
    code = (
        "import sys; sys.modules['minigrid'] = None\n"
        "from evoledger.benchmarks import minigrid, babyai\n"
        "from evoledger.ledger.errors import MissingExtraError\n"
        "assert len(minigrid.CATALOG) == 98 and len(babyai.CATALOG) == 40\n"
        "for factory in (minigrid.BENCHMARKS['minigrid/door-key-5x5'], babyai.BENCHMARKS['babyai/go-to-red-ball']):\n"
        "    try:\n"
        "        factory()\n"
        "    except MissingExtraError as exc:\n"
        "        assert \"pip install 'evoledger[minigrid]'\" in str(exc), exc\n"
        "    else:\n"
        "        raise SystemExit('no MissingExtraError')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr


def test_the_policy_sees_image_direction_and_a_text_mission() -> None:
    benchmark = minigrid.BENCHMARKS["minigrid/door-key-5x5"]()
    space = benchmark.observation_space
    assert isinstance(space, spaces.Dict)
    assert isinstance(space["mission"], spaces.Text)
    assert benchmark.spec.observation_space["spaces"]["mission"]["type"] == "Text"
    assert benchmark.spec.max_episode_steps == 250
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    observation = env.reset()
    assert observation["image"].dtype == np.uint8
    assert observation["image"].shape == (7, 7, 3)
    assert type(observation["direction"]) is int
    assert observation["mission"] == "use the key to open the door and then get to the goal"
    assert space.contains(observation)
    step = env.step(2)
    assert {"x", "y"} <= set(step.metrics)
    env.close()


def test_heuristic_feedback_reports_success_funnel_and_action_usage(play_program: Any) -> None:
    benchmark = minigrid.BENCHMARKS["minigrid/door-key-5x5"]()
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    records = play_program(benchmark, programs.heuristic, count=2)
    feedback = benchmark.feedback(records)
    content = feedback.content
    assert content["success_rate"] == 1.0
    assert content["outcome_counts"] == {"success": 2}
    assert content["funnel"] == {
        "episodes": 2, "box_seen": 0, "door_opened": 2, "goal_seen": 2, "key_picked": 2, "key_seen": 2,
        "object_picked": 0, "success": 2,
    }  # fmt: skip
    assert content["action_usage"]["pickup"] > 0
    assert content["action_usage"]["toggle"] > 0
    assert set(content["notes"]) >= {"distinct_cells", "stalls", "key_picked", "door_opened"}
    assert 0.5 < float(feedback.score or 0) <= 1.0


def test_playground_return_is_the_fraction_of_rooms_entered() -> None:
    import minigrid as upstream  # noqa: F401

    env = RoomCoverage(gym.make("MiniGrid-Playground-v0", max_steps=1000))
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    total, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        _obs, reward, terminated, truncated, _info = env.step(int(rng.integers(0, 3)))
        total += reward
    assert 1 / 9 - 1e-9 <= total <= 1.0 + 1e-9
    assert terminated == (abs(total - 1.0) < 1e-9)
    env.close()


def test_a_wfc_preset_without_its_pattern_image_is_a_clear_config_error() -> None:
    from minigrid.envs.wfc import config as wfc_config

    if (Path(wfc_config.PATTERN_PATH) / "SimpleMaze.png").is_file():
        pytest.skip("this minigrid install ships the WFC patterns")
    with pytest.raises(ConfigError, match=r"SimpleMaze\.png.*Farama-Foundation/Minigrid"):
        minigrid.BENCHMARKS["minigrid/wfc-maze-simple"](size=15)
    with pytest.raises(ValidationError, match="size"):  # the registry reports it as a ConfigError naming the field
        minigrid.BENCHMARKS["minigrid/wfc-maze-simple"](size=20)


def test_one_baseline_episode_through_the_real_evaluate() -> None:
    name = "babyai/go-to-red-ball"
    programs = benchmark_programs(babyai.BENCHMARKS[name]())
    result = evaluate(programs.baseline, name, config=EvaluationConfig(episodes=1, seed=1))
    assert result.failures == 0
    assert result.score is not None
    assert all(e.trajectory_digest for e in result.episodes)
