"""The conformance checks that play a Benchmark's Episodes: its Environments, its actions and its Feedback.

Probes: :func:`jsonable` turns what an Environment returns (numpy arrays and scalars, tuples) into the JSON values
a trajectory holds; :func:`invalid_actions` constructs, where one can be constructed, actions that lie outside a
gymnasium space (one past a Discrete range, beyond a Box bound, NaN, the wrong shape, ...).

Environments: :func:`run_random_episode` plays one Episode with actions sampled from the action space (or, where the
Environment has a ``legal_action(rng)`` method, from that: a random action legal in the current state, for a
Benchmark whose rules reject most actions the space holds, a contest's) and checks every observation, reward, flag
and metric, that the Episode ends by ``max_episode_steps`` and that ``close()`` is safe twice. :func:`check_replay`
replays the same actions on a fresh Environment and compares.
:func:`check_invalid_actions` feeds actions outside the action space and expects :class:`InvalidAction`.

Feedback: :func:`check_feedback` builds synthetic :class:`EpisodeRecord` s from the played Episodes (all ok; a mix
of ok, Policy failures and infra faults; infra faults only), calls ``feedback()`` on each, and searches the
canonical JSON of the content and every Artifact's bytes for the decimal digits of each Host seed handed out and
for each scenario (its canonical JSON and its distinctive leaves).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from evoledger.kernel.authoring.conformance_report import Findings, describe_error
from evoledger.kernel.authoring.episodes import Environment, EpisodeSpec, InvalidAction, Step
from evoledger.kernel.authoring.feedback import Artifact, EpisodeRecord, EpisodeStatus, Feedback, Trajectory
from evoledger.kernel.authoring.json_space import JsonSpace
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import EncodingError
from evoledger.projections.scoring import ScoreRule, score_episodes
from gymnasium import spaces

__all__ = [
    "MIN_SECRET_DIGITS",
    "Rollout",
    "check_feedback",
    "check_invalid_actions",
    "check_replay",
    "invalid_actions",
    "jsonable",
    "run_random_episode",
    "synthetic_record",
]


# -- probes ---------------------------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays/scalars and tuples turned into JSON lists and Python scalars.

    >>> jsonable((np.int64(3), np.array([0.5, 1.0])))
    [3, [0.5, 1.0]]
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def _box_candidates(space: spaces.Box) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    high = space.high.astype(np.float64)
    low = space.low.astype(np.float64)
    if np.any(np.isfinite(high)):
        beyond = np.where(np.isfinite(high), high + np.maximum(1.0, np.abs(high)), 0.0)
        found.append((f"a Box action above the upper bound ({beyond.tolist()!r:.60})", beyond.astype(space.dtype)))
    if np.any(np.isfinite(low)):
        below = np.where(np.isfinite(low), low - np.maximum(1.0, np.abs(low)), 0.0)
        found.append((f"a Box action below the lower bound ({below.tolist()!r:.60})", below.astype(space.dtype)))
    if np.issubdtype(space.dtype, np.floating):
        found.append(("a Box action full of NaN", np.full(space.shape, np.nan, dtype=space.dtype)))
    wrong_shape = (*space.shape, 2) if space.shape else (2,)
    found.append((f"a Box action of shape {wrong_shape} instead of {space.shape}", np.zeros(wrong_shape, space.dtype)))
    return found


def _valid_sample(space: spaces.Space[Any]) -> Any:
    """A valid value of ``space`` without touching the space's own random state."""
    sampler = copy.deepcopy(space)
    sampler.seed(0)
    return sampler.sample()


def invalid_actions(space: Any) -> list[tuple[str, Any]]:
    """``(description, action)`` pairs of actions outside ``space``; empty when none can be constructed.

    Callers should still confirm with ``space.contains`` before relying on a candidate being invalid.
    """
    if isinstance(space, JsonSpace):
        return space.invalid_examples()
    if isinstance(space, spaces.Discrete):
        start, n = int(space.start), int(space.n)
        return [
            (f"Discrete action {start + n} (one past the last of Discrete({n}))", start + n),
            (f"Discrete action {start - 1} (one below the first of Discrete({n}))", start - 1),
        ]
    if isinstance(space, spaces.Box):
        return _box_candidates(space)
    if isinstance(space, spaces.MultiDiscrete):
        return [("a MultiDiscrete action at nvec (one past every range)", (space.nvec + space.start).copy())]
    if isinstance(space, spaces.MultiBinary):
        return [("a MultiBinary action of 2s", np.full(space.shape, 2, dtype=np.int8))]
    if isinstance(space, spaces.Tuple) and space.spaces:
        inner = invalid_actions(space.spaces[0])
        if not inner:
            return []
        description, bad = inner[0]
        rest = [_valid_sample(s) for s in space.spaces[1:]]
        return [(f"a Tuple action whose first entry is {description}", (bad, *rest))]
    if isinstance(space, spaces.Dict) and space.spaces:
        key = next(iter(space.spaces))
        inner = invalid_actions(space.spaces[key])
        if not inner:
            return []
        description, bad = inner[0]
        action = {k: (bad if k == key else _valid_sample(s)) for k, s in space.spaces.items()}
        return [(f"a Dict action whose {key!r} entry is {description}", action)]
    return []


# -- Environments under random and invalid actions ------------------------------------------------------


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
        legal = getattr(env, "legal_action", None)
        for t in range(max_steps):
            raw = legal(sampler.np_random) if callable(legal) else sampler.sample()
            if callable(legal) and not _contains(benchmark.action_space, raw):
                findings.add(
                    "environment.protocol",
                    f"legal_action() at {key} step {t} returned {jsonable(raw)!r:.80}, outside the action space",
                )
                return run
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


