"""The frames of one re-executed Episode: its actions stepped again on a rendering copy of its Environment.

The Policy is never near a frame. The Episode is first re-executed for real (the Policy in its own process, as
``replay --execute`` does); then this module makes a second Environment for the same Episode spec with
``render_mode="rgb_array"`` in this (the Host's) process, steps it open-loop through the re-executed actions, and
renders the states asked for. Every reward, where the Episode ends and every observation must equal the
re-executed trajectory's, else :class:`RenderMismatchError`: frames of a different Episode would mislead.

A Benchmark renders when its ``make_environment`` accepts a ``render_mode`` keyword (every gymnasium-backed
one does) and the Environment's ``render()`` returns an RGB array; otherwise :class:`NoRenderer` says why and the
caller draws a trace instead.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
from evoledger.kernel.authoring import Benchmark, EpisodeSpec, NotAFrame, rgb_frame, same_observation
from evoledger.ledger.errors import EvoLedgerError
from evoledger.ledger.trajectories import Trajectory

__all__ = ["Frame", "NoRenderer", "RenderMismatchError", "render_frames", "sample_states"]


class RenderMismatchError(EvoLedgerError):
    """The re-executed Episode (or its rendering copy) differs from the record: no frames are written."""

    exit_code = 3


class NoRenderer(Exception):
    """This Benchmark cannot render here (no ``render_mode``, no renderer installed, a renderer that raises)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One rendered state: after ``step`` steps (0: the reset), reached by ``action`` with ``reward``."""

    step: int
    pixels: np.ndarray[Any, np.dtype[np.uint8]]
    action: Any
    reward: float | None
    episode_return: float


def sample_states(steps: int, frames: int) -> tuple[int, ...]:
    """At most ``frames`` states of an Episode of ``steps`` steps, evenly spread, always the reset and the last.

    >>> sample_states(3, 10)
    (0, 1, 2, 3)
    >>> sample_states(100, 5)
    (0, 25, 50, 75, 100)
    """
    if frames < 2:
        raise ValueError(f"frames={frames}: at least 2 (the reset and the last state)")
    if steps + 1 <= frames:
        return tuple(range(steps + 1))
    return tuple(sorted({round(i * steps / (frames - 1)) for i in range(frames)}))


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _render(env: Any) -> np.ndarray[Any, np.dtype[np.uint8]]:
    try:
        frame = env.render()
    except Exception as exc:  # no display, no GL, no pygame: no frames here
        raise NoRenderer(f"its render() failed ({_describe(exc)})") from None
    try:
        return rgb_frame(frame)
    except NotAFrame as exc:
        raise NoRenderer(f"its {exc}") from None


def _opener(benchmark: Benchmark) -> Callable[[EpisodeSpec], Any]:
    from evoledger.kernel.family_env.families import host_environment_problem  # the registry: only now

    problem = host_environment_problem(benchmark.spec.id)
    if problem is not None:  # its Environments exist only in its own venv's workers, never in the Host
        raise NoRenderer(problem)
    make = benchmark.make_environment
    try:
        parameters = inspect.signature(make).parameters.values()
    except (TypeError, ValueError):
        parameters = ()  # type: ignore[assignment]
    if not any(p.name == "render_mode" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        raise NoRenderer("its make_environment() takes no render_mode")
    return lambda spec: make(spec, render_mode="rgb_array")  # type: ignore[call-arg]


def _disagree(step: int, what: str) -> RenderMismatchError:
    return RenderMismatchError(
        f"the rendering copy of the Environment disagrees with the re-executed Episode at step {step} ({what}): the "
        "Environment is not deterministic from its seed, so its frames would mislead; nothing was written"
    )


def render_frames(
    benchmark: Benchmark,
    spec: EpisodeSpec,
    trajectory: Trajectory,
    *,
    ended_ok: bool,
    wanted: Collection[int],
    on_frame: Callable[[Frame], None],
) -> int:
    """Render the ``wanted`` states of ``trajectory`` (an Episode of ``spec``) on a fresh rendering Environment,
    handing each to ``on_frame`` as it is made (none is kept here); how many were rendered.

    ``ended_ok``: the Episode ended without a Policy failure, so its last step's ``terminated`` is compared too.
    Raises :class:`NoRenderer` when the Benchmark cannot render here and :class:`RenderMismatchError` when the
    rendering copy does not follow the trajectory.
    """
    opener = _opener(benchmark)
    observations = trajectory.observations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # renderers warn about displays they do not need
        try:
            env = opener(spec)
        except Exception as exc:  # gymnasium without this render mode, pygame missing, ...
            raise NoRenderer(f"its rendering Environment cannot be made ({_describe(exc)})") from None
        try:
            try:
                observation = env.reset()
            except Exception as exc:
                raise NoRenderer(f"its rendering Environment failed to reset ({_describe(exc)})") from None
            if observations and not same_observation(observation, observations[0]):
                raise _disagree(0, "the reset observation")
            frames = 0
            if 0 in wanted:
                on_frame(Frame(0, _render(env), None, None, 0.0))
                frames += 1
            total = 0.0
            for t, action in enumerate(trajectory.actions):
                try:
                    step = env.step(action)
                except Exception as exc:
                    raise _disagree(t + 1, f"stepping the recorded action failed: {_describe(exc)}") from None
                reward = float(step.reward)
                if reward != float(trajectory.rewards[t]):
                    raise _disagree(t + 1, f"reward {reward}, re-executed {trajectory.rewards[t]}")
                if (step.terminated or step.truncated) and t + 1 < trajectory.steps:
                    raise _disagree(t + 1, f"it ended there, the re-executed Episode ran {trajectory.steps} steps")
                if t + 1 == trajectory.steps and ended_ok and step.terminated != trajectory.terminated:
                    raise _disagree(t + 1, "terminated differs")
                if t + 1 < len(observations) and not same_observation(step.observation, observations[t + 1]):
                    raise _disagree(t + 1, "the observation")
                total += reward
                if t + 1 in wanted:
                    on_frame(Frame(t + 1, _render(env), action, reward, total))
                    frames += 1
            return frames
        finally:
            with contextlib.suppress(Exception):
                env.close()
