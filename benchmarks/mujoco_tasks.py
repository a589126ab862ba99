"""The eleven MuJoCo v5 tasks: the facts of each that do not depend on its settings.

Names, upstream ids, what the Feedback tracks (``kind``), default step limits, failure returns and the text that
describes the observation, action, reward and termination. :mod:`evoledger.benchmarks.mujoco` builds Benchmarks
from them; nothing here imports ``mujoco``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from evoledger.benchmarks.mujoco_settings import (
    AntConfig,
    HalfCheetahConfig,
    HopperConfig,
    HumanoidConfig,
    HumanoidStandupConfig,
    InvertedDoublePendulumConfig,
    InvertedPendulumConfig,
    MujocoConfig,
    PusherConfig,
    ReacherConfig,
    SwimmerConfig,
    Walker2dConfig,
)

__all__ = ["TASKS", "MujocoTask"]


@dataclass(frozen=True, slots=True)
class MujocoTask:
    """The facts of one MuJoCo Benchmark that do not depend on its settings."""

    task: str
    """The task part of the name (``half-cheetah`` in ``mujoco/half-cheetah``)."""
    env: str
    """The Gymnasium environment name without its version (``HalfCheetah``)."""
    kind: str
    """What the Feedback tracks: ``walker`` (can fall), ``runner`` (cannot), ``standup``, ``pendulum``,
    ``double-pendulum``, ``reacher`` or ``pusher``."""
    config: type[MujocoConfig]
    default_steps: int
    failure_floor: float
    """The failure return at the default step limit and weights (negative)."""
    weights: tuple[str, ...]
    """Settings whose increase above the default lowers the failure return proportionally."""
    summary: str
    details: str
    """Observation, action, reward and termination, for the description."""

    @property
    def name(self) -> str:
        """The registry name, ``mujoco/<task>``."""
        return f"mujoco/{self.task}"

    @property
    def gymnasium_id(self) -> str:
        """The upstream id, ``<Env>-v5``."""
        return f"{self.env}-v5"

    def failure_return(self, config: MujocoConfig, steps: int) -> float:
        """The return counted for an Episode the Policy failed (see the module docstring)."""
        scale = 1.0
        for weight in self.weights:
            default = float(type(config).model_fields[weight].default)
            given = float(getattr(config, weight))
            if default > 0:
                scale = max(scale, given / default)
        return round(self.failure_floor * scale * steps / self.default_steps, 6)


_LOCOMOTION_REWARD = (
    "Reward per step: forward_reward_weight * x velocity{healthy} - ctrl_cost_weight * sum(action^2){contact}."
)


def _task_table() -> tuple[MujocoTask, ...]:
    walker_terms = {"healthy": " + healthy_reward while healthy", "contact": ""}
    return (
        MujocoTask(
            task="ant",
            env="Ant",
            kind="walker",
            config=AntConfig,
            default_steps=1000,
            failure_floor=-4000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight", "contact_cost_weight", "healthy_reward"),
            summary="Ant-v5: make a four-legged robot walk forwards (+x) without flipping over",
            details=(
                "Observation (105 floats; 107 with the x, y position): torso z, torso orientation quaternion (4), "
                "8 hip/ankle angles, 14 velocities (torso linear and angular, 8 joints), then 78 clipped external "
                "contact forces (13 bodies x 6; left out with include_cfrc_ext_in_observation=false). Action: 8 "
                "joint torques in [-1, 1]. "
                + _LOCOMOTION_REWARD.format(
                    healthy=" + healthy_reward while healthy", contact=" - contact_cost_weight * sum(contact^2)"
                )
                + " Unhealthy (fell) = torso z outside healthy_z_range [0.2, 1.0] (flipped or jumped); the Episode "
                "then terminates."
            ),
        ),
        MujocoTask(
            task="half-cheetah",
            env="HalfCheetah",
            kind="runner",
            config=HalfCheetahConfig,
            default_steps=1000,
            failure_floor=-10000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight"),
            summary="HalfCheetah-v5: make a planar two-legged cheetah run forwards (+x) as fast as it can",
            details=(
                "Observation (17 floats; 18 with x): torso z, torso angle, 6 joint angles (back thigh, shin, foot, "
                "front thigh, shin, foot), then 9 velocities (x, z, angle, 6 joints). Action: 6 joint torques in "
                "[-1, 1]. " + _LOCOMOTION_REWARD.format(healthy="", contact="") + " It never terminates."
            ),
        ),
        MujocoTask(
            task="hopper",
            env="Hopper",
            kind="walker",
            config=HopperConfig,
            default_steps=1000,
            failure_floor=-1000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight", "healthy_reward"),
            summary="Hopper-v5: make a planar one-legged robot hop forwards (+x) without falling",
            details=(
                "Observation (11 floats; 12 with x): torso z, torso angle, thigh, leg and foot angles, then 6 "
                "velocities (x, z, angle, 3 joints). Action: 3 joint torques in [-1, 1]. "
                + _LOCOMOTION_REWARD.format(**walker_terms)
                + " Unhealthy (fell) = torso z below 0.7 m, |torso angle| above 0.2 rad or a state entry beyond "
                "100; the Episode then terminates."
            ),
        ),
        MujocoTask(
            task="humanoid",
            env="Humanoid",
            kind="walker",
            config=HumanoidConfig,
            default_steps=1000,
            failure_floor=-10000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight", "contact_cost_weight", "healthy_reward"),
            summary="Humanoid-v5: make a 3D humanoid walk forwards (+x) without falling",
            details=(
                "Observation (348 floats; 350 with x, y): torso z, orientation quaternion (4), 17 joint angles "
                "(abdomen y/z/x, right hip x/z/y, right knee, left hip x/z/y, left knee, right shoulder 1/2, right "
                "elbow, left shoulder 1/2, left elbow), 23 velocities, then 130 body inertias, 78 body velocities, "
                "17 actuator forces and 78 contact forces (each block optional). Action: 17 joint torques in "
                "[-0.4, 0.4], in the joint order above. Reward per step: forward_reward_weight * centre-of-mass x "
                "velocity + healthy_reward while healthy - ctrl_cost_weight * sum(action^2) - contact cost. "
                "Unhealthy (fell) = torso z outside [1.0, 2.0]; the Episode then terminates."
            ),
        ),
        MujocoTask(
            task="humanoid-standup",
            env="HumanoidStandup",
            kind="standup",
            config=HumanoidStandupConfig,
            default_steps=1000,
            failure_floor=-10000.0,
            weights=("uph_cost_weight", "ctrl_cost_weight", "impact_cost_weight"),
            summary="HumanoidStandup-v5: make a humanoid lying on the ground stand up",
            details=(
                "Observation: as Humanoid (348 floats; torso z first). Action: 17 joint torques in [-0.4, 0.4]. "
                "Reward per step: uph_cost_weight * torso z / dt + 1 - ctrl_cost_weight * sum(action^2) - impact "
                "cost; it never terminates, so the return mostly measures how high the torso stays."
            ),
        ),
        MujocoTask(
            task="inverted-double-pendulum",
            env="InvertedDoublePendulum",
            kind="double-pendulum",
            config=InvertedDoublePendulumConfig,
            default_steps=1000,
            failure_floor=-1000.0,
            weights=("healthy_reward",),
            summary="InvertedDoublePendulum-v5: balance two stacked poles on a cart",
            details=(
                "Observation (9 floats): cart x, sin and cos of both pole angles (sin t1, sin t2, cos t1, cos t2; "
                "t2 relative to the lower pole), cart velocity, both angular velocities, a constraint force. Action: "
                "[force] in [-1, 1]. Reward per step: healthy_reward - 0.01 x^2 - (tip y - 2)^2 - velocity penalty. "
                "The Episode terminates (dropped) when the tip falls to 1 m or below."
            ),
        ),
        MujocoTask(
            task="inverted-pendulum",
            env="InvertedPendulum",
            kind="pendulum",
            config=InvertedPendulumConfig,
            default_steps=1000,
            failure_floor=-1000.0,
            weights=(),
            summary="InvertedPendulum-v5: balance a pole on a cart",
            details=(
                "Observation (4 floats): cart position, pole angle (rad, 0 upright), cart velocity, pole angular "
                "velocity. Action: [force] in [-3, 3]. Reward +1 per step; the Episode terminates (dropped) when "
                "|pole angle| exceeds 0.2 rad."
            ),
        ),
        MujocoTask(
            task="pusher",
            env="Pusher",
            kind="pusher",
            config=PusherConfig,
            default_steps=100,
            failure_floor=-1000.0,
            weights=("reward_near_weight", "reward_dist_weight", "reward_control_weight"),
            summary="Pusher-v5: push a cylinder across a table onto a goal with a 7-joint arm",
            details=(
                "Observation (23 floats): 7 joint angles, 7 joint velocities, xyz of the gripper (tips_arm), of the "
                "object and of the goal. Action: 7 joint torques in [-2, 2] (shoulder pan, shoulder lift, upper-arm "
                "roll, elbow flex, forearm roll, wrist flex, wrist roll). No gravity. Reward per step: "
                "-reward_dist_weight * |object - goal| - reward_near_weight * |gripper - object| - "
                "reward_control_weight * sum(action^2)."
            ),
        ),
        MujocoTask(
            task="reacher",
            env="Reacher",
            kind="reacher",
            config=ReacherConfig,
            default_steps=50,
            failure_floor=-1000.0,
            weights=("reward_dist_weight", "reward_control_weight"),
            summary="Reacher-v5: move a two-link arm's fingertip to a random target",
            details=(
                "Observation (10 floats): cos q0, cos q1, sin q0, sin q1, target x, y, both joint velocities, "
                "fingertip - target x, y (links of 0.1 m and 0.11 m to the fingertip). Action: 2 joint torques in "
                "[-1, 1]. Reward per step: -reward_dist_weight * |fingertip - target| - reward_control_weight * "
                "sum(action^2)."
            ),
        ),
        MujocoTask(
            task="swimmer",
            env="Swimmer",
            kind="runner",
            config=SwimmerConfig,
            default_steps=1000,
            failure_floor=-1000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight"),
            summary="Swimmer-v5: make a three-segment swimmer swim forwards (+x) in a viscous fluid",
            details=(
                "Observation (8 floats; 10 with x, y): front-tip angle, 2 joint angles, then 5 velocities (x, y, "
                "front-tip angular, 2 joints). Action: 2 joint torques in [-1, 1]. "
                + _LOCOMOTION_REWARD.format(healthy="", contact="")
                + " It never terminates."
            ),
        ),
        MujocoTask(
            task="walker2d",
            env="Walker2d",
            kind="walker",
            config=Walker2dConfig,
            default_steps=1000,
            failure_floor=-1000.0,
            weights=("forward_reward_weight", "ctrl_cost_weight", "healthy_reward"),
            summary="Walker2d-v5: make a planar two-legged robot walk forwards (+x) without falling",
            details=(
                "Observation (17 floats; 18 with x): torso z, torso angle, right thigh, leg, foot angles, left "
                "thigh, leg, foot angles, then 9 velocities (x, z, angle, 6 joints). Action: 6 joint torques in "
                "[-1, 1] (right thigh, leg, foot, left thigh, leg, foot). "
                + _LOCOMOTION_REWARD.format(**walker_terms)
                + " Unhealthy (fell) = torso z outside [0.8, 2.0] or |torso angle| above 1 rad; the Episode then "
                "terminates."
            ),
        ),
    )


TASKS: Final[tuple[MujocoTask, ...]] = _task_table()
"""Every MuJoCo task, in registry order."""
