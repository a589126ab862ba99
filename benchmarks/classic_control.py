"""Gymnasium's classic-control tasks as Benchmarks: CartPole, Acrobot, MountainCar (discrete and continuous), Pendulum.

Every score is a mean Episode return to maximize, with Episodes the Policy failed (exception, timeout, invalid
action, protocol error, memory) counted as the worst return a running Policy could get, so failing never pays;
infra faults are left out of the score:

* ``cartpole`` (CartPole-v1): a failed Episode counts as 0 (the pole "fell" at once);
* ``acrobot`` (Acrobot-v1): ``-max_episode_steps`` (never swung up);
* ``mountain-car`` (MountainCar-v0): ``-max_episode_steps`` (never reached the flag);
* ``mountain-car-continuous`` (MountainCarContinuous-v0): ``-0.1 * max_episode_steps`` (full throttle, no flag);
* ``pendulum`` (Pendulum-v1): ``-16.2736044 * max_episode_steps`` (the maximal cost on every step).

Configuration (pydantic, unknown keys refused): ``max_episode_steps`` everywhere; Pendulum also takes ``g``.
Feedback counts Benchmark outcomes (CartPole: ``pole_fell`` / ``cart_left_track`` / ``survived``; the others:
``reached_goal`` / ``timed_out``, Pendulum: ``upright_at_end`` / ``not_upright``) and per-Episode notes computed
from the trajectory (highest position reached, tip height, steps spent upright).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymTask
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord
from pydantic import Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "PENDULUM_MAX_STEP_COST",
    "Acrobot",
    "CartPole",
    "MountainCar",
    "Pendulum",
    "PendulumConfig",
    "make_acrobot",
    "make_cartpole",
    "make_mountain_car",
    "make_mountain_car_continuous",
    "make_pendulum",
]

PENDULUM_MAX_STEP_COST: Final = float(np.pi**2 + 0.1 * 8.0**2 + 0.001 * 2.0**2)
"""The largest per-step cost of Pendulum-v1: angle pi, angular velocity 8, torque 2."""

_FAILURE_NOTE: Final = "Episodes the Policy failed count as {worst}; infra faults are left out"


def _observation_matrix(record: EpisodeRecord) -> np.ndarray[Any, Any] | None:
    """The trajectory's observations as a (steps + 1, dim) float array, or None when there is no usable one."""
    if record.trajectory is None or not record.trajectory.observations:
        return None
    try:
        matrix = np.asarray(record.trajectory.observations, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return matrix if matrix.ndim == 2 else None


class CartPole(GymBenchmark):
    """CartPole-v1; outcomes ``pole_fell``, ``cart_left_track`` and ``survived``."""

    def outcome(self, record: EpisodeRecord) -> str:
        if not record.terminated:
            return "survived"
        observations = _observation_matrix(record)
        if observations is not None and observations.shape[1] == 4 and abs(observations[-1, 0]) > 2.4:
            return "cart_left_track"
        return "pole_fell"


def make_cartpole(**config: Any) -> CartPole:
    """``cartpole``: balance the pole; score = mean return (steps balanced), failed Episodes count 0."""
    cfg = GymConfig.model_validate(config)
    steps = cfg.max_episode_steps or 500
    return CartPole(
        GymTask(
            benchmark_id="cartpole",
            programs=shipped("cartpole", tunable="cartpole-linear"),
            gymnasium_id="CartPole-v1",
            description=(
                "Balance a pole on a moving cart (gymnasium CartPole-v1). Observation: [cart position, cart "
                "velocity, pole angle (rad), pole angular velocity]. Actions: 0 push left, 1 push right. Reward +1 "
                "per step; the Episode terminates when the pole tilts beyond 12 degrees or the cart leaves "
                f"[-2.4, 2.4], and is truncated after {steps} steps. Score (mean_return, maximize): mean Episode "
                f"return; {_FAILURE_NOTE.format(worst=0)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=0)}",
            failure_return=0.0,
            max_episode_steps=steps,
            metadata={"gymnasium_reward_threshold": 475.0},
        )
    )


class Acrobot(GymBenchmark):
    """Acrobot-v1; outcomes ``reached_goal`` / ``timed_out``; note ``max_tip_height``."""

    def outcome(self, record: EpisodeRecord) -> str:
        return "reached_goal" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        obs = _observation_matrix(record)
        if obs is None or obs.shape[1] != 6:
            return {}
        cos1, sin1, cos2, sin2 = obs[:, 0], obs[:, 1], obs[:, 2], obs[:, 3]
        height = -cos1 - (cos1 * cos2 - sin1 * sin2)
        return {"max_tip_height": float(height.max())}


def make_acrobot(**config: Any) -> Acrobot:
    """``acrobot``: swing the tip above the bar; score = mean return (-steps), failures count -max_episode_steps."""
    cfg = GymConfig.model_validate(config)
    steps = cfg.max_episode_steps or 500
    worst = float(-steps)
    return Acrobot(
        GymTask(
            benchmark_id="acrobot",
            programs=shipped("acrobot"),
            gymnasium_id="Acrobot-v1",
            description=(
                "Swing a two-link pendulum so its tip rises one link length above the bar (gymnasium Acrobot-v1). "
                "Observation: [cos t1, sin t1, cos t2, sin t2, t1 velocity, t2 velocity]. Actions: torque 0 = -1, "
                "1 = 0, 2 = +1 on the middle joint. Reward -1 per step until the tip height "
                f"-cos(t1) - cos(t1 + t2) exceeds 1 (terminated) or {steps} steps pass (truncated). Score "
                f"(mean_return, maximize): mean Episode return; {_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            metadata={"gymnasium_reward_threshold": -100.0},
        )
    )


class MountainCar(GymBenchmark):
    """MountainCar-v0 and MountainCarContinuous-v0; outcomes ``reached_goal`` / ``timed_out``; ``max_position``."""

    def outcome(self, record: EpisodeRecord) -> str:
        return "reached_goal" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        obs = _observation_matrix(record)
        if obs is None or obs.shape[1] != 2:
            return {}
        return {"max_position": float(obs[:, 0].max())}


def make_mountain_car(**config: Any) -> MountainCar:
    """``mountain-car``: reach the flag; score = mean return (-steps), failures count -max_episode_steps."""
    cfg = GymConfig.model_validate(config)
    steps = cfg.max_episode_steps or 200
    worst = float(-steps)
    return MountainCar(
        GymTask(
            benchmark_id="mountain-car",
            programs=shipped("mountain-car", tunable="mountain-car-linear"),
            gymnasium_id="MountainCar-v0",
            description=(
                "Drive an under-powered car up the right hill to the flag at position 0.5 (gymnasium "
                "MountainCar-v0). Observation: [position in [-1.2, 0.6], velocity in [-0.07, 0.07]]. Actions: "
                "0 accelerate left, 1 no push, 2 accelerate right. Reward -1 per step until the flag is reached "
                f"(terminated) or {steps} steps pass (truncated). Score (mean_return, maximize): mean Episode "
                f"return; {_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            metadata={"gymnasium_reward_threshold": -110.0},
        )
    )


def make_mountain_car_continuous(**config: Any) -> MountainCar:
    """``mountain-car-continuous``: reach the flag cheaply; failures count -0.1 * max_episode_steps."""
    cfg = GymConfig.model_validate(config)
    steps = cfg.max_episode_steps or 999
    worst = round(-0.1 * steps, 6)
    return MountainCar(
        GymTask(
            benchmark_id="mountain-car-continuous",
            programs=shipped("mountain-car-continuous"),
            gymnasium_id="MountainCarContinuous-v0",
            description=(
                "Drive an under-powered car up the right hill to the flag at position 0.45 (gymnasium "
                "MountainCarContinuous-v0). Observation: [position in [-1.2, 0.6], velocity in [-0.07, 0.07]]. "
                "Action: [force] with force in [-1, 1] (a list or array of shape (1,); out-of-range actions are "
                "rejected, never clipped). Reward -0.1 * force^2 per step and +100 on reaching the flag "
                f"(terminated); truncated after {steps} steps. Score (mean_return, maximize): mean Episode "
                f"return; {_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            metadata={"gymnasium_reward_threshold": 90.0},
        )
    )


class PendulumConfig(GymConfig):
    """Pendulum configuration: gravity ``g`` as well as the step limit."""

    g: float = Field(default=10.0, gt=0.0, le=100.0, description="Gravitational acceleration (gymnasium default 10).")


class Pendulum(GymBenchmark):
    """Pendulum-v1; outcomes ``upright_at_end`` / ``not_upright``; note ``upright_steps``."""

    def outcome(self, record: EpisodeRecord) -> str:
        obs = _observation_matrix(record)
        if obs is None or obs.shape[1] != 3:
            return "timed_out"
        return "upright_at_end" if obs[-1, 0] > 0.95 else "not_upright"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        obs = _observation_matrix(record)
        if obs is None or obs.shape[1] != 3:
            return {}
        return {"upright_steps": float(np.count_nonzero(obs[1:, 0] > 0.95))}


def make_pendulum(**config: Any) -> Pendulum:
    """``pendulum``: swing up and hold; score = mean return, failures count as maximal cost every step."""
    cfg = PendulumConfig.model_validate(config)
    steps = cfg.max_episode_steps or 200
    worst = round(-PENDULUM_MAX_STEP_COST * steps, 6)
    return Pendulum(
        GymTask(
            benchmark_id="pendulum",
            programs=shipped("pendulum", tunable="pendulum-linear"),
            gymnasium_id="Pendulum-v1",
            description=(
                "Swing a pendulum upright and hold it there (gymnasium Pendulum-v1, gravity g = "
                f"{cfg.g}). Observation: [cos theta, sin theta, angular velocity in [-8, 8]] with theta = 0 upright. "
                "Action: [torque] with torque in [-2, 2] (shape (1,); out-of-range actions are rejected, never "
                "clipped). Reward -(theta^2 + 0.1 * velocity^2 + 0.001 * torque^2) per step; every Episode is "
                f"truncated after {steps} steps. Score (mean_return, maximize): mean Episode return; "
                f"{_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={"g": cfg.g},
        )
    )


BENCHMARKS = {
    "classic-control/cartpole": make_cartpole,
    "classic-control/acrobot": make_acrobot,
    "classic-control/mountain-car": make_mountain_car,
    "classic-control/mountain-car-continuous": make_mountain_car_continuous,
    "classic-control/pendulum": make_pendulum,
}

CATALOG = (
    CatalogEntry(
        "classic-control/cartpole",
        "classic-control",
        "CartPole-v1: balance a pole on a moving cart",
        None,
        ("cartpole",),
    ),
    CatalogEntry(
        "classic-control/acrobot", "classic-control", "Acrobot-v1: swing a two-link arm up", None, ("acrobot",)
    ),
    CatalogEntry(
        "classic-control/mountain-car",
        "classic-control",
        "MountainCar-v0: rock an underpowered car up a hill (discrete pushes)",
        None,
        ("mountain-car",),
    ),
    CatalogEntry(
        "classic-control/mountain-car-continuous",
        "classic-control",
        "MountainCarContinuous-v0: drive an underpowered car up a hill (continuous force)",
        None,
        ("mountain-car-continuous",),
    ),
    CatalogEntry(
        "classic-control/pendulum",
        "classic-control",
        "Pendulum-v1: swing a pendulum up and hold it",
        None,
        ("pendulum",),
    ),
)
"""The catalogue rows of :data:`BENCHMARKS`: the core install runs them (no extra); old names are aliases."""
