"""check_benchmark: every registered Benchmark conforms, and deliberately broken Benchmarks are caught."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.authoring import (
    BenchmarkSpec,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    InvalidAction,
    ScoreRule,
    Split,
    Step,
    conformance,
    derive_seed,
    describe_space,
    parameters_digest,
)
from evoledger.kernel.authoring.conformance import (
    CONFORMANCE_CODES,
    ConformanceError,
    ConformanceReport,
    check_benchmark,
)
from evoledger.kernel.authoring.conformance_episodes import invalid_actions, jsonable
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import InputError
from evoledger.tests.support.catalog import benchmark_params
from gymnasium import spaces

# A tiny Benchmark: a 1-D walk. Each flag in ``broken`` breaks one rule of the Benchmark contract.


class Walk:
    def __init__(self, *broken: str, max_steps: int = 12, scenarios: bool = False) -> None:
        self.broken = frozenset(broken)
        self.max_steps = max_steps
        self.scenarios = scenarios
        self.seen_seeds: list[int] = []
        self.calls = itertools.count()
        self._observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
        self._action_space = spaces.Discrete(2)
        parameters = {"max_steps": max_steps}
        declared_actions = spaces.Discrete(3) if "space" in self.broken else self._action_space
        self._spec = BenchmarkSpec(
            id="walk",
            description="a tiny walk",
            observation_space=describe_space(self._observation_space),
            action_space=describe_space(declared_actions),
            metadata={},
            environment_parameters=parameters,
            max_episode_steps=max_steps,
            primary_metric="mean_return",
            parameters_digest=parameters_digest({"max_steps": 0} if "digest" in self.broken else parameters),
            scoring=ScoreRule(failure_return=0.0) if "score-rule" in self.broken else None,
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def observation_space(self) -> Any:
        return self._observation_space

    @property
    def action_space(self) -> Any:
        return self._action_space

    def _seed(self, split: Split, seed: int, index: int, count: int) -> int:
        if "nondeterministic-episodes" in self.broken:
            return derive_seed(next(self.calls), split, index)
        if "split-collision" in self.broken:
            return derive_seed(seed, "episode", index) if split == "train" else derive_seed(0, "x", index)
        if "duplicate" in self.broken:
            return derive_seed(seed, split)
        if "prefix" in self.broken:
            return derive_seed(seed, split, index, count)
        if "seed-ignored" in self.broken:
            return derive_seed(0, split, index)
        return derive_seed(seed, "episode", split, index)

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        if "episodes-raise" in self.broken:
            raise RuntimeError("cannot plan")
        return [
            EpisodeSpec(
                split,
                i,
                self._seed(split, seed, i, count),
                {"level": f"secret-level-{split}-{i}"} if self.scenarios else None,
            )
            for i in range(count)
        ]

    def make_environment(self, episode: EpisodeSpec) -> WalkEnv:
        if "make-raises" in self.broken:
            raise OSError("no environment today")
        self.seen_seeds.append(episode.seed)
        return WalkEnv(self, episode)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        if "feedback-raises" in self.broken:
            raise ZeroDivisionError("feedback bug")
        content: dict[str, Any] = {"returns": [r.episode_return for r in records if r.status == "ok"]}
        if "leak-seed" in self.broken:
            content["debug"] = f"last seed was {self.seen_seeds[-1]}"
        if "leak-scenario" in self.broken:
            content["levels"] = [f"secret-level-train-{r.index}" for r in records]
        if "feedback-nondeterministic" in self.broken:
            content["call"] = next(self.calls)
        return Feedback(score=None, content=content)


class WalkEnv:
    def __init__(self, benchmark: Walk, episode: EpisodeSpec) -> None:
        self.benchmark = benchmark
        self.episode = episode
        self.closed = 0

    def _observation(self) -> Any:
        position = 100.0 if "obs-outside" in self.benchmark.broken else float(self.position)
        return np.array([position, self.rng.uniform(-1, 1)], dtype=np.float32)

    def reset(self) -> Any:
        seed = None if "nondeterministic-env" in self.benchmark.broken else self.episode.seed
        self.rng = np.random.default_rng(seed)
        self.position, self.t = 0, 0
        return self._observation()

    def step(self, action: Any) -> Step:
        broken = self.benchmark.broken
        if isinstance(action, bool) or not isinstance(action, int | np.integer) or action not in (0, 1):
            if "accepts-invalid" in broken:
                action = 1
            elif "wrong-error" in broken:
                raise ValueError(f"bad action {action!r}")
            else:
                raise InvalidAction(f"action {action!r} is not 0 or 1")
        if "rejects-valid" in broken and action == 1:
            raise InvalidAction("I do not like 1")
        self.position += 1 if action == 1 else -1
        self.t += 1
        reward = float("nan") if "nan-reward" in broken else 1.0
        terminated = abs(self.position) >= 4
        truncated = self.t >= self.benchmark.max_steps and "never-ends" not in broken
        return Step(self._observation(), reward, terminated, truncated)

    def close(self) -> None:
        self.closed += 1
        if self.closed > 1 and "close-twice-raises" in self.benchmark.broken:
            raise RuntimeError("already closed")


SHORT: dict[str, dict[str, Any]] = {
    "vizdoom/": {"max_episode_steps": 50},
    "ale/": {"max_episode_steps": 100},
    "retro/": {"max_episode_steps": 50},
}
"""Families checked on shortened Episodes: the checker keeps every observation as JSON values, about 8 MB a step for
a 240x320x3 ViZDoom screen (a 4,200-step deathmatch Episode ran a test process out of 23 GB of memory)."""


@pytest.mark.parametrize("name", benchmark_params(in_host=True))  # a family's Benchmarks under pytest -m catalog
def test_every_registered_benchmark_conforms(name: str) -> None:
    config = next((c for prefix, c in SHORT.items() if name.startswith(prefix)), {})
    report = check_benchmark(default_registry().make(name, config), episodes=3, seed=0)
    assert report.ok, report.summary()
    assert report.benchmark_id
    assert report.episodes_checked == 3
    assert report.steps_checked >= 3


def test_a_correct_tiny_benchmark_with_scenarios_conforms() -> None:
    report = check_benchmark(Walk(scenarios=True), episodes=4, seed=9)
    assert report.ok, report.summary()
    assert report.benchmark_id == "walk"
    assert report.episodes_checked == 4
    report.raise_for_problems()  # no problems: no error


@pytest.mark.parametrize(
    ("broken", "code"),
    [
        ("nondeterministic-episodes", "episodes.nondeterministic"),
        ("split-collision", "episodes.split_collision"),
        ("duplicate", "episodes.duplicate"),
        ("prefix", "episodes.prefix_unstable"),
        ("seed-ignored", "episodes.seed_ignored"),
        ("episodes-raise", "episodes.failed"),
        ("make-raises", "environment.failed"),
        ("digest", "spec.digest_mismatch"),
        ("space", "spec.space_mismatch"),
        ("obs-outside", "observation.outside_space"),
        ("never-ends", "episode.too_long"),
        ("nan-reward", "step.invalid"),
        ("nondeterministic-env", "replay.nondeterministic"),
        ("accepts-invalid", "action.invalid_accepted"),
        ("wrong-error", "action.invalid_wrong_error"),
        ("rejects-valid", "action.valid_rejected"),
        ("close-twice-raises", "close.failed"),
        ("leak-seed", "feedback.leaks_seed"),
        ("feedback-raises", "feedback.failed"),
        ("feedback-nondeterministic", "feedback.nondeterministic"),
        ("score-rule", "feedback.score_rule"),  # declares a rule its feedback() does not follow
    ],
)
def test_a_broken_benchmark_is_caught_with_a_stable_code(broken: str, code: str) -> None:
    report = check_benchmark(Walk(broken), episodes=3, seed=1)
    assert not report.ok
    assert code in report.codes, report.summary()
    assert report.codes <= CONFORMANCE_CODES
    with pytest.raises(ConformanceError, match=code.replace(".", r"\.")) as caught:
        report.raise_for_problems()
    assert isinstance(caught.value, InputError)


def test_a_leaked_scenario_is_caught() -> None:
    report = check_benchmark(Walk("leak-scenario", scenarios=True), episodes=2)
    assert report.codes == {"feedback.leaks_scenario"}, report.summary()


def test_repeated_problems_are_capped_and_the_summary_lists_them() -> None:
    report = check_benchmark(Walk("obs-outside"), episodes=5)
    outside = [p for p in report.problems if p.code == "observation.outside_space"]
    assert len(outside) == 3
    assert report.summary().count("[observation.outside_space]") == 3
    assert "walk" in report.summary()


def test_an_object_that_is_no_benchmark_is_reported_not_crashed_on() -> None:
    report = check_benchmark(object())
    assert report.codes == {"protocol.missing"}
    assert "episodes" in report.problems[0].message


def test_the_check_is_reproducible_and_takes_an_injected_generator() -> None:
    first = check_benchmark(Walk("obs-outside"), seed=3)
    again = check_benchmark(Walk("obs-outside"), seed=3)
    assert first == again
    injected = check_benchmark(Walk(), rng=np.random.default_rng(42))
    assert isinstance(injected, ConformanceReport)
    assert injected.ok


@pytest.mark.parametrize(("kwargs", "fragment"), [({"episodes": 0}, "episodes"), ({"seed": -1}, "seed")])
def test_bad_checker_arguments_are_input_errors(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        check_benchmark(Walk(), **kwargs)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Discrete(3),
        spaces.Discrete(3, start=-1),
        spaces.Box(-1.0, 1.0, (2,), np.float32),
        spaces.Box(-np.inf, np.inf, (3,), np.float64),
        spaces.Box(0, 5, (2,), np.int64),
        spaces.MultiDiscrete([2, 3]),
        spaces.MultiBinary(3),
        spaces.Tuple((spaces.Discrete(2), spaces.Box(-1.0, 1.0, (1,)))),
        spaces.Dict({"a": spaces.Discrete(2), "b": spaces.Discrete(4)}),
    ],
)
def test_constructed_invalid_actions_are_outside_their_space(space: Any) -> None:
    candidates = invalid_actions(space)
    assert candidates
    for description, action in candidates:
        assert description
        assert not space.contains(action)


def test_jsonable_turns_numpy_and_tuples_into_json_values() -> None:
    value = jsonable((np.int64(3), np.array([[0.5, 1.0]], dtype=np.float32), {"k": np.bool_(True)}))
    assert value == [3, [[0.5, 1.0]], {"k": True}]
    assert type(value[0]) is int
    assert invalid_actions(spaces.Text(5)) == []


def test_every_code_is_documented_in_the_module_docstring() -> None:
    assert conformance.__doc__ is not None
    for code in CONFORMANCE_CODES:
        assert f"``{code}``" in conformance.__doc__
