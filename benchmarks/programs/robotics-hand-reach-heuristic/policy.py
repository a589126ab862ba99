"""Heuristic Policy for ``robotics/hand-reach``: hold every joint still, bring the thumb and one finger together.

Upstream's goal keeps three fingertips where they start and sends the thumb and one other finger to a meeting point
above the palm (the same point up to 5 mm of noise); one goal in ten keeps all five where they start. The Policy
reads which finger moves from the first observation (the fingertips whose ``desired_goal`` differs from
``achieved_goal``). Actions are absolute joint position targets (upstream maps [-1, 1] onto each actuator's range,
LOW and HIGH below); ACTUATED says which of the 24 observed joint angles each of the 20 actuators drives.

* Held joints (the wrist and the three resting fingers): target the starting angle plus an integral term, KI
  times the summed angle error, which cancels the sag that gravity gives the weak position servos. These
  fingertips stay within 0.1 mm of their goal.
* The thumb and the moving finger: start from a posture found offline for each finger (POSTURES, by Newton steps
  on the simulated hand with the mean meeting point) and, from step START on, take damped least-squares steps
  toward the goal through a Jacobian (tip displacement per unit of action, measured offline at that posture).
  With the first three fingers that is a small step (GAIN) every step through the fixed Jacobian. The little
  finger's Jacobian changes along its longer way (ADAPTIVE): there the step comes every EVERY steps, the
  Jacobian is updated by Broyden's rule from the observed moves, and a step that made the tip worse is undone
  and the next one halved. The fingertips touch each other near the meeting point, so many Episodes end 1 to 2 cm
  off (the ring finger cannot reach the point with the wrist held): this is a start, not a solution.
"""

from typing import Any

import numpy as np

LOW = np.array([-0.489, -0.698, -0.349, 0, 0, -0.349, 0, 0, -0.349, 0, 0, 0, -0.349, 0, 0, -1.047, 0, -0.209, -0.524])
LOW = np.append(LOW, -1.571)
HIGH = np.array([0.14, 0.489, 0.349, 1.571, 1.571, 0.349, 1.571, 1.571, 0.349, 1.571, 1.571, 0.785, 0.349, 1.571])
HIGH = np.append(HIGH, [1.571, 1.047, 1.222, 0.209, 0.524, 0])
ACTUATED = [0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 23]
FINGERS = {0: [2, 3, 4], 1: [5, 6, 7], 2: [8, 9, 10], 3: [11, 12, 13, 14], 4: [15, 16, 17, 18, 19]}
"""The actuators of each fingertip in ``achieved_goal`` order: first, middle, ring, little finger, thumb."""
THUMB = 4
KI = 0.3
START = 12
EVERY = 3
MAX_STEP = 0.2
GAIN = 0.5
SMALL_STEP = 0.1
ADAPTIVE = {3}
DAMPING = 1e-4
POSTURES = {  # moving finger -> {fingertip: (its actuators' actions, its 3 x n Jacobian)}
    0: {
        4: (
            [0.003, 1.0, 0.855, -0.697, -0.501],
            [[0.053, 0, 0.004, -0.014, -0.002], [-0.024, 0, 0.005, -0.001, -0.01], [-0.056, 0, 0.003, 0.022, 0.019]],
        ),
        0: ([0.999, 0.621, -0.038], [[0, 0.011, 0.004], [0, 0.064, 0.036], [0, 0.008, -0.013]]),
    },
    1: {
        4: (
            [0.034, 1.0, 0.946, -0.54, -0.594],
            [[0.047, 0, 0, -0.012, 0.005], [-0.017, 0, 0, -0.003, -0.012], [-0.068, 0, 0, 0.027, 0.013]],
        ),
        1: ([-0.432, 0.77, -0.032], [[-0.061, -0.094, -0.098], [0.297, 0.39, 0.405], [-0.157, -0.191, -0.244]]),
    },
    2: {
        4: (
            [0.016, 1.0, 0.882, -0.641, -0.528],
            [[0.053, 0, 0.004, -0.014, -0.001], [-0.024, 0, 0.005, 0, -0.01], [-0.056, 0, 0.003, 0.022, 0.019]],
        ),
        2: ([-1.0, 0.762, -0.079], [[0, -0.03, -0.018], [0, 0.057, 0.042], [0, -0.005, -0.04]]),
    },
    3: {
        4: (
            [0.034, 1.0, 0.932, -0.676, -0.517],
            [[0.033, 0, 0.004, -0.01, -0.003], [-0.023, 0, 0.005, -0.001, -0.009], [-0.041, 0, 0.003, 0.019, 0.021]],
        ),
        3: (
            [0.937, -0.066, -0.399, 0.387],
            [[0.03, 0.027, 0.037, 0.049], [-0.027, -0.029, 0.019, 0.028], [-0.005, -0.009, -0.007, -0.049]],
        ),
    },
}


