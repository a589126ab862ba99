"""Heuristic Policy for the ``dm-control/walker-*`` tasks: an upright posture on the feet, an open-loop thrash when
down.

Observation: ``orientations`` = (xx, xz) of the rotation of the torso, right thigh, leg, foot, left thigh, leg and
foot, so ``atan2(xz, xx)`` is each body's pitch in the world (0 = upright, positive = leaning forward); ``height`` =
the torso's height; ``velocity`` = [rootz, rootx, rooty, right hip, knee, ankle, left hip, knee, ankle] (rooty is the
torso's pitch rate). Action: six torques in [-1, 1] (right hip, knee, ankle, left hip, knee, ankle); each joint turns
its child body about -y, so a positive hip torque pitches the torso forward. Joint angle = parent pitch - child pitch.

**Posture** (the first :data:`SETTLE` steps, and whenever the torso is at least :data:`DOWN_HEIGHT` high): on both
legs alike the hips pull the torso's pitch towards 0 (a PD law on pitch and pitch rate), the knees hold the leg
straight and the ankles keep the shin vertical over the foot; on its back with the legs thrown over its head it first
lowers them. The Episode drops the walker from a random pose: landing on its feet, it stands; on its back, it sits up.

**Thrash** (down, after the first second): each hip follows a slow sine towards full flexion (the two legs a quarter
period apart), the knees held bent, under a PD law whose rate term is negative, so it pumps rather than damps. The
walker flops and bounces forward along the ground, now and then high enough for the posture to catch it on its feet.
The numbers came from a short random search (about 30 settings tried on 400-step walk Episodes from 8 seeds). There is
no gait: on its feet it stands still (walk and run pay a sixth of the standing reward for that), and down it flops
forward slowly.
"""

import math
from typing import Any

import numpy as np

K_PITCH = 3.0
K_PITCH_RATE = 0.3
K_HIP = 1.0
K_HIP_RATE = 0.1
K_KNEE = 0.6
K_KNEE_RATE = 0.05
K_SHIN = 1.0
K_SHIN_RATE = 0.1

SETTLE = 40
"""Steps of posture control before the walker may thrash (it falls for most of the first second)."""
DOWN_HEIGHT = 0.6
"""Below this torso height (m) the walker counts as down."""
FREQUENCY = 0.767
HIP_OFFSET = 128.68
HIP_AMPLITUDE = 57.06
KNEE_OFFSET = -78.61
KNEE_AMPLITUDE = -2.10
KNEE_PHASE = -0.752
LEG_PHASE = 1.621
K_THRASH = 2.087
K_THRASH_RATE = -0.479


def _pitch(orientations: Any, body: int) -> float:
    return math.atan2(float(orientations[2 * body + 1]), float(orientations[2 * body]))


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


class Walker:
    def __init__(self, timestep: float) -> None:
        self.timestep = timestep
        self.steps = 0

    def act(self, observation: Any) -> Any:
        orientations, velocity = observation["orientations"], observation["velocity"]
        self.steps += 1
        down = self.steps > SETTLE and float(observation["height"]) < DOWN_HEIGHT
        pitch, pitch_rate = _pitch(orientations, 0), float(velocity[2])
        action = np.zeros(6, dtype=np.float64)
        for side in (0, 1):
            thigh, shin = _pitch(orientations, 1 + 3 * side), _pitch(orientations, 2 + 3 * side)
            hip_rate, knee_rate = float(velocity[3 + 3 * side]), float(velocity[4 + 3 * side])
            hip, knee = _wrap(pitch - thigh), _wrap(thigh - shin)
            if down:
                phase = 2.0 * math.pi * FREQUENCY * self.steps * self.timestep + side * LEG_PHASE
                hip_target = math.radians(HIP_OFFSET + HIP_AMPLITUDE * math.sin(phase))
                knee_target = math.radians(KNEE_OFFSET + KNEE_AMPLITUDE * math.sin(phase + KNEE_PHASE))
                action[3 * side] = K_THRASH * (hip_target - hip) - K_THRASH_RATE * hip_rate
                action[3 * side + 1] = K_THRASH * (knee_target - knee) - K_THRASH_RATE * knee_rate
                continue
            shin_rate = pitch_rate - hip_rate - knee_rate
            if pitch < -1.0 and abs(_wrap(thigh)) > 2.0:  # on its back, legs over its head: lower them first
                action[3 * side] = -(K_HIP * hip + K_HIP_RATE * hip_rate)
            else:
                action[3 * side] = -(K_PITCH * pitch + K_PITCH_RATE * pitch_rate)
            action[3 * side + 1] = -(K_KNEE * knee + K_KNEE_RATE * knee_rate)
            action[3 * side + 2] = -(K_SHIN * _wrap(shin) + K_SHIN_RATE * shin_rate)
        return np.clip(action, -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return Walker(float(context.environment_parameters.get("control_timestep", 0.025)))