# -- Feedback -------------------------------------------------------------------------------------------


MIN_SECRET_DIGITS: Final = 6
"""Seeds (and integer scenario leaves) with fewer digits are not searched for: they would match by chance."""
MIN_SECRET_CHARS: Final = 8
"""String scenario leaves shorter than this are not searched for."""

_MIXED: Final[tuple[EpisodeStatus, ...]] = ("ok", "exception", "infra_fault", "timeout", "invalid_action")


def synthetic_record(run: Rollout, status: EpisodeStatus) -> EpisodeRecord:
    """An EpisodeRecord for ``run`` as the Host would write it with ``status`` (metrics summed over steps)."""
    totals: dict[str, float] = {}
    for metrics in run.metrics:
        for key, value in metrics.items():
            totals[key] = totals.get(key, 0.0) + value
    trajectory = Trajectory(
        observations=run.observations,
        actions=[jsonable(a) for a in run.sent_actions],
        rewards=run.rewards,
        terminated=run.terminated,
        truncated=run.truncated,
        metrics=run.metrics,
    )
    return EpisodeRecord(
        split=run.episode.split,
        index=run.episode.index,
        status=status,
        episode_return=float(sum(run.rewards)),
        steps=len(run.sent_actions),
        terminated=run.terminated,
        truncated=run.truncated,
        metrics=totals,
        failure_message=None if status == "ok" else f"Traceback (most recent call last):\n  synthetic {status}",
        trajectory=None if status == "infra_fault" else trajectory,
    )


def _needles(seeds: set[int], scenarios: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, str]]:
    for seed in sorted(seeds):
        if len(str(seed)) >= MIN_SECRET_DIGITS:
            yield "feedback.leaks_seed", str(seed)
    for scenario in scenarios:
        yield "feedback.leaks_scenario", canonical_json(dict(scenario)).decode("utf-8")
        stack: list[Any] = list(scenario.values())
        while stack:
            leaf = stack.pop()
            if isinstance(leaf, Mapping):
                stack.extend(leaf.values())
            elif isinstance(leaf, list | tuple):
                stack.extend(leaf)
            elif isinstance(leaf, str) and len(leaf) >= MIN_SECRET_CHARS:
                yield "feedback.leaks_scenario", leaf
            elif isinstance(leaf, int) and not isinstance(leaf, bool) and len(str(abs(leaf))) >= MIN_SECRET_DIGITS:
                yield "feedback.leaks_scenario", str(leaf)


def _published_bytes(
    benchmark: Any, findings: Findings, records: list[EpisodeRecord], label: str, *, check_score: bool = True
) -> list[bytes] | None:
    feedback = findings.guarded("feedback.failed", f"feedback() on {label}", lambda: benchmark.feedback(records))
    if feedback is None:
        return None
    if not isinstance(feedback, Feedback) or not all(isinstance(a, Artifact) for a in feedback.artifacts):
        findings.add(
            "feedback.invalid",
            f"feedback() on {label} returned {type(feedback).__name__}; return Feedback with Artifact items",
        )
        return None
    try:
        content = canonical_json(dict(feedback.content))
    except (EncodingError, TypeError, ValueError) as exc:
        findings.add("feedback.invalid", f"feedback content on {label} is not JSON: {exc}")
        return None
    rule = getattr(getattr(benchmark, "spec", None), "scoring", None)
    rule = rule if isinstance(rule, ScoreRule) else None
    declared = score_episodes(rule, ((r.status, r.episode_return) for r in records)) if rule is not None else None
    if rule is not None and feedback.score != declared and check_score:
        findings.add(
            "feedback.score_rule",
            f"feedback() on {label} scores {feedback.score!r} but the spec's scoring rule ({rule.describe()}) gives "
            f"{declared!r}: the Host records the rule's score, so compute it with score_episodes(spec.scoring, ...)",
        )
    header = f"score={feedback.score!r}".encode()
    return [
        header + content,
        *(f"{a.name}|{a.media_type}|{a.retention}|".encode() + a.data for a in feedback.artifacts),
    ]


def check_feedback(
    benchmark: Any, findings: Findings, runs: list[Rollout], seeds: set[int], scenarios: Sequence[Mapping[str, Any]]
) -> None:
    """Call ``feedback()`` on synthetic records from ``runs`` and check what it would publish."""
    if not runs:
        return
    cases = {
        "ok records": [synthetic_record(run, "ok") for run in runs],
        "mixed records": [synthetic_record(run, _MIXED[i % len(_MIXED)]) for i, run in enumerate(runs)],
        "infra-fault-only records": [synthetic_record(runs[0], "infra_fault")],
    }
    needles = list(_needles(seeds, scenarios))
    for label, records in cases.items():
        published = _published_bytes(benchmark, findings, records, label)
        if published is None:
            continue
        if (
            label == "mixed records"
            and _published_bytes(benchmark, findings, records, label, check_score=False) != published
        ):
            findings.add("feedback.nondeterministic", "feedback() gave different Feedback for the same records")
        for code, needle in needles:
            encoded = needle.encode("utf-8")
            if any(encoded in blob for blob in published):
                findings.add(
                    code,
                    f"feedback() on {label} contains the Host-private value {needle!r:.60}; never publish seeds or "
                    "scenarios (EpisodeRecords carry pool indices only)",
                )
