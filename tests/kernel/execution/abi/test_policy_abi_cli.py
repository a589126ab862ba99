"""``--policy-abi evopolicygym`` through the real CLI: Programs written to EvoPolicyGym 0.3's contract (its
``evopolicygym.policy`` module, its observation and action encodings) run unchanged on the Benchmarks both projects
have; the choice is recorded and replayed; an invalid action is ``invalid_action``; other Benchmarks are refused in one
line; the default ABI is untouched (the module is not importable, nothing new is recorded)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import RunConfig
from evoledger.ledger.errors import ConfigError

CARTPOLE = """
from evopolicygym.policy import PolicyContext, PolicyValue


class Policy:
    def act(self, observation: PolicyValue) -> PolicyValue:
        assert type(observation) is list and len(observation) == 4, observation
        assert all(type(value) is float for value in observation), observation
        _position, _velocity, angle, angular_velocity = observation
        return 1 if angle + 0.5 * angular_velocity > 0 else 0


def make_policy(context: PolicyContext) -> Policy:
    assert isinstance(context, PolicyContext)
    assert context.action_space == {"type": "int", "low": 0, "high": 1}, context.action_space
    space = context.observation_space
    assert space["type"] == "list" and space["names"][2] == "pole_angle", space
    assert space["items"][1] == {"type": "float", "low": None, "high": None}, space
    assert type(context.policy_seed) is int and 0 <= context.policy_seed < 2**64
    assert context.environment_parameters["gymnasium_id"] == "CartPole-v1"
    return Policy()
"""

MOLECULES = """
from evopolicygym.policy import PolicyContext, PolicyValue


class Policy:
    def act(self, observation: PolicyValue) -> PolicyValue:
        positions = observation["positions"]
        assert type(positions) is list and len(positions) == 300, type(positions)
        assert type(positions[7]) is list and all(type(v) is float for v in positions[7]), positions[7]
        assert type(observation["components"][5]) is int
        if observation["turn"] > 0:
            assert observation["initial"] is None
            return {"bonds": []}
        size = observation["initial"]["target_size"]
        return {"bonds": [[i, i + 1] for i in range(299) if (i + 1) % size != 0]}


def make_policy(context: PolicyContext) -> Policy:
    bonds = context.action_space["fields"]["bonds"]
    assert bonds["max_length"] == 290 and bonds["item"]["item"]["high"] == 299, bonds
    assert context.observation_space["fields"]["positions"]["shape"] == [300, 2]
    return Policy()
"""

FROZEN_LAKE = """
from evopolicygym.policy import PolicyContext

MOVES = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}


class Policy:
    def __init__(self, lake):
        self.lake = lake

    def act(self, observation):
        assert set(observation) == {"state", "row", "column", "tile"}, observation
        row, column = observation["row"], observation["column"]
        assert observation["state"] == row * len(self.lake[0]) + column
        assert observation["tile"] == self.lake[row][column] and observation["tile"] in "SFHG"
        return 2 if column < len(self.lake[0]) - 1 else 1  # right, then down


def make_policy(context: PolicyContext):
    fields = context.observation_space["fields"]
    assert fields["tile"]["values"] == ["F", "G", "H", "S"], fields
    assert context.action_space == {"type": "int", "low": 0, "high": 3}
    return Policy(context.environment_parameters["map"])
"""

PENDULUM = """
import struct

from evopolicygym.policy import PolicyContext, TensorValue


class Policy:
    def __init__(self):
        self.steps = 0

    def act(self, observation):
        assert set(observation) == {"cos_theta", "sin_theta", "theta_angular_velocity"}, observation
        assert all(type(value) is float for value in observation.values())
        self.steps += 1
        torque = max(-2.0, min(2.0, -2.0 * observation["sin_theta"] - 0.5 * observation["theta_angular_velocity"]))
        if self.steps % 3 == 0:  # a TensorValue of the action's shape works as well as a bare float or a list
            return TensorValue("float32", (1,), struct.pack("<f", torque))
        return [torque] if self.steps % 3 == 1 else torque


def make_policy(context: PolicyContext):
    assert context.action_space == {"type": "float", "low": -2.0, "high": 2.0}, context.action_space
    assert context.observation_space["fields"]["cos_theta"] == {"type": "float", "low": -1.0, "high": 1.0}
    return Policy()
"""

MINIGRID = """
from evopolicygym.policy import PolicyContext, TensorValue


