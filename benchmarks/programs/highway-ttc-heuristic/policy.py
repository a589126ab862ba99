"""Heuristic Policy for ``highway/two-way`` and ``highway/u-turn`` (time-to-collision observations): take the
meta-action whose predicted collision is furthest away, preferring speed.

The observation is a float32 grid ``[speed, lane, time]``: speed index 0/1/2 = the speed one step slower, the
current one, one step faster; lane index 0/1/2 = the lane to the left, the current lane, the lane to the right
(a lane that does not exist reads as an immediate collision); time = the next seconds, with a value > 0 where a
collision with another vehicle is predicted at that speed in that lane.

Each of the five meta-actions leads to one (speed, lane) cell: LANE_LEFT (current speed, left lane), IDLE (current
speed, current lane), LANE_RIGHT (current speed, right lane), FASTER (faster, current lane), SLOWER (slower,
current lane). The Policy scores a cell by the number of collision-free seconds ahead and picks the best, breaking
ties in the order FASTER, IDLE, LANE_LEFT, LANE_RIGHT, SLOWER (speed is rewarded; changing lanes is a risk).
"""

from typing import Any

import numpy as np

# action -> (speed index, lane index) in the grid
CELLS = {3: (2, 1), 1: (1, 1), 0: (1, 0), 2: (1, 2), 4: (0, 1)}
PREFERENCE = (3, 1, 0, 2, 4)


def free_time(row: Any) -> int:
    """Seconds before the first predicted collision in one (speed, lane) cell (the horizon if none)."""
    hits = np.flatnonzero(np.asarray(row) > 0.0)
    return int(hits[0]) if hits.size else len(row)


class LongestFreeTime:
    def act(self, observation: Any) -> Any:
        grid = np.asarray(observation, dtype=np.float64)
        best, best_time = 1, -1
        for action in PREFERENCE:
            speed, lane = CELLS[action]
            time = free_time(grid[speed, lane])
            if time > best_time:
                best, best_time = action, time
        return best


def make_policy(context: Any) -> Any:
    return LongestFreeTime()
