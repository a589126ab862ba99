"""The Box2D family (default suite, a few seconds): specs, settings, the missing extra, outcomes and notes, and one
short Episode per kind of observation through the real executor. ``test_box2d_catalog.py`` has the long checks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.benchmarks import box2d
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.ledger.errors import ConfigError
from gymnasium import spaces

ROOT = Path(__file__).resolve().parents[2]

TASKS = {
    # name: (gymnasium id, env kwargs that tell the tasks apart, default steps, action space kind)
    "box2d/lunar-lander": ("LunarLander-v3", {"continuous": False}, 1000, spaces.Discrete),
    "box2d/lunar-lander-continuous": ("LunarLander-v3", {"continuous": True}, 1000, spaces.Box),
    "box2d/bipedal-walker": ("BipedalWalker-v3", {"hardcore": False}, 1600, spaces.Box),
    "box2d/bipedal-walker-hardcore": ("BipedalWalker-v3", {"hardcore": True}, 1600, spaces.Box),
    "box2d/car-racing": ("CarRacing-v3", {"continuous": True}, 1000, spaces.Box),
}


def test_catalog_lists_every_benchmark_with_the_box2d_extra() -> None:
    assert list(box2d.BENCHMARKS) == list(TASKS)
    assert [entry.name for entry in box2d.CATALOG] == list(TASKS)
    for entry in box2d.CATALOG:
        assert entry.family == "box2d"
        assert entry.extra == box2d.EXTRA
        assert entry.summary
    assert box2d.EXTRA.name == "box2d"
    assert box2d.EXTRA.modules == ("Box2D", "pygame")
    assert set(TASKS) <= set(default_registry().names())


def test_the_module_imports_without_box2d_and_a_factory_names_the_install_command() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["Box2D"] = None  # as if the extra were not installed
        import evoledger.benchmarks.box2d as family
        from evoledger.ledger.errors import MissingExtraError
        assert "pygame" not in sys.modules and "gymnasium.envs.box2d.lunar_lander" not in sys.modules
        print(sorted(family.BENCHMARKS))
        for factory in family.BENCHMARKS.values():
            try:
                factory()
            except MissingExtraError as exc:
                print("missing:", exc)
            else:
                raise SystemExit("built without Box2D")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    missing = [line for line in done.stdout.splitlines() if line.startswith("missing:")]
    assert len(missing) == len(TASKS)
    assert all("pip install 'evoledger[box2d]'" in line for line in missing)
    assert "box2d/car-racing" in missing[-1]


def test_building_every_benchmark_under_w_error_neither_crashes_nor_prints() -> None:
    # Box2D's SWIG module warns while it initialises: under -W error that was a segmentation fault (exit -11),
    # and pygame's import banner went to stdout, where it would corrupt --json output.
    script = textwrap.dedent(
        """
        from evoledger.benchmarks.box2d import BENCHMARKS
        for factory in BENCHMARKS.values():
            benchmark = factory(max_episode_steps=2)
            env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
            env.reset()
            env.step(benchmark.action_space.sample())
            env.close()
        print("built")
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout == "built\n"


@pytest.mark.parametrize("name", sorted(TASKS))
def test_spec_states_the_task_its_score_and_its_failure_return(name: str) -> None:
    gym_id, kwargs, steps, action_kind = TASKS[name]
    benchmark = box2d.BENCHMARKS[name]()
    spec = benchmark.spec
    assert spec.id == name
    assert spec.environment_parameters["gymnasium_id"] == gym_id
    assert kwargs.items() <= spec.environment_parameters.items()
    assert spec.max_episode_steps == steps
    assert spec.metadata["failure_return"] == -1000.0
    assert spec.scoring is not None
    assert spec.scoring.failure_return == -1000.0
    assert spec.score_direction == "maximize"
    assert "Score (mean_return, maximize)" in spec.description
    assert "Episodes the Policy failed count as -1000.0" in spec.description
    assert isinstance(benchmark.action_space, action_kind)
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    assert programs.tunable is not None
    for program in (programs.baseline, programs.heuristic, programs.tunable):
        assert (program / "policy.py").is_file()


def test_car_racing_observes_uint8_images_and_has_a_discrete_mode() -> None:
    benchmark = box2d.make_car_racing()
    assert benchmark.observation_space == spaces.Box(0, 255, (96, 96, 3), np.uint8)
    discrete = box2d.make_car_racing(continuous=False)
    assert discrete.action_space == spaces.Discrete(5)
    assert discrete.spec.parameters_digest != benchmark.spec.parameters_digest


def test_settings_are_public_change_the_digest_and_scale_the_failure_return() -> None:
    plain, windy = box2d.make_lunar_lander(), box2d.make_lunar_lander(enable_wind=True, gravity=-5.0)
    assert windy.spec.environment_parameters["enable_wind"] is True
    assert windy.spec.environment_parameters["gravity"] == -5.0
    assert windy.spec.parameters_digest != plain.spec.parameters_digest
    assert "wind power 15.0" in windy.spec.description
    long = box2d.make_bipedal_walker(max_episode_steps=3200)
    assert long.spec.metadata["failure_return"] == -2000.0
    assert box2d.make_car_racing(max_episode_steps=100).spec.metadata["failure_return"] == -1000.0