class Tip:
    """One moving fingertip: its current action, Jacobian, step scale and the best (error, action, tip) seen."""

    def __init__(self, action: Any, jacobian: Any, adaptive: bool) -> None:
        self.adaptive = adaptive
        self.action = np.array(action, dtype=np.float64)
        self.jacobian = np.array(jacobian, dtype=np.float64)
        self.scale = 1.0
        self.best: tuple[float, Any, Any] = (np.inf, self.action.copy(), None)

    def step(self, tip: Any, goal: Any) -> Any:
        j = self.jacobian
        return j.T @ np.linalg.solve(j @ j.T + DAMPING * np.eye(3), goal - tip)

    def nudge(self, tip: Any, goal: Any) -> None:
        self.action = np.clip(self.action + np.clip(GAIN * self.step(tip, goal), -SMALL_STEP, SMALL_STEP), -1.0, 1.0)

    def update(self, tip: Any, goal: Any) -> None:
        error = float(np.linalg.norm(goal - tip))
        best_error, best_action, best_tip = self.best
        if best_tip is not None:  # Broyden: make the Jacobian explain the move just observed
            moved = self.action - best_action
            if moved @ moved > 1e-8:
                self.jacobian += np.outer(tip - best_tip - self.jacobian @ moved, moved) / (moved @ moved)
        if error < best_error:
            self.best = (error, self.action.copy(), tip.copy())
            self.scale = min(1.0, self.scale * 1.5)
        else:
            self.scale *= 0.5
        _, best_action, best_tip = self.best
        step = np.clip(self.scale * self.step(best_tip, goal), -MAX_STEP, MAX_STEP)
        self.action = np.clip(best_action + step, -1.0, 1.0)


class HandReach:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.start: Any = None
        self.integral = np.zeros(len(ACTUATED))
        self.tips: dict[int, Tip] = {}
        self.steps = 0

    def act(self, observation: Any) -> Any:
        angles = np.asarray(observation["observation"], dtype=np.float64)[ACTUATED]
        tips = np.asarray(observation["achieved_goal"], dtype=np.float64).reshape(5, 3)
        goal = np.asarray(observation["desired_goal"], dtype=np.float64).reshape(5, 3)
        if self.start is None:
            self.start = angles.copy()
            moving = [i for i in range(THUMB) if np.linalg.norm(goal[i] - tips[i]) > 1e-6]
            if moving:
                finger = moving[0]
                self.tips = {tip: Tip(*POSTURES[finger][tip], finger in ADAPTIVE) for tip in (THUMB, finger)}
        self.steps += 1
        self.integral += KI * (self.start - angles)
        action = (2.0 * self.start - (LOW + HIGH)) / (HIGH - LOW) + self.integral
        for tip, state in self.tips.items():
            if state.adaptive and self.steps >= START and (self.steps - START) % EVERY == 0:
                state.update(tips[tip], goal[tip])
            elif not state.adaptive and self.steps > START:
                state.nudge(tips[tip], goal[tip])
            action[FINGERS[tip]] = state.action
        return np.clip(action, -1.0, 1.0).astype(self.dtype)


def make_policy(context: Any) -> Any:
    return HandReach(context.action_space.dtype)
