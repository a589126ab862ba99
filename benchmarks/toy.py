"""Small, fast, deterministic Benchmarks for tests and examples (no gymnasium environment behind them).

* ``toy-counter``: guess a hidden target in ``Discrete(n_actions)``. The observation (a float32 Box of
  shape (3,)) is ``[hint, last_guess / (n_actions - 1), steps_used / max_episode_steps]`` where ``hint``
  is +1 if the target is higher than the last guess, -1 if lower, 0 before the first guess and on a hit.
  Reward 1.0 per hit, 0.0 otherwise; a hit terminates the Episode when ``terminate_on_hit``.
* ``toy-continuous``: reach a hidden point in ``Box(-1, 1, (2,), float32)``. The observation (float32,
  shape (4,)) is the last action followed by the sign of the offset to the target per axis. Reward is
  minus the distance from the action to the target; within 0.05 terminates (when ``terminate_on_hit``).
* ``toy-structured``: walk on a grid to a hidden goal with ``Discrete(4)`` moves (0 up, 1 down, 2 left,
  3 right). The observation is a ``Dict`` of a float32 ``position`` array, a ``steps`` int and a
  ``flags`` tuple ``(goal_is_right, goal_is_up)``, exercising structured observations. Reward -0.1 per
  step, +1 on reaching the goal (which terminates).

Targets derive from the Episode's Host seed only. Every Environment rejects actions outside the action
space (and non-finite ones) with :class:`InvalidAction`; nothing is clipped. Test hooks in the config:
``step_sleep_seconds`` (Environment time per step), ``fail_on_step`` (``step`` raises ``RuntimeError``
on that 1-based step: an infra fault), ``fail_on_reset``, and ``check_actions=False`` (a deliberately
sloppy Environment that crashes on bad actions instead of raising InvalidAction). An Episode's
``scenario`` may override ``fail_on_step`` and ``fail_on_reset`` for that Episode only.

Score: the mean Episode return, counting Episodes the Policy failed as 0; infra faults are left out.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.kernel.authoring import (
    Artifact,
    BenchmarkPrograms,
    BenchmarkSpec,
    CatalogEntry,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
    InvalidAction,
    ScoreRule,
    Split,
    Step,
    check_episode_request,
    derive_seed,
    describe_space,
    parameters_digest,
    score_episodes,
)
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "ToyBenchmark",
    "ToyConfig",
    "ToyCounterConfig",
    "make_toy_continuous",
    "make_toy_counter",
    "make_toy_structured",
]

_GOAL_DISTANCE: Final = 0.05
_SCORING: Final = ScoreRule(failure_return=0.0)
"""Mean return; failed Episodes count 0, infra faults are left out."""
_GRID: Final = 5


class ToyConfig(BaseModel):
    """Configuration shared by the toy Benchmarks (all of it public)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_episode_steps: int = Field(default=10, ge=1, le=100_000)
    terminate_on_hit: bool = True
    step_sleep_seconds: float = Field(default=0.0, ge=0.0, le=10.0)
    fail_on_step: int | None = Field(default=None, ge=1)
    fail_on_reset: bool = False
    check_actions: bool = True
    infra_fault_indices: tuple[int, ...] = ()
    """Train-pool indices whose Environment fails on reset (an infra fault), set through the scenario."""


class ToyCounterConfig(ToyConfig):
    """``toy-counter`` also takes the number of actions."""

    n_actions: int = Field(default=8, ge=2, le=1_000_000)


def _check_finite(action: Any) -> None:
    try:
        values = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError):
        return  # not numeric: the space check rejects it
    if not np.all(np.isfinite(values)):
        raise InvalidAction(f"action {action!r:.80} contains NaN or infinity; actions must be finite")


def _as_box_array(space: Any, action: Any) -> Any:
    """A list for a Box, cast as Gymnasium's ``contains`` would cast it, without its warning."""
    if not isinstance(space, spaces.Box) or not isinstance(action, list | tuple):
        return action
    try:
        return np.asarray(action, dtype=space.dtype)
    except (TypeError, ValueError):
        return action


