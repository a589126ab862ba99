"""A small synthetic Benchmark with real observations for trajectory and export tests: a 64x64x3 uint8 image, a
direction and a language mission in one Dict (``make_image_benchmark``, import string
``evoledger.tests.support.image_benchmark:make_image_benchmark``), or the image alone (``make_pixels_benchmark``).

Each Episode paints a seed-derived pattern that shifts with the action; the mission names a colour. Reward 1.0 when
the action matches the mission's colour index. Episodes last ``max_episode_steps`` steps (truncated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import PROGRAMS_DIR
from evoledger.kernel.authoring import (
    BenchmarkPrograms,
    BenchmarkSpec,
    EpisodeRecord,
    EpisodeSpec,
    Feedback,
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

__all__ = ["IMAGE_SHAPE", "make_image_benchmark", "make_pixels_benchmark"]

IMAGE_SHAPE: Final = (64, 64, 3)
_COLOURS: Final = ("red", "green", "blue")
_SCORING: Final = ScoreRule(failure_return=0.0)


class _Environment:
    def __init__(self, episode: EpisodeSpec, *, pixels_only: bool, steps: int) -> None:
        rng = np.random.default_rng(derive_seed(episode.seed, "image-target"))
        self._base = rng.integers(0, 256, IMAGE_SHAPE, dtype=np.uint8)
        self._target = int(rng.integers(0, len(_COLOURS)))
        self._pixels_only = pixels_only
        self._limit = steps
        self._steps = 0
        self._image = self._base.copy()

    def _observation(self) -> Any:
        if self._pixels_only:
            return self._image  # the same array changed in place, as many Environments do
        return {
            "image": self._image,
            "direction": self._steps % 4,
            "mission": f"pick the {_COLOURS[self._target]} one",
        }

    def reset(self) -> Any:
        return self._observation()

    def step(self, action: Any) -> Step:
        self._steps += 1
        self._image[:] = np.roll(self._base, self._steps * (int(action) + 1), axis=1)
        reward = 1.0 if int(action) == self._target else 0.0
        return Step(self._observation(), reward, False, self._steps >= self._limit, {"target": self._target})

    def close(self) -> None:
        pass


class ImageBenchmark:
    def __init__(self, *, pixels_only: bool, max_episode_steps: int) -> None:
        image = spaces.Box(0, 255, IMAGE_SHAPE, dtype=np.uint8)
        self._observation_space: spaces.Space[Any] = (
            image
            if pixels_only
            else spaces.Dict(
                {
                    "image": image,
                    "direction": spaces.Discrete(4),
                    "mission": spaces.Text(max_length=40, charset="abcdefghijklmnopqrstuvwxyz "),
                }
            )
        )
        self._action_space = spaces.Discrete(len(_COLOURS))
        self._pixels_only = pixels_only
        parameters = {"pixels_only": pixels_only, "max_episode_steps": max_episode_steps}
        self._spec = BenchmarkSpec(
            id="test-pixels" if pixels_only else "test-image",
            description="Pick the colour the mission names; observations are images (a test Benchmark).",
            observation_space=describe_space(self._observation_space),
            action_space=describe_space(self._action_space),
            metadata={"source": "tests.support.image_benchmark", "score_rule": "mean return"},
            environment_parameters=parameters,
            max_episode_steps=max_episode_steps,
            primary_metric="mean_return",
            parameters_digest=parameters_digest(parameters),
            scoring=_SCORING,
        )

    @property
    def spec(self) -> BenchmarkSpec:
        return self._spec

    @property
    def programs(self) -> BenchmarkPrograms:
        return BenchmarkPrograms(baseline=PROGRAMS_DIR / "toy-random")

    @property
    def observation_space(self) -> spaces.Space[Any]:
        return self._observation_space

    @property
    def action_space(self) -> spaces.Space[Any]:
        return self._action_space

    def episodes(self, split: Split, *, seed: int, count: int) -> list[EpisodeSpec]:
        check_episode_request(split, seed=seed, count=count)
        return [
            EpisodeSpec(split=split, index=i, seed=derive_seed(seed, self._spec.id, split, i)) for i in range(count)
        ]

    def make_environment(self, episode: EpisodeSpec) -> _Environment:
        return _Environment(episode, pixels_only=self._pixels_only, steps=self._spec.max_episode_steps)

    def feedback(self, records: Sequence[EpisodeRecord]) -> Feedback:
        """Mean return, and the mean brightness of the last image of each Episode (read from its trajectory)."""
        brightness = []
        for record in records:
            if record.trajectory is not None and len(record.trajectory.observations):
                last = record.trajectory.observations[-1]
                brightness.append(float(np.asarray(last if self._pixels_only else last["image"]).mean()))
        score = score_episodes(_SCORING, ((r.status, r.episode_return) for r in records))
        return Feedback(score=score, content={"mean_return": score, "brightness": brightness})


def make_image_benchmark(max_episode_steps: int = 6) -> ImageBenchmark:
    """Dict observations: a 64x64x3 image, a direction and a language mission."""
    return ImageBenchmark(pixels_only=False, max_episode_steps=max_episode_steps)


def make_pixels_benchmark(max_episode_steps: int = 6) -> ImageBenchmark:
    """A 64x64x3 image alone."""
    return ImageBenchmark(pixels_only=True, max_episode_steps=max_episode_steps)
