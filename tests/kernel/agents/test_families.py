"""The generic families the hill-climb Agent writes: sized from the task's spec, valid actions on every Benchmark."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.agents.builtin.families import family_for, public_spec, target_score, write_family
from evoledger.kernel.registry import default_registry
from evoledger.kernel.run import RunConfig
from evoledger.kernel.run.task import task_text_for

NAMES = [n for n in default_registry().names() if not n.startswith(("minigrid/", "babyai/"))]  # dict observations


def _load(program: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"family_{abs(hash(program))}", program / "policy.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spec_is_read_back_from_the_real_task_text(tmp_path: Path) -> None:
    benchmark = default_registry().make("cartpole")
    task_file = tmp_path / "task.md"
    task_file.write_text(task_text_for(benchmark, RunConfig()), encoding="utf-8")
    spec = public_spec(task_file)
    assert spec == json.loads(json.dumps(benchmark.spec.model_dump(mode="json")))
    assert target_score(spec) == 475.0
    assert public_spec(tmp_path / "missing.md") is None
    assert public_spec(None) is None


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_benchmark_has_a_family_whose_actions_are_valid(name: str, tmp_path: Path) -> None:
    benchmark = default_registry().make(name)
    spec = json.loads(json.dumps(benchmark.spec.model_dump(mode="json")))
    family = family_for(spec)
    assert family is not None
    expected = "tabular" if spec["observation_space"]["type"] == "Discrete" else "linear"
    assert family.name == expected
    rng = np.random.default_rng(0)
    params = {key: float(rng.normal()) for key in family.params}  # a point the search may propose
    write_family(tmp_path / "program", family)
    (tmp_path / "program" / "params.json").write_text(json.dumps(params), encoding="utf-8")
    module = _load(tmp_path / "program")
    context = SimpleNamespace(
        observation_space=benchmark.observation_space,
        action_space=benchmark.action_space,
        metadata=dict(benchmark.spec.metadata),
        environment_parameters=dict(benchmark.spec.environment_parameters),
        policy_seed=1,
    )
    episode = benchmark.episodes("train", seed=3, count=1)[0]
    env = benchmark.make_environment(episode)
    try:
        observation: Any = env.reset()
        for _ in range(20):
            action = module.make_policy(context).act(observation)
            assert benchmark.action_space.contains(action), (name, action)
            step = env.step(action)  # strict Benchmarks raise InvalidAction for anything off the space
            if step.terminated or step.truncated:
                break
            observation = step.observation
    finally:
        env.close()


def test_zero_parameters_pick_the_first_action_and_the_middle_of_a_box(tmp_path: Path) -> None:
    for name, expected in (("frozen-lake", 0), ("pendulum", [0.0])):
        benchmark = default_registry().make(name)
        family = family_for(json.loads(json.dumps(benchmark.spec.model_dump(mode="json"))))
        assert family is not None
        write_family(tmp_path / name, family)
        module = _load(tmp_path / name)
        context = SimpleNamespace(observation_space=benchmark.observation_space, action_space=benchmark.action_space)
        observation = benchmark.make_environment(benchmark.episodes("train", seed=1, count=1)[0]).reset()
        action = module.make_policy(context).act(observation)
        assert np.asarray(action).tolist() == expected


def test_no_family_for_an_action_space_it_cannot_produce() -> None:
    assert (
        family_for({"observation_space": {"type": "Discrete", "n": 2}, "action_space": {"type": "MultiBinary"}}) is None
    )
    assert family_for(None) is None