class _ToyEnvironment:
    """The Episode mechanics shared by the toy Environments; subclasses implement ``_first``/``_advance``."""

    def __init__(self, benchmark: ToyBenchmark, episode: EpisodeSpec) -> None:
        self._config = benchmark.config
        scenario = dict(episode.scenario or {})
        self._fail_on_step = scenario.get("fail_on_step", self._config.fail_on_step)
        self._fail_on_reset = bool(scenario.get("fail_on_reset", self._config.fail_on_reset))
        self._action_space: Any = benchmark.action_space
        self._rng = np.random.default_rng(derive_seed(episode.seed, "toy-target"))
        self._steps = 0
        self._done = False
        self._started = False

    def reset(self) -> Any:
        if self._fail_on_reset:
            raise RuntimeError("toy environment configured to fail on reset (fail_on_reset=True)")
        self._started = True
        return self._first()

    def step(self, action: Any) -> Step:
        if not self._started or self._done:
            raise RuntimeError("step() called before reset() or after the Episode ended")
        if self._config.check_actions:
            _check_finite(action)
            if not self._action_space.contains(_as_box_array(self._action_space, action)):
                raise InvalidAction(f"action {action!r:.80} is not in the action space {self._action_space}")
        self._steps += 1
        if self._fail_on_step is not None and self._steps == self._fail_on_step:
            raise RuntimeError(f"toy environment configured to fail on step {self._steps}")
        if self._config.step_sleep_seconds:
            time.sleep(self._config.step_sleep_seconds)
        observation, reward, hit, metrics = self._advance(action)
        terminated = hit and self._config.terminate_on_hit
        truncated = not terminated and self._steps >= self._config.max_episode_steps
        self._done = terminated or truncated
        return Step(observation, reward, terminated, truncated, metrics)

    def close(self) -> None:
        self._done = True

    def _first(self) -> Any:
        raise NotImplementedError

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        raise NotImplementedError


class _CounterEnvironment(_ToyEnvironment):
    def _first(self) -> Any:
        self._n = int(self._action_space.n)
        self._target = int(self._rng.integers(0, self._n))
        self._hits = 0
        return np.array([0.0, 0.0, 0.0], dtype=np.float32)

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        guess = int(action)
        hit = guess == self._target
        self._hits += hit
        hint = 0.0 if hit else (1.0 if self._target > guess else -1.0)
        used = self._steps / self._config.max_episode_steps
        observation = np.array([hint, guess / (self._n - 1), used], dtype=np.float32)
        return observation, 1.0 if hit else 0.0, hit, {"distance": float(abs(guess - self._target)), "hits": self._hits}


class _ContinuousEnvironment(_ToyEnvironment):
    def _first(self) -> Any:
        self._target = self._rng.uniform(-0.9, 0.9, size=2)
        return np.zeros(4, dtype=np.float32)

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        point = np.asarray(action, dtype=np.float64)
        distance = float(np.linalg.norm(point - self._target))
        signs = np.sign(self._target - point)
        observation = np.concatenate([point, signs]).astype(np.float32)
        return observation, -distance, distance < _GOAL_DISTANCE, {"distance": distance}


