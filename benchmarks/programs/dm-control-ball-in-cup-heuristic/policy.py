"""Heuristic Policy for ``dm-control/ball-in-cup-catch``: swing the ball up on its string, then move the cup under it.

Observation: ``position`` = [cup x, cup z, ball x, ball z] (slide-joint positions, m; the cup's joints rest at 0 with
the cup 0.6 m up, the ball's at 0 with the ball 0.2 m up), ``velocity`` = their rates; action: two forces in [-1, 1]
on the cup (x, z). The cup hangs on springs (stiffness 20, gear 5), so a constant action ``u`` holds it near
``u / 4`` m: the action is roughly a position command.

The string (0.3 m) is tied 0.108 m below the cup, so the ball relative to that anchor is ``(dx, dz)`` with
``dz = ball z - cup z - 0.292``. While the ball is below ``CATCH_ABOVE`` m above the anchor the Policy pumps the
pendulum: the cup's x follows the ball's swing rate (``SWING_GAIN * w * cos(angle)``, a little kick when it hangs
still) and the cup is lifted while the ball passes the bottom and lowered near the ends of the swing (pumping energy
through the string's pull). Above that the ball flies free: the cup tracks the ball's x (plus ``LEAD`` seconds of
its velocity) at its rest height, so the falling ball drops into it and stays (reward 1 per step while inside). The
gains came from a short random search (under 40 tries on eight Episodes) around hand-set values.
"""

import math
from typing import Any

import numpy as np

ANCHOR_DROP = 0.292
SPRING = 4.0
SWING_GAIN = 2.3
PUMP_UP = 0.83
PUMP_DOWN = 0.3
PUMP_ANGLE = 0.96
CATCH_GAIN = 7.7
CATCH_DAMPING = 0.5
LEAD = 0.1
CATCH_ABOVE = 0.047
KICK = 0.5


class CupController:
    def act(self, observation: Any) -> Any:
        cx, cz, bx, bz = (float(v) for v in observation["position"])
        vcx, vcz, vbx, vbz = (float(v) for v in observation["velocity"])
        dx, dz = bx - cx, bz - cz - ANCHOR_DROP
        if dz > CATCH_ABOVE:  # the ball is above the string's anchor: catch it
            tx = bx + LEAD * vbx
            ux = SPRING * tx + CATCH_GAIN * (tx - cx) - CATCH_DAMPING * vcx
            uz = -CATCH_GAIN * cz - CATCH_DAMPING * vcz
        else:  # pump the swing
            angle = math.atan2(dx, -dz)  # 0 = hanging straight down
            rate = (dx * (vbz - vcz) - dz * (vbx - vcx)) / max(dx * dx + dz * dz, 1e-6)
            kick = KICK if abs(rate) < 0.05 and abs(angle) < 0.05 else 0.0
            ux = SWING_GAIN * rate * math.cos(angle) + kick
            uz = PUMP_UP if abs(angle) < PUMP_ANGLE else -PUMP_DOWN
        return np.clip(np.array([ux, uz], dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    return CupController()
