"""The ``--set`` settings of the MuJoCo Benchmarks: the upstream Gymnasium v5 keyword arguments worth changing.

Every model's defaults are Gymnasium's own defaults for that environment, so ``evoledger run --benchmark
mujoco/hopper`` is exactly ``Hopper-v5``. Ranges are ``[low, high]`` pairs; ``null`` as the high end means "no
upper bound" (upstream ``inf``, which JSON cannot carry). Unknown keys are refused.

This module imports neither ``mujoco`` nor ``gymnasium``: a listing reads it without the ``mujoco`` extra.
"""

from __future__ import annotations

from typing import Any

from evoledger.benchmarks.gym_adapter import GymConfig
from pydantic import Field, field_validator

__all__ = [
    "AntConfig",
    "HalfCheetahConfig",
    "HopperConfig",
    "HumanoidConfig",
    "HumanoidStandupConfig",
    "InvertedDoublePendulumConfig",
    "InvertedPendulumConfig",
    "MujocoConfig",
    "PusherConfig",
    "ReacherConfig",
    "SwimmerConfig",
    "Walker2dConfig",
    "gymnasium_kwargs",
]

Range = tuple[float, float | None]
"""A closed ``[low, high]`` range; ``None`` as ``high`` means unbounded."""


def _frame_skip(default: int) -> Any:
    return Field(
        default=default,
        ge=1,
        le=50,
        description=f"Physics steps per Environment step (upstream default {default}); changes dt and the dynamics.",
    )


def _check_range(value: Range) -> Range:
    low, high = value
    if high is not None and not low < high:
        raise ValueError(f"range [{low}, {high}] is empty: the low end must be below the high end")
    return value


class MujocoConfig(GymConfig):
    """Settings shared by every MuJoCo Benchmark (``max_episode_steps``; subclasses add upstream kwargs)."""


class _Locomotion(MujocoConfig):
    forward_reward_weight: float = Field(
        default=1.0, ge=0.0, le=1000.0, description="Weight of the forward-velocity reward."
    )
    exclude_current_positions_from_observation: bool = Field(
        default=True, description="Leave the absolute x (and y) position out of the observation (upstream default)."
    )


class _Healthy(_Locomotion):
    healthy_reward: float = Field(
        default=1.0, ge=0.0, le=1000.0, description="Reward per step while the body is healthy."
    )
    terminate_when_unhealthy: bool = Field(
        default=True, description="End the Episode as soon as the body is unhealthy (fell)."
    )

    @field_validator("healthy_z_range", "healthy_angle_range", "healthy_state_range", check_fields=False)
    @classmethod
    def _valid_range(cls, value: Range) -> Range:
        return _check_range(value)