class _StructuredEnvironment(_ToyEnvironment):
    _MOVES: Final = ((0, 1), (0, -1), (-1, 0), (1, 0))

    def _first(self) -> Any:
        self._goal = (int(self._rng.integers(0, _GRID)), int(self._rng.integers(0, _GRID)))
        self._position = (_GRID // 2, _GRID // 2)
        if self._goal == self._position:
            self._goal = (0, 0)
        return self._observation()

    def _observation(self) -> dict[str, Any]:
        x, y = self._position
        return {
            "position": np.array([x, y], dtype=np.float32),
            "steps": self._steps,
            "flags": (int(self._goal[0] > x), int(self._goal[1] > y)),
        }

    def _advance(self, action: Any) -> tuple[Any, float, bool, dict[str, float]]:
        dx, dy = self._MOVES[int(action)]
        x = min(max(self._position[0] + dx, 0), _GRID - 1)
        y = min(max(self._position[1] + dy, 0), _GRID - 1)
        self._position = (x, y)
        hit = self._position == self._goal
        distance = abs(self._goal[0] - x) + abs(self._goal[1] - y)
        return self._observation(), (1.0 if hit else -0.1), hit, {"distance": float(distance)}


class ToyBenchmark:
    """One of the toy Benchmarks (see the module docstring); build it with a factory from ``BENCHMARKS``."""

    def __init__(
        self,
        benchmark_id: str,
        description: str,
        config: ToyConfig,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        environment: type[_ToyEnvironment],
    ) -> None:
        self.config = config
        self._observation_space = observation_space
        self._action_space = action_space
        self._environment = environment
        parameters = config.model_dump(mode="json")
        self._spec = BenchmarkSpec(
            id=benchmark_id,
            description=description,
            observation_space=describe_space(observation_space),
            action_space=describe_space(action_space),
            metadata={"source": "evoledger.benchmarks.toy", "score_rule": "mean return; failed Episodes count 0"},
            environment_parameters=parameters,
            max_episode_steps=config.max_episode_steps,
            primary_metric="mean_return",
            parameters_digest=parameters_digest(parameters),
            scoring=_SCORING,
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms:
        """A random baseline for every toy Benchmark; the built-in hill-climb Agent brings its own tunable family."""
        return BenchmarkPrograms(baseline=PROGRAMS_DIR / "toy-random")

    @property
    def observation_space(self) -> spaces.Space[Any]:
        return self._observation_space

    @property
    def action_space(self) -> spaces.Space[Any]:
        return self._action_space

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        """``count`` Episodes of ``split``, their seeds derived from ``seed`` (deterministic)."""
        check_episode_request(split, seed=seed, count=count)
        faulty = set(self.config.infra_fault_indices) if split == "train" else set()
        return [
            EpisodeSpec(
                split=split,
                index=i,
                seed=derive_seed(seed, self._spec.id, split, i),
                scenario={"fail_on_reset": True} if i in faulty else None,
            )
            for i in range(count)
        ]

    def make_environment(self, episode: EpisodeSpec) -> _ToyEnvironment:
        """A fresh Environment for ``episode``."""
        return self._environment(self, episode)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Mean return (failed Episodes count 0, infra faults left out), status counts, per-Episode lines."""
        counted = [r for r in records if r.status != "infra_fault"]
        score = score_episodes(_SCORING, ((r.status, r.episode_return) for r in records))
        statuses = Counter(r.status for r in records)
        lines = [
            json.dumps({"index": r.index, "status": r.status, "return": r.episode_return, "steps": r.steps}) + "\n"
            for r in records
        ]
        return Feedback(
            score=score,
            content={
                "benchmark": self._spec.id,
                "episodes": len(records),
                "scored_episodes": len(counted),
                "mean_return": score,
                "statuses": dict(sorted(statuses.items())),
            },
            artifacts=(Artifact("episodes.jsonl", "application/x-ndjson", "".join(lines).encode(), "bulk"),),
        )


def make_toy_counter(**config: Any) -> ToyBenchmark:
    """``toy-counter``: guess a hidden target (Discrete actions, float32 Box observations)."""
    parsed = ToyCounterConfig(**config)
    return ToyBenchmark(
        "toy-counter",
        "Guess a hidden integer target; each observation hints whether it is higher or lower.",
        parsed,
        spaces.Box(-1.0, 1.0, (3,), dtype=np.float32),
        spaces.Discrete(parsed.n_actions),
        _CounterEnvironment,
    )


def make_toy_continuous(**config: Any) -> ToyBenchmark:
    """``toy-continuous``: reach a hidden point (Box actions)."""
    parsed = ToyConfig(**config)
    return ToyBenchmark(
        "toy-continuous",
        "Move to a hidden point in [-1, 1]^2; observations give the sign of the offset per axis.",
        parsed,
        spaces.Box(-1.0, 1.0, (4,), dtype=np.float32),
        spaces.Box(-1.0, 1.0, (2,), dtype=np.float32),
        _ContinuousEnvironment,
    )


def make_toy_structured(**config: Any) -> ToyBenchmark:
    """``toy-structured``: walk to a hidden goal (Dict observations with an array, an int and a tuple)."""
    parsed = ToyConfig(**config)
    observation_space = spaces.Dict(
        {
            "position": spaces.Box(0.0, float(_GRID - 1), (2,), dtype=np.float32),
            "steps": spaces.Discrete(parsed.max_episode_steps + 1),
            "flags": spaces.Tuple((spaces.Discrete(2), spaces.Discrete(2))),
        }
    )
    return ToyBenchmark(
        "toy-structured",
        f"Walk on a {_GRID}x{_GRID} grid to a hidden goal; flags say whether it is right of and above you.",
        parsed,
        observation_space,
        spaces.Discrete(4),
        _StructuredEnvironment,
    )


BENCHMARKS = {
    "toy/counter": make_toy_counter,
    "toy/continuous": make_toy_continuous,
    "toy/structured": make_toy_structured,
}

CATALOG = (
    CatalogEntry("toy/counter", "toy", "guess a hidden integer (Discrete actions); for tests", None, ("toy-counter",)),
    CatalogEntry("toy/continuous", "toy", "reach a hidden point (Box actions); for tests", None, ("toy-continuous",)),
    CatalogEntry("toy/structured", "toy", "walk a grid (Dict observations); for tests", None, ("toy-structured",)),
)
"""The catalogue rows of :data:`BENCHMARKS` (no extra; the old names are aliases)."""