class Policy:
    def act(self, observation):
        image = observation["image"]
        assert isinstance(image, TensorValue), type(image)
        assert (image.dtype, image.shape, len(image.data)) == ("uint8", (7, 7, 3), 147)
        assert type(observation["direction"]) is int and 0 <= observation["direction"] <= 3
        assert type(observation["mission"]) is str and observation["mission"]
        in_front = image.data[(3 * 7 + 5) * 3]  # the object index of the cell ahead of the agent at (3, 6)
        return 2 if in_front in (1, 8) else 1  # forward onto empty or goal, else turn right


def make_policy(context: PolicyContext):
    space = context.observation_space
    assert space["type"] == "dict", space
    assert space["fields"]["image"] == {"type": "tensor", "dtype": "uint8", "shape": [7, 7, 3], "low": 0, "high": 255}
    assert context.action_space == {"type": "int", "low": 0, "high": 6}
    return Policy()
"""

_BWRAP, _WHY_NOT = probe_bwrap()

_TENSOR_ACTION = """
import struct

import numpy as np
from evopolicygym.policy import TensorValue


def make_policy(context):
    class Policy:
        def act(self, observation):
            BODY

    return Policy()
"""
INVALID_ACTIONS = {
    # a TensorValue of the wrong shape: the Environment refuses it, as it refuses any other wrong action
    "wrong-shape": ('return TensorValue("float32", (3,), struct.pack("<3f", 0.0, 0.0, 0.0))', "needs shape (1,)"),
    # a TensorValue forged past its own checks: refused at the boundary, in the Policy process (the other values
    # refused there are in test_encodings.py, without a process each)
    "forged": (
        'forged = TensorValue("float32", (1,), bytes(4)); object.__setattr__(forged, "data", bytes(1)); return forged',
        "an invalid TensorValue (data holds 1 bytes",
    ),
}


@pytest.fixture
def cwd(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh short working folder under /tmp (a Run's session socket path is length-limited)."""
    root = Path(tempfile.mkdtemp(prefix="abi-", dir="/tmp"))
    monkeypatch.chdir(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _program(root: Path, source: str, name: str = "program") -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "policy.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return folder


def _evaluate(program: Path, benchmark: str, episodes: int, *extra: str, isolation: str = "local") -> tuple[int, Any]:
    args = ["evaluate", str(program), "-b", benchmark, "-n", str(episodes), "--json", "--isolation", isolation]
    result = CliRunner().invoke(cli, [*args, *extra])
    return result.exit_code, json.loads(result.stdout) if result.exit_code in (0, 6) else result.output


def _recorded_config(record: Path, kind: str) -> dict[str, Any]:
    with sqlite3.connect(f"file:{record / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        (payload,) = db.execute("SELECT payload FROM events WHERE kind = ?", (kind,)).fetchone()
    config = json.loads(payload)["config"]
    assert isinstance(config, dict)
    return config


@pytest.mark.parametrize(
    ("name", "source", "episodes", "least_score"),
    [
        ("cartpole", CARTPOLE, 2, 400.0),
        ("frozen-lake", FROZEN_LAKE, 3, 0.0),
        ("pendulum", PENDULUM, 1, -3000.0),
        ("minigrid/empty-5x5", MINIGRID, 2, 0.5),
        ("atcoder/ahc057-molecules", MOLECULES, 1, 1_000_000.0),
    ],
    ids=["cartpole", "frozen-lake", "pendulum", "minigrid", "ahc057"],
)
def test_evopolicygym_programs_run_unchanged_through_evaluate(
    cwd: Path, name: str, source: str, episodes: int, least_score: float
) -> None:
    code, result = _evaluate(
        _program(cwd, source), name, episodes, "--policy-abi", "evopolicygym", "--record-to", "record"
    )
    assert code == 0, result
    assert [episode["status"] for episode in result["episodes"]] == ["ok"] * episodes, result["episodes"]
    assert result["score"] >= least_score
    assert _recorded_config(cwd / "record", "evaluation-started")["policy_abi"] == "evopolicygym"


def test_a_failing_act_shows_the_programs_own_traceback(cwd: Path) -> None:
    source = "def make_policy(context):\n    return Policy()\n\n\nclass Policy:\n    def act(self, observation):\n"
    code, result = _evaluate(
        _program(cwd, source + "        raise RuntimeError('boom')\n"), "cartpole", 1, "--policy-abi", "evopolicygym"
    )
    assert code == 6, result
    trace = result["episodes"][0]["traceback"]
    assert trace.splitlines()[1].endswith('policy.py", line 7, in act'), trace  # not the ABI's wrapper
    assert "RuntimeError: boom" in trace


@pytest.mark.skipif(_BWRAP is None, reason=f"bubblewrap cannot run here: {_WHY_NOT}")
def test_the_module_and_conversions_work_inside_the_bwrap_sandbox(cwd: Path) -> None:
    code, result = _evaluate(
        _program(cwd, MINIGRID), "minigrid/empty-5x5", 1, "--policy-abi", "evopolicygym", isolation="bwrap"
    )
    assert code == 0, result
    assert result["episodes"][0]["status"] == "ok", result["episodes"]


@pytest.mark.parametrize("case", sorted(INVALID_ACTIONS))
def test_an_invalid_action_ends_the_episode_as_invalid_action(cwd: Path, case: str) -> None:
    body, message = INVALID_ACTIONS[case]
    program = _program(cwd, _TENSOR_ACTION.replace("BODY", "\n            ".join(body.split("; "))))
    code, result = _evaluate(program, "pendulum", 1, "--policy-abi", "evopolicygym")
    assert code == 6, result
    (episode,) = result["episodes"]
    assert episode["status"] == "invalid_action", episode
    assert message in episode["failure"], episode["failure"]


def test_a_run_records_the_abi_and_replay_reexecutes_under_it(cwd: Path) -> None:
    program = _program(cwd, FROZEN_LAKE)
    small = ["--validation-episodes", "0", "--assessment-episodes", "2", "--episode-budget", "4"]
    args = ["run", "frozen-lake", "--agent", "baseline", "--program", str(program), "--isolation", "local", *small]
    result = CliRunner().invoke(cli, [*args, "--policy-abi", "evopolicygym", "--record-to", "runs/r"])
    assert result.exit_code == 0, result.output
    assert _recorded_config(cwd / "runs" / "r", "run-created")["policy_abi"] == "evopolicygym"
    replayed = CliRunner().invoke(cli, ["replay", "runs/r", "--execute", "--isolation", "local", "--json"])
    assert replayed.exit_code == 0, replayed.output
    report = json.loads(replayed.output)
    assert report["ok"] is True, report


@pytest.mark.parametrize("command", ["evaluate", "run"])
def test_a_benchmark_without_an_evopolicygym_encoding_is_refused_in_one_line(cwd: Path, command: str) -> None:
    program = _program(cwd, CARTPOLE)
    args = ["evaluate", str(program), "-b", "acrobot"] if command == "evaluate" else ["run", "acrobot"]
    result = CliRunner().invoke(cli, [*args, "--policy-abi", "evopolicygym", "--record-to", "out"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "Benchmark 'acrobot' has no EvoPolicyGym encoding" in line
    assert "classic-control/cartpole" in line
    assert "minigrid/*" in line
    assert not (cwd / "out").exists()


def test_a_run_under_the_evopolicygym_abi_needs_its_own_program(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "cartpole", "--policy-abi", "evopolicygym", "--record-to", "out"])
    assert result.exit_code == 2, result.output
    assert "--policy-abi evopolicygym needs --program DIR" in result.output
    assert not (cwd / "out").exists()


def test_the_default_abi_is_unchanged(cwd: Path) -> None:
    # nothing new is recorded for the default, so earlier records (and pinned digests) keep their bytes
    assert "policy_abi" not in RunConfig().model_dump(mode="json")
    assert "policy_abi" not in EvaluationConfig().model_dump(mode="json")
    assert RunConfig.model_validate(RunConfig().model_dump(mode="json")).policy_abi == "evoledger"
    # and the module is not importable by a Program run under it
    code, result = _evaluate(_program(cwd, CARTPOLE), "cartpole", 1)
    assert code == 6, result
    (episode,) = result["episodes"]
    assert episode["status"] == "exception"
    assert "No module named 'evopolicygym'" in episode["failure"]


def test_evaluate_refuses_an_executor_running_another_abi(cwd: Path) -> None:
    config = EvaluationConfig(policy_abi="evopolicygym", episodes=1, isolation="local")
    with (
        LocalExecutor(BenchmarkRef(name="cartpole"), isolation="local", wait_until_ready=False) as executor,
        pytest.raises(ConfigError, match="the executor runs Programs under policy_abi 'evoledger'"),
    ):
        evaluate(_program(cwd, CARTPOLE), "cartpole", config=config, executor=executor)
