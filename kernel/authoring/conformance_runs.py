"""Conformance of a Benchmark's Environments, found by running them with random actions.

:func:`run_random_episode` plays one Episode with actions sampled from the action space and checks every
observation, reward, flag and metric, that the Episode ends by ``max_episode_steps`` and that ``close()`` is safe
twice. :func:`check_replay` replays the same actions on a fresh Environment and compares. :func:`check_invalid_actions`
feeds actions outside the action space and expects :class:`InvalidAction`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from evoledger.kernel.authoring.conformance_probes import invalid_actions, jsonable
from evoledger.kernel.authoring.conformance_report import Findings, describe_error
from evoledger.kernel.authoring.episodes import Environment, EpisodeSpec, InvalidAction, Step

__all__ = ["Rollout", "check_invalid_actions", "check_replay", "run_random_episode"]


@dataclass(slots=True)
class Rollout:
    """One Episode played by the checker; observations and actions in JSON form except ``sent_actions``."""

    episode: EpisodeSpec
    observations: list[Any] = field(default_factory=list)
    sent_actions: list[Any] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    metrics: list[dict[str, float]] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False


def _contains(space: Any, value: Any) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return bool(space.contains(value))
        except Exception:
            return False


def _key(episode: EpisodeSpec) -> str:
    return f"{episode.split}/{episode.index}"


def _open(benchmark: Any, findings: Findings, episode: EpisodeSpec) -> Any:
    env = findings.guarded(
        "environment.failed", f"make_environment({_key(episode)})", lambda: benchmark.make_environment(episode)
    )
    if env is not None and not isinstance(env, Environment):
        findings.add("environment.protocol", f"make_environment returned {type(env).__name__} without reset/step/close")
        return None
    return env


def _close_twice(env: Any, findings: Findings, episode: EpisodeSpec) -> None:
    for attempt in ("first", "second"):
        try:
            env.close()
        except Exception as exc:
            findings.add("close.failed", f"{attempt} close() of {_key(episode)} raised {describe_error(exc)}")
            return


def _check_observation(benchmark: Any, findings: Findings, observation: Any, where: str) -> None:
    if not _contains(benchmark.observation_space, observation):
        findings.add(
            "observation.outside_space",
            f"observation {jsonable(observation)!r:.120} at {where} is not in {benchmark.observation_space}",
        )


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool) and math.isfinite(value)


def _check_step(benchmark: Any, findings: Findings, step: Any, where: str) -> bool:
    if not isinstance(step, Step):
        findings.add("environment.protocol", f"step() at {where} returned {type(step).__name__}, not a Step")
        return False
    if not _finite_number(step.reward):
        findings.add("step.invalid", f"reward {step.reward!r} at {where} is not a finite number")
    if not isinstance(step.terminated, bool | np.bool_) or not isinstance(step.truncated, bool | np.bool_):
        findings.add("step.invalid", f"terminated/truncated at {where} are not bools: {step.terminated!r}")
    metrics = step.metrics
    if not isinstance(metrics, Mapping) or not all(
        isinstance(k, str) and _finite_number(v) for k, v in metrics.items()
    ):
        findings.add("step.invalid", f"metrics {metrics!r:.120} at {where} must map str to finite numbers")
    _check_observation(benchmark, findings, step.observation, where)
    return True


def run_random_episode(
    benchmark: Any, findings: Findings, episode: EpisodeSpec, sampler: Any, *, max_steps: int, as_json: bool
) -> Rollout:
    """Play ``episode`` with actions from ``sampler`` (sent as JSON values when ``as_json``) and check each step."""
    run = Rollout(episode)
    env = _open(benchmark, findings, episode)
    if env is None:
        return run
    key = _key(episode)
    findings.episodes_checked += 1
    try:
        try:
            observation = env.reset()
        except Exception as exc:
            findings.add("environment.failed", f"reset() of {key} raised {describe_error(exc)}")
            return run
        _check_observation(benchmark, findings, observation, f"{key} reset")
        run.observations.append(jsonable(observation))
        for t in range(max_steps):
            raw = sampler.sample()
            action = jsonable(raw) if as_json else raw
            try:
                step = env.step(action)
            except InvalidAction as exc:
                findings.add("action.valid_rejected", f"sampled action {jsonable(raw)!r:.80} at {key} step {t}: {exc}")
                return run
            except Exception as exc:
                findings.add("environment.failed", f"step() at {key} step {t} raised {describe_error(exc)}")
                return run
            findings.steps_checked += 1
            if not _check_step(benchmark, findings, step, f"{key} step {t}"):
                return run
            run.sent_actions.append(action)
            run.rewards.append(float(step.reward) if _finite_number(step.reward) else 0.0)
            run.observations.append(jsonable(step.observation))
            metrics = step.metrics if isinstance(step.metrics, Mapping) else {}
            run.metrics.append({str(k): float(v) for k, v in metrics.items() if _finite_number(v)})
            if step.terminated or step.truncated:
                run.terminated, run.truncated = bool(step.terminated), bool(step.truncated)
                return run
        findings.add(
            "episode.too_long",
            f"{key} did not end within max_episode_steps={max_steps} random steps; truncate at max_episode_steps",
        )
        return run
    finally:
        _close_twice(env, findings, episode)


def check_replay(benchmark: Any, findings: Findings, run: Rollout) -> None:
    """Replay ``run``'s actions on a fresh Environment: observations, rewards and flags must be identical."""
    env = _open(benchmark, findings, run.episode)
    if env is None:
        return
    key = _key(run.episode)
    observations: list[Any] = []
    rewards: list[float] = []
    flags = (False, False)
    try:
        observations.append(jsonable(env.reset()))
        for action in run.sent_actions:
            step = env.step(action)
            observations.append(jsonable(step.observation))
            rewards.append(float(step.reward))
            flags = (bool(step.terminated), bool(step.truncated))
    except Exception as exc:
        findings.add("replay.nondeterministic", f"replaying {key} raised {describe_error(exc)}")
        return
    finally:
        _close_twice(env, findings, run.episode)
    if observations != run.observations or rewards != run.rewards or flags != (run.terminated, run.truncated):
        diverged = next(
            (i for i, (a, b) in enumerate(zip(observations, run.observations, strict=False)) if a != b), None
        )
        findings.add(
            "replay.nondeterministic",
            f"replaying {key} with the same actions on a fresh Environment gave a different Episode (first "
            f"differing observation: {diverged}); draw all randomness from the Episode seed in reset()",
        )


def check_invalid_actions(benchmark: Any, findings: Findings, episode: EpisodeSpec) -> None:
    """Each constructible action outside the action space must raise InvalidAction on a fresh Environment."""
    for description, action in invalid_actions(benchmark.action_space):
        if _contains(benchmark.action_space, action):
            continue
        env = _open(benchmark, findings, episode)
        if env is None:
            return
        try:
            env.reset()
            env.step(action)
        except InvalidAction:
            pass
        except Exception as exc:
            findings.add(
                "action.invalid_wrong_error",
                f"{description} raised {describe_error(exc)}; raise InvalidAction for actions outside the space",
            )
        else:
            findings.add("action.invalid_accepted", f"{description} was accepted; raise InvalidAction, never repair")
        finally:
            _close_twice(env, findings, episode)