@pytest.mark.parametrize(
    ("name", "config", "fragment"),
    [
        ("box2d/lunar-lander", {"gravity": 0.0}, "gravity"),
        ("box2d/lunar-lander", {"wind_power": 50.0}, "wind_power"),
        ("box2d/lunar-lander-continuous", {"continuous": False}, "continuous"),
        ("box2d/bipedal-walker", {"hardcore": True}, "hardcore"),
        ("box2d/car-racing", {"lap_complete_percent": 0.0}, "lap_complete_percent"),
        ("box2d/car-racing", {"max_episode_steps": 0}, "max_episode_steps"),
    ],
)
def test_bad_settings_are_config_errors_naming_the_key(name: str, config: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        default_registry().make(name, config)


def test_lunar_lander_outcomes_and_notes_tell_a_crash_from_a_landing(play_program: Any) -> None:
    benchmark = box2d.make_lunar_lander()
    programs = benchmark_programs(benchmark)
    assert programs.heuristic is not None
    crashed = benchmark.feedback(play_program(benchmark, programs.baseline, count=2)).content
    landed = benchmark.feedback(play_program(benchmark, programs.heuristic, count=2)).content
    assert crashed["outcome_counts"] == {"crashed": 2}
    assert crashed["notes"]["fuel"]["max"] == 0.0
    assert landed["outcome_counts"] == {"landed": 2}
    assert landed["notes"]["fuel"]["min"] > 0.0
    assert landed["notes"]["touchdown_speed"]["max"] < crashed["notes"]["touchdown_speed"]["min"]
    assert landed["score"] > crashed["score"]
    tunable = programs.tunable
    assert tunable is not None  # its shipped gains are all zero: it never fires, like the baseline
    again = benchmark.feedback(play_program(benchmark, tunable, count=2)).content
    assert again["per_episode"] == crashed["per_episode"]


def test_a_lander_that_only_fires_its_main_engine_flies_away() -> None:
    benchmark = box2d.make_lunar_lander()
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    env.reset()
    while not ((step := env.step(2)).terminated or step.truncated):
        pass
    env.close()
    assert step.metrics["flew_away"] == 1.0
    assert step.metrics["fuel"] > 20.0


def test_bipedal_walker_baseline_falls_and_a_short_limit_times_out(play_program: Any) -> None:
    benchmark = box2d.make_bipedal_walker()
    content = benchmark.feedback(play_program(benchmark, benchmark_programs(benchmark).baseline, count=1)).content
    assert content["outcome_counts"] == {"fell": 1}
    assert 0.0 < content["notes"]["progress"]["max"] < 0.2
    assert content["notes"]["effort"]["max"] == 0.0
    short = box2d.make_bipedal_walker_hardcore(max_episode_steps=15)
    content = short.feedback(play_program(short, benchmark_programs(short).baseline, count=1)).content
    assert content["outcome_counts"] == {"timed_out": 1}


def test_car_racing_feedback_traces_without_images_and_samples_frames_as_npz(play_program: Any) -> None:
    benchmark = box2d.make_car_racing(max_episode_steps=5)
    records = play_program(benchmark, benchmark_programs(benchmark).baseline, count=3)
    feedback = benchmark.feedback(records)
    artifacts = {a.name: a for a in feedback.artifacts}
    trace = [json.loads(line) for line in artifacts["trace.jsonl"].data.decode().splitlines()]
    assert len(trace) == 3 * 6
    assert all(line["observation"] is None for line in trace)
    assert len(artifacts["trace.jsonl"].data) < 10_000  # as JSON the 18 images alone take about 1.4 MB
    frames = artifacts["observations.npz"]
    assert frames.retention == "bulk"
    with np.load(io.BytesIO(frames.data), allow_pickle=False) as npz:
        assert sorted(npz.files) == ["record-0-frames", "record-0-steps", "record-1-frames", "record-1-steps"]
        assert npz["record-0-frames"].shape == (6, 96, 96, 3)  # every step of a short Episode
        assert npz["record-0-frames"].dtype == np.uint8
        assert npz["record-0-steps"].tolist() == list(range(6))
        trajectory = records[0].trajectory
        assert trajectory is not None
        np.testing.assert_array_equal(npz["record-0-frames"][-1], np.asarray(trajectory.observations[5]))
    assert benchmark.feedback(records).artifacts == feedback.artifacts  # the same Episodes, the same bytes
    assert feedback.content["outcome_counts"] == {"timed_out": 3}


def test_one_short_image_episode_through_the_real_executor() -> None:
    ref = BenchmarkRef(name="box2d/car-racing", config={"max_episode_steps": 12})
    racing = evaluate(benchmark_programs(box2d.make_car_racing()).baseline, ref, config=EvaluationConfig(episodes=1))
    assert racing.failures == 0
    content = racing.feedback_content
    assert content["outcome_counts"] == {"timed_out": 1}
    assert content["notes"]["tiles_visited"]["max"] >= 1
    assert content["per_episode"]["0"]["steps"] == 12
    assert all(e.trajectory_digest for e in racing.episodes)
