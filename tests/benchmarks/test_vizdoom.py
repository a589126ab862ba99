"""ViZDoom's scenarios (``vizdoom/*``): catalogue, action names against the engine, settings, Feedback words.

Kept cheap for the default suite (Episodes in-process and unrecorded: a recorded 240x320x3 screen costs a list of
230,400 numbers a step here); heuristics against the no-op through ``evaluate`` for every scenario that ships one,
the built-in-Agent Run and replay are in ``test_vizdoom_catalog.py`` under the ``catalog`` marker.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from evoledger.benchmarks.vizdoom_scenarios import BENCHMARKS, CATALOG, EXTRA, HEURISTICS, SCENARIOS
from evoledger.kernel.authoring import Benchmark, EpisodeRecord, benchmark_programs
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import ConfigError

pytestmark = pytest.mark.skipif(not EXTRA.installed, reason=f"needs the extra 'vizdoom': {EXTRA.install_command}")

NAMES = [
    "vizdoom/basic",
    "vizdoom/basic-audio",
    "vizdoom/basic-notifications",
    "vizdoom/deadly-corridor",
    "vizdoom/deathmatch",
    "vizdoom/defend-center",
    "vizdoom/defend-line",
    "vizdoom/health-gathering",
    "vizdoom/health-gathering-supreme",
    "vizdoom/my-way-home",
    "vizdoom/predict-position",
    "vizdoom/take-cover",
]


def engine_actions(benchmark: Benchmark) -> list[str]:
    """The discrete actions as the engine maps them: ``noop``, then the button each index presses."""
    env: Any = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    try:
        inner = env._env.unwrapped
        buttons = [b.name.lower() for b in inner.game.get_available_buttons()][inner.num_delta_buttons :]
        return ["noop"] + ["+".join(buttons[i] for i, v in enumerate(row) if v) for row in inner.button_map[1:]]
    finally:
        env.close()


def play(benchmark: Benchmark, program: Path, *, count: int = 1) -> list[EpisodeRecord]:
    """In-process Episodes of a packaged Program, unrecorded (the records carry the last step's metrics)."""
    spec = importlib.util.spec_from_file_location(f"_vizdoom_{program.name.replace('-', '_')}", program / "policy.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in a packaged Program
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    records = []
    for episode in benchmark.episodes("train", seed=3, count=count):
        context = SimpleNamespace(
            observation_space=benchmark.observation_space,
            action_space=benchmark.action_space,
            metadata=dict(benchmark.spec.metadata),
            environment_parameters=dict(benchmark.spec.environment_parameters),
            policy_seed=0,
        )
        policy = module.make_policy(context)
        env = benchmark.make_environment(episode)
        total, steps = 0.0, 0
        try:
            observation = env.reset()
            while True:
                step = env.step(policy.act(observation))
                observation, total, steps = step.observation, total + step.reward, steps + 1
                if step.terminated or step.truncated:
                    break
        finally:
            env.close()
        records.append(
            EpisodeRecord(
                split="train",
                index=episode.index,
                status="ok",
                episode_return=total,
                steps=steps,
                terminated=step.terminated,
                truncated=step.truncated,
                metrics=dict(step.metrics),
            )
        )
    return records


def test_the_catalogue_rows_extra_and_shipped_programs() -> None:
    assert list(BENCHMARKS) == NAMES == [s.name for s in SCENARIOS] == [e.name for e in CATALOG]
    assert all(e.family == "vizdoom" and e.extra == EXTRA for e in CATALOG)
    assert EXTRA.modules == ("vizdoom",)
    assert set(NAMES) <= set(default_registry().names())
    programs = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    assert (programs / "vizdoom-baseline" / "policy.py").is_file()
    for task, program in HEURISTICS.items():
        assert (programs / program / "policy.py").is_file(), task


@pytest.mark.parametrize("name", ["vizdoom/basic", "vizdoom/deathmatch", "vizdoom/take-cover"])
def test_the_named_actions_are_the_engines(name: str) -> None:
    benchmark = default_registry().make(name)
    assert benchmark.spec.metadata["actions"] == engine_actions(benchmark)
    for index, action in enumerate(benchmark.spec.metadata["actions"]):
        assert f"{index} {action}" in benchmark.spec.description


def test_the_spec_and_the_step_limit_setting() -> None:
    basic = default_registry().make("vizdoom/basic")
    spec = basic.spec
    assert spec.max_episode_steps == 300
    assert spec.metadata["failure_return"] == -300.0
    assert spec.metadata["game_variables"] == ["ammo2"]
    assert spec.observation_space["spaces"]["screen"]["shape"] == [240, 320, 3]
    assert spec.action_space == {"type": "Discrete", "n": 4, "start": 0}
    assert benchmark_programs(basic).heuristic is not None
    deathmatch = benchmark_programs(default_registry().make("vizdoom/deathmatch")).heuristic
    assert deathmatch is not None
    assert deathmatch.name == "vizdoom-deathmatch-heuristic"
    short = default_registry().make("vizdoom/basic", {"max_episode_steps": 50})
    assert short.spec.metadata["failure_return"] == -50.0
    with pytest.raises(ConfigError, match="over the scenario's own limit of 300 steps"):
        default_registry().make("vizdoom/basic", {"max_episode_steps": 301})
    with pytest.raises(ConfigError, match="valid keys"):
        default_registry().make("vizdoom/basic", {"doom_skill": 1})


def test_feedback_says_who_died_who_finished_and_what_was_left() -> None:
    basic = BENCHMARKS["vizdoom/basic"]()
    heuristic = benchmark_programs(basic).heuristic
    assert heuristic is not None
    (shot,) = play(basic, heuristic)  # aims at the monster and kills it within a few dozen steps
    cover = BENCHMARKS["vizdoom/take-cover"]()
    (hit,) = play(cover, benchmark_programs(cover).baseline)  # standing still, the fireballs kill it
    assert shot.episode_return > 0
    assert basic.outcome(shot) == "finished"
    assert basic.episode_notes(shot)["ammo2"] < 50.0  # it fired
    assert cover.outcome(hit) == "died"
    content = cover.feedback([hit]).content
    assert content["outcome_counts"] == {"died": 1}
    assert hit.metrics["dead"] == 1.0
    assert set(content["per_episode"]["0"]["notes"]) == {"health"}  # action shares need a trajectory


def test_a_timed_out_episode_keeps_its_last_game_variables() -> None:
    basic = BENCHMARKS["vizdoom/basic"](max_episode_steps=20)
    (idle,) = play(basic, benchmark_programs(basic).baseline)
    assert idle.steps == 20
    assert basic.outcome(idle) == "timed_out"
    assert idle.metrics == {"dead": 0.0, "ammo2": 50.0}  # not the zeros vizdoom shows once an Episode is over


def test_the_deathmatch_heuristic_plays_the_hybrid_action_space() -> None:
    deathmatch = BENCHMARKS["vizdoom/deathmatch"](max_episode_steps=60)
    heuristic = benchmark_programs(deathmatch).heuristic
    assert heuristic is not None
    (short,) = play(deathmatch, heuristic)  # {"binary": ..., "continuous": [...]} on every step, none refused
    assert short.steps == 60
    assert deathmatch.outcome(short) == "timed_out"
    assert short.metrics["health"] > 0
