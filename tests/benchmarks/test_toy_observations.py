"""Images, dicts, text and multi-spaces through the real evaluate(): the Policy receives exactly the Gymnasium types,
its structured actions reach the Environment, and an action of the wrong form ends the Episode as invalid_action
with a message that says the expected form."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.authoring import check_benchmark
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

CONFIG = EvaluationConfig(episodes=2, seed=4, limits=PolicyLimits(act_timeout_seconds=20.0))

IMAGE_POLICY = """
import numpy as np


class Policy:
    def __init__(self, context):
        self.shape = context.observation_space.shape
        self.columns = int(context.action_space.n)

    def act(self, observation):
        if type(observation) is not np.ndarray or observation.dtype != np.uint8 or observation.shape != self.shape:
            raise TypeError(f"got {type(observation)} {getattr(observation, 'dtype', None)}")
        observation[0, 0, 0] = 1  # writable, as Gymnasium's arrays are
        x, width = int(observation[:, :, 0].max(axis=0).nonzero()[0][-1]), self.shape[1]
        return next(c for c in range(self.columns) if c * width // self.columns <= x < (c + 1) * width // self.columns)


def make_policy(context):
    return Policy(context)
"""

MIXED_POLICY = """
import numpy as np


def make_policy(context):
    return Policy()


class Policy:
    def act(self, observation):
        assert type(observation) is dict and list(observation) == ["dial", "lamps", "last", "mission", "step"]
        assert type(observation["mission"]) is str and type(observation["step"]) is int
        assert observation["lamps"].dtype == np.int8 and observation["dial"].dtype == np.int64
        right, reward = observation["last"]
        assert type(right) is int and reward.dtype == np.float32 and reward.shape == (1,)
        words = observation["mission"].split()
        return {
            "word": np.str_(words[6]),
            "dial": [int(words[1]), int(words[2])],
            "lamps": np.array([c == "1" for c in words[4]]),
            "nudge": (np.int64(words[8]), [int(words[9])]),
        }
"""

BAD_MIXED_ACTIONS = {
    "a list, not a dict": ("[1, 2]", "is not a dict; Dict needs keys"),
    "a missing key": ("{'dial': [0, 0], 'lamps': [0, 0, 0], 'word': 'a'}", "missing ['nudge']"),
    "a float dial": ("{**GOOD, 'dial': [0.5, 1.0]}", "action['dial'] [0.5, 1.0] has element type float64"),
    "a bool dial": ("{**GOOD, 'dial': [True, False]}", "element type bool"),
    "a dial out of range": ("{**GOOD, 'dial': [3, 0]}", "out of range at index (0,)"),
    "a lamp of 2": ("{**GOOD, 'lamps': [0, 2, 0]}", "holds values other than 0 and 1"),
    "a word too long": ("{**GOOD, 'word': 'abcdefghi'}", "has 9 characters; Text needs a str of 1 to 8"),
    "a word in capitals": ("{**GOOD, 'word': 'Cab'}", "uses characters 'C' not allowed"),
    "a nudge of 3 items": ("{**GOOD, 'nudge': (0, [0], 1)}", "has 3 items; Tuple needs 2"),
    "a nudge amount as float": ("{**GOOD, 'nudge': (0, [0.5])}", "never rounded"),
    "a nudge amount of NaN": ("{**GOOD, 'nudge': (0, [float('nan')])}", "element type float64"),
}
GOOD = "{'dial': [0, 0], 'lamps': [0, 0, 0], 'word': 'a', 'nudge': (0, [0])}"


def _program(root: Path, name: str, source: str) -> Path:
    directory = root / name
    directory.mkdir()
    (directory / "policy.py").write_text(source, encoding="utf-8")
    return directory


@pytest.mark.parametrize("name", ["toy/image", "toy/mixed"])
def test_the_toys_pass_check_benchmark(name: str) -> None:
    report = check_benchmark(resolve_benchmark(BenchmarkRef(name=name)))
    assert report.ok, report


def test_an_image_policy_receives_writable_uint8_arrays_of_the_image_shape(tmp_path: Path) -> None:
    ref = BenchmarkRef(
        name="toy/image", config={"height": 72, "width": 96, "max_episode_steps": 5, "terminate_on_hit": False}
    )
    result = evaluate(_program(tmp_path, "image", IMAGE_POLICY), ref, config=CONFIG)
    assert [e.status for e in result.episodes] == ["ok", "ok"], result.episodes
    assert result.score == 5.0  # every column named right: the Policy saw the image the Environment drew


@pytest.fixture(scope="module")
def mixed_executor() -> Iterator[LocalExecutor]:
    with LocalExecutor(BenchmarkRef(name="toy/mixed")) as executor:
        yield executor


def test_dict_text_and_multi_space_observations_and_actions_cross_the_policy_channel(
    tmp_path: Path, mixed_executor: LocalExecutor
) -> None:
    result = evaluate(_program(tmp_path, "mixed", MIXED_POLICY), "toy/mixed", config=CONFIG, executor=mixed_executor)
    assert [e.status for e in result.episodes] == ["ok", "ok"], result.episodes
    assert result.score == 1.0  # every part right at the first step: the mission parsed, the actions understood


def test_invalid_actions_of_every_kind_fail_as_invalid_action_with_the_expected_form(
    tmp_path: Path, mixed_executor: LocalExecutor
) -> None:
    config = CONFIG.model_copy(update={"episodes": 1})
    for case, (action, message) in BAD_MIXED_ACTIONS.items():
        source = f"GOOD = {GOOD}\n\n\ndef make_policy(context):\n    return Policy()\n\n\n"
        source += f"class Policy:\n    def act(self, observation):\n        return {action}\n"
        program = _program(tmp_path, case.replace(" ", "-").replace(",", ""), source)
        result = evaluate(program, "toy/mixed", config=config, executor=mixed_executor)
        (episode,) = result.episodes
        assert episode.status == "invalid_action", (case, episode)
        assert episode.failure is not None
        assert message in episode.failure, (case, episode.failure)