class AntConfig(_Healthy):
    """``mujoco/ant`` (Ant-v5)."""

    frame_skip: int = _frame_skip(5)
    ctrl_cost_weight: float = Field(default=0.5, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    contact_cost_weight: float = Field(default=5e-4, ge=0.0, le=1000.0, description="Weight of the contact-force cost.")
    healthy_z_range: Range = Field(default=(0.2, 1.0), description="Healthy torso heights [low, high] (m).")
    reset_noise_scale: float = Field(default=0.1, ge=0.0, le=10.0, description="Scale of the random initial state.")
    include_cfrc_ext_in_observation: bool = Field(
        default=True, description="Append the 78 external contact forces to the observation."
    )


class HalfCheetahConfig(_Locomotion):
    """``mujoco/half-cheetah`` (HalfCheetah-v5)."""

    frame_skip: int = _frame_skip(5)
    ctrl_cost_weight: float = Field(default=0.1, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    reset_noise_scale: float = Field(default=0.1, ge=0.0, le=10.0, description="Scale of the random initial state.")


class HopperConfig(_Healthy):
    """``mujoco/hopper`` (Hopper-v5)."""

    frame_skip: int = _frame_skip(4)
    ctrl_cost_weight: float = Field(default=1e-3, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    healthy_state_range: Range = Field(
        default=(-100.0, 100.0), description="Healthy range of every state entry except x and z."
    )
    healthy_z_range: Range = Field(default=(0.7, None), description="Healthy torso heights [low, high] (m).")
    healthy_angle_range: Range = Field(default=(-0.2, 0.2), description="Healthy torso angles [low, high] (rad).")
    reset_noise_scale: float = Field(default=5e-3, ge=0.0, le=10.0, description="Scale of the random initial state.")


class Walker2dConfig(_Healthy):
    """``mujoco/walker2d`` (Walker2d-v5)."""

    frame_skip: int = _frame_skip(4)
    ctrl_cost_weight: float = Field(default=1e-3, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    healthy_z_range: Range = Field(default=(0.8, 2.0), description="Healthy torso heights [low, high] (m).")
    healthy_angle_range: Range = Field(default=(-1.0, 1.0), description="Healthy torso angles [low, high] (rad).")
    reset_noise_scale: float = Field(default=5e-3, ge=0.0, le=10.0, description="Scale of the random initial state.")


class _HumanoidBlocks(MujocoConfig):
    exclude_current_positions_from_observation: bool = Field(
        default=True, description="Leave the absolute x and y position out of the observation (upstream default)."
    )
    include_cinert_in_observation: bool = Field(default=True, description="Append the 130 body inertia values.")
    include_cvel_in_observation: bool = Field(default=True, description="Append the 78 body velocity values.")
    include_qfrc_actuator_in_observation: bool = Field(default=True, description="Append the 17 actuator forces.")
    include_cfrc_ext_in_observation: bool = Field(default=True, description="Append the 78 external contact forces.")


class HumanoidConfig(_HumanoidBlocks):
    """``mujoco/humanoid`` (Humanoid-v5)."""

    frame_skip: int = _frame_skip(5)
    forward_reward_weight: float = Field(
        default=1.25, ge=0.0, le=1000.0, description="Weight of the forward-velocity reward."
    )
    ctrl_cost_weight: float = Field(default=0.1, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    contact_cost_weight: float = Field(default=5e-7, ge=0.0, le=1000.0, description="Weight of the contact-force cost.")
    healthy_reward: float = Field(
        default=5.0, ge=0.0, le=1000.0, description="Reward per step while the body is healthy."
    )
    terminate_when_unhealthy: bool = Field(
        default=True, description="End the Episode as soon as the torso leaves the healthy heights (fell)."
    )
    healthy_z_range: Range = Field(default=(1.0, 2.0), description="Healthy torso heights [low, high] (m).")
    reset_noise_scale: float = Field(default=1e-2, ge=0.0, le=10.0, description="Scale of the random initial state.")

    @field_validator("healthy_z_range")
    @classmethod
    def _valid_range(cls, value: Range) -> Range:
        return _check_range(value)


class HumanoidStandupConfig(_HumanoidBlocks):
    """``mujoco/humanoid-standup`` (HumanoidStandup-v5)."""

    frame_skip: int = _frame_skip(5)
    uph_cost_weight: float = Field(
        default=1.0, ge=0.0, le=1000.0, description="Weight of the torso-height reward (z / dt)."
    )
    ctrl_cost_weight: float = Field(default=0.1, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    impact_cost_weight: float = Field(default=5e-7, ge=0.0, le=1000.0, description="Weight of the contact-force cost.")
    reset_noise_scale: float = Field(default=1e-2, ge=0.0, le=10.0, description="Scale of the random initial state.")


class InvertedPendulumConfig(MujocoConfig):
    """``mujoco/inverted-pendulum`` (InvertedPendulum-v5)."""

    frame_skip: int = _frame_skip(2)
    reset_noise_scale: float = Field(default=1e-2, ge=0.0, le=10.0, description="Scale of the random initial state.")


class InvertedDoublePendulumConfig(MujocoConfig):
    """``mujoco/inverted-double-pendulum`` (InvertedDoublePendulum-v5)."""

    frame_skip: int = _frame_skip(5)
    healthy_reward: float = Field(
        default=10.0, ge=0.0, le=1000.0, description="Reward per step while the poles are up."
    )
    reset_noise_scale: float = Field(default=0.1, ge=0.0, le=10.0, description="Scale of the random initial state.")


class PusherConfig(MujocoConfig):
    """``mujoco/pusher`` (Pusher-v5)."""

    frame_skip: int = _frame_skip(5)
    reward_near_weight: float = Field(
        default=0.5, ge=0.0, le=1000.0, description="Weight of the gripper-object distance."
    )
    reward_dist_weight: float = Field(default=1.0, ge=0.0, le=1000.0, description="Weight of the object-goal distance.")
    reward_control_weight: float = Field(
        default=0.1, ge=0.0, le=1000.0, description="Weight of the squared-action cost."
    )


class ReacherConfig(MujocoConfig):
    """``mujoco/reacher`` (Reacher-v5)."""

    frame_skip: int = _frame_skip(2)
    reward_dist_weight: float = Field(
        default=1.0, ge=0.0, le=1000.0, description="Weight of the fingertip-target distance."
    )
    reward_control_weight: float = Field(
        default=1.0, ge=0.0, le=1000.0, description="Weight of the squared-action cost."
    )


class SwimmerConfig(_Locomotion):
    """``mujoco/swimmer`` (Swimmer-v5)."""

    frame_skip: int = _frame_skip(4)
    ctrl_cost_weight: float = Field(default=1e-4, ge=0.0, le=1000.0, description="Weight of the squared-action cost.")
    reset_noise_scale: float = Field(default=0.1, ge=0.0, le=10.0, description="Scale of the random initial state.")


def gymnasium_kwargs(config: MujocoConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(public, upstream)``: the settings as JSON for the spec, and as ``gymnasium.make`` keyword arguments.

    ``max_episode_steps`` is left out of both (the Benchmark passes it itself); a range's ``None`` high end becomes
    ``inf`` upstream and stays ``null`` in the public form.
    """
    public: dict[str, Any] = {}
    upstream: dict[str, Any] = {}
    for name, value in config.model_dump().items():
        if name == "max_episode_steps":
            continue
        if isinstance(value, tuple):
            public[name] = list(value)
            upstream[name] = tuple(float("inf") if v is None else v for v in value)
        else:
            public[name] = value
            upstream[name] = value
    return public, upstream
