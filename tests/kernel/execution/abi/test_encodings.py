"""The EvoPolicyGym encodings on real Environments, in this process: every family that accepts ``--policy-abi
evopolicygym`` gets a plain-data context, observations of the catalogued form, and its neutral action (as an
EvoPolicyGym Program writes it) reaches the Environment as a valid action."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution.abi import check_policy_abi
from evoledger.kernel.execution.abi.child import ChildAbi
from evoledger.kernel.execution.abi.plan import child_abi_for
from evoledger.kernel.execution.action_wire import InvalidActionValue
from evoledger.kernel.execution.actions import conform_action
from evoledger.kernel.execution.policy_runtime import PolicyTemplate
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.ledger.errors import ConfigError


@pytest.fixture
def module_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``evopolicygym`` importable for this test only (as in a Policy child), and forgotten afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [name for name in sys.modules if name == "evopolicygym" or name.startswith("evopolicygym.")]:
        del sys.modules[name]


def _neutral(description: dict[str, Any]) -> Any:
    """The action an EvoPolicyGym Program would write for ``description``: the lowest int, a 0.0, a list of 0.0."""
    if description["type"] == "int":
        return description["low"]
    if description["type"] == "float":
        return 0.0
    return [0.0] * len(description["items"])


def _is_policy_value(value: Any, tensor_type: type) -> bool:
    if value is None or type(value) in (bool, int, float, str, bytes, tensor_type):
        return True
    if type(value) in (list, tuple):
        return all(_is_policy_value(item, tensor_type) for item in value)
    return type(value) is dict and all(type(k) is str and _is_policy_value(v, tensor_type) for k, v in value.items())


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("toy-text/blackjack", {"player_sum": int, "dealer_showing": int, "usable_ace": bool}),
        ("classic-control/mountain-car-continuous", {"position": float, "velocity": float}),
        ("classic-control/mountain-car", {"position": float, "velocity": float}),
        ("highway/highway", ("float32", (5, 5))),
        ("highway/parking", {"observation": ("float64", (6,))}),
        ("box2d/car-racing", ("uint8", (96, 96, 3))),
        ("crafter/achievement-score", ("uint8", (64, 64, 3))),
        ("ale/tetris", ("uint8", (210, 160, 3))),
        ("vizdoom/basic", {"screen": ("uint8", (240, 320, 3)), "gamevariables": ("float32", (1,))}),
        ("babyai/go-to-red-ball", {"image": ("uint8", (7, 7, 3)), "direction": int, "mission": str}),
        ("robotics/fetch-reach", {"observation": ("float64", (10,)), "desired_goal": ("float64", (3,))}),
        ("robotics/adroit-door", ("float64", (39,))),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_each_family_presents_the_catalogued_observation_and_takes_its_action(
    module_path: None, name: str, expect: Any
) -> None:
    benchmark = resolve_benchmark(BenchmarkRef(name=name))
    abi = child_abi_for("evopolicygym", name, benchmark)
    assert isinstance(abi, ChildAbi)
    spec = benchmark.spec
    template = PolicyTemplate(
        benchmark.observation_space, benchmark.action_space, spec.metadata, spec.environment_parameters
    )
    context = abi.context(template, 7)
    tensor_type = sys.modules["evopolicygym.policy"].TensorValue
    assert _is_policy_value(context.observation_space, tensor_type)
    assert _is_policy_value(context.action_space, tensor_type)
    seen: list[Any] = []

    def act(observation: Any) -> Any:
        seen.append(observation)
        return _neutral(context.action_space)

    wrapped = abi.wrap(act)
    environment = benchmark.make_environment(EpisodeSpec(split="train", index=0, seed=11))
    try:
        action = wrapped(environment.reset())
        environment.step(conform_action(action, benchmark.action_space))  # an invalid action would raise here
    finally:
        environment.close()
    (observation,) = seen
    assert _is_policy_value(observation, tensor_type)

    def check(value: Any, wanted: Any) -> None:
        if isinstance(wanted, tuple):
            assert isinstance(value, tensor_type)
            assert (value.dtype, value.shape) == wanted
        elif isinstance(wanted, dict):
            assert set(wanted) <= set(value)
            for key, sub in wanted.items():
                check(value[key], sub)
        else:
            assert type(value) is wanted, (value, wanted)

    check(observation, expect)


def test_a_tensor_observation_keeps_its_bytes(module_path: None) -> None:
    benchmark = resolve_benchmark(BenchmarkRef(name="minigrid/empty-5x5"))
    abi = child_abi_for("evopolicygym", "minigrid/empty-5x5", benchmark)
    assert abi is not None
    seen: list[Any] = []

    def act(observation: Any) -> int:
        seen.append(observation)
        return 0

    abi.wrap(act)({"image": np.arange(147, dtype=np.uint8).reshape(7, 7, 3), "direction": 1, "mission": "go"})
    image = seen[0]["image"]
    assert image.data == bytes(range(147))
    assert np.array_equal(np.frombuffer(image.data, np.uint8).reshape(image.shape)[3, 6], [81, 82, 83])


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.zeros(1, dtype=np.float32), "act() returned numpy.ndarray, which is not an action"),
        (np.float32(0.5), "act() returned numpy.float32"),
        (float("nan"), "the float nan is not finite"),
        ([0.0, float("inf")], "the float inf is not finite"),
        (b"\0\0\0\0", "bytes are a PolicyValue but no Benchmark of this ABI takes them"),
        ({1: 0.0}, "a dict key of type int"),
        (object(), "return int, float, bool, str, None, list, tuple, dict with str keys or"),
    ],
    ids=["ndarray", "numpy-scalar", "nan", "inf-in-list", "bytes", "int-key", "object"],
)
def test_what_is_not_an_action_is_refused_in_the_policy_process(module_path: None, action: Any, message: str) -> None:
    benchmark = resolve_benchmark(BenchmarkRef(name="pendulum"))
    abi = child_abi_for("evopolicygym", "pendulum", benchmark)
    assert abi is not None
    with pytest.raises(InvalidActionValue) as refused:
        abi.wrap(lambda observation: action)(np.zeros(3, dtype=np.float32))
    assert message in str(refused.value)


def test_accepted_actions_reach_the_kernel_in_its_form(module_path: None) -> None:
    pendulum = child_abi_for("evopolicygym", "pendulum", resolve_benchmark(BenchmarkRef(name="pendulum")))
    car = child_abi_for("evopolicygym", "box2d/car-racing", resolve_benchmark(BenchmarkRef(name="box2d/car-racing")))
    assert pendulum is not None
    assert car is not None
    observation = np.zeros(3, dtype=np.float32)
    assert pendulum.wrap(lambda o: 1.5)(observation) == [1.5]
    assert pendulum.wrap(lambda o: 1)(observation) == [1]
    assert pendulum.wrap(lambda o: [0.25])(observation) == [0.25]
    tensor = sys.modules["evopolicygym.policy"].TensorValue
    steer = car.wrap(lambda o: tensor("float64", (3,), np.array([0.5, 1.0, 0.0]).tobytes()))(
        np.zeros((96, 96, 3), np.uint8)
    )
    assert isinstance(steer, np.ndarray)
    assert steer.dtype == np.float64
    assert steer.tolist() == [0.5, 1.0, 0.0]


def test_the_default_abi_and_unknown_benchmarks(module_path: None) -> None:
    check_policy_abi("evoledger", "pkg.module:anything")  # the default fits every Benchmark, unresolved
    assert child_abi_for(None, "cartpole", object()) is None
    assert child_abi_for("evoledger", "cartpole", object()) is None
    with pytest.raises(ConfigError, match="'mujoco/hopper' has no EvoPolicyGym encoding"):
        check_policy_abi("evopolicygym", "mujoco/hopper")
    with pytest.raises(ConfigError, match="is not one of evoledger, evopolicygym"):
        check_policy_abi("gym", "cartpole")
    assert "evopolicygym" not in sys.modules


def test_a_contest_observation_arrives_as_plain_json_and_its_action_reaches_the_environment(module_path: None) -> None:
    name = "atcoder/ahc058-apple-incremental-game"
    benchmark = resolve_benchmark(BenchmarkRef(name=name))
    abi = child_abi_for("evopolicygym", name, benchmark)
    assert isinstance(abi, ChildAbi)
    assert abi.action_space["type"] == "any_of"
    seen: list[Any] = []

    def act(observation: Any) -> Any:
        seen.append(observation)
        return {"upgrade": [0, 0]}

    wrapped = abi.wrap(act)
    environment = benchmark.make_environment(EpisodeSpec(split="train", index=0, seed=11))
    try:
        step = environment.step(conform_action(wrapped(environment.reset()), benchmark.action_space))
    finally:
        environment.close()
    (observation,) = seen
    assert type(observation["machines"]) is list
    assert type(observation["machines"][3][9]) is int
    assert observation["initial"]["costs"][0][0] == 1
    assert step.observation["powers"][0][0] == 1
