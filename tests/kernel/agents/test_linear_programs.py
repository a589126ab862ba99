"""The parametric ``*-linear`` Programs the hill-climb agent tunes: they read params.json and act validly."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

PROGRAMS = Path(__file__).resolve().parents[3] / "benchmarks" / "programs"


def _load(tmp_path: Path, name: str, params: dict[str, float] | None = None) -> ModuleType:
    """Copy the Program (as a Run would snapshot it), optionally with new params, and import its policy.py."""
    target = tmp_path / name
    shutil.copytree(PROGRAMS / name, target)
    if params is not None:
        (target / "params.json").write_text(json.dumps(params))
    spec = importlib.util.spec_from_file_location(f"policy_{name.replace('-', '_')}", target / "policy.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _context(env: Any) -> SimpleNamespace:
    return SimpleNamespace(
        observation_space=env.observation_space,
        action_space=env.action_space,
        metadata={},
        environment_parameters={},
        policy_seed=0,
    )


def _episode(env_id: str, module: ModuleType, seed: int = 0) -> tuple[float, int]:
    env = gym.make(env_id)
    policy = module.make_policy(_context(env))
    obs, _ = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        action = policy.act(obs)
        assert env.action_space.contains(action), action
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        steps += 1
        done = terminated or truncated
    env.close()
    return total, steps


@pytest.mark.parametrize("name", ["cartpole-linear", "mountain-car-linear", "pendulum-linear"])
def test_shipped_params_are_a_flat_dict_of_zeros(name: str) -> None:
    params = json.loads((PROGRAMS / name / "params.json").read_text())
    assert params
    assert all(isinstance(v, float) and v == 0.0 for v in params.values())
    assert not (PROGRAMS / name / "__init__.py").exists()


def test_cartpole_linear_zero_params_always_push_left(tmp_path: Path) -> None:
    module = _load(tmp_path, "cartpole-linear")
    policy = module.make_policy(None)
    assert {policy.act(np.array(o, dtype=np.float32)) for o in ([0.1, 0.2, 0.05, 0.3], [-1, -1, -0.1, -2])} == {0}
    total, _ = _episode("CartPole-v1", module)
    assert total < 15


def test_cartpole_linear_good_params_balance_the_pole(tmp_path: Path) -> None:
    module = _load(tmp_path, "cartpole-linear", {"w0": 0.024, "w1": 0.1, "w2": 0.1, "w3": 0.15})
    policy = module.make_policy(None)
    assert policy.act(np.array([0.0, 0.0, 0.1, 0.0], dtype=np.float32)) == 1
    assert policy.act(np.array([0.0, 0.0, -0.1, 0.0], dtype=np.float32)) == 0
    total, _ = _episode("CartPole-v1", module)
    assert total == 500.0


def test_mountain_car_linear_params_matter(tmp_path: Path) -> None:
    zero = _load(tmp_path / "zero", "mountain-car-linear")
    assert _episode("MountainCar-v0", zero)[0] == -200.0  # always accelerating left never reaches the flag
    pump = _load(tmp_path / "pump", "mountain-car-linear", {"w_position": 0.0, "w_velocity": 1.0, "bias": 0.0})
    assert _episode("MountainCar-v0", pump)[0] > -200.0  # pushing along the velocity does


def test_pendulum_linear_returns_a_clipped_float32_torque(tmp_path: Path) -> None:
    module = _load(tmp_path, "pendulum-linear", {"w_cos": 0.0, "w_sin": -10.0, "w_velocity": -1.0, "bias": 0.0})
    env = gym.make("Pendulum-v1")
    policy = module.make_policy(_context(env))
    action = policy.act(np.array([1.0, 0.9, 0.0], dtype=np.float32))
    assert action.dtype == np.float32
    assert action.shape == (1,)
    assert action[0] == pytest.approx(-2.0)  # clipped to the action space
    zero = _load(tmp_path / "zero", "pendulum-linear")
    assert zero.make_policy(None).act(np.array([1.0, 0.0, 0.0])).tolist() == [0.0]  # no context: default bounds
    _episode("Pendulum-v1", module)
