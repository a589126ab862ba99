"""The AHC057 baseline (the reference harness's): on turn 0 bond the blocks 0-29, 30-59, ... along their indices.

That is always a complete 10 x 30 partition, whatever the positions; every later turn is empty.
"""

from __future__ import annotations

from typing import Any


class BlocksPolicy:
    def act(self, observation: dict[str, Any]) -> dict[str, list[list[int]]]:
        if observation["turn"] != 0:
            return {"bonds": []}
        size = observation["initial"]["target_size"]
        points = len(observation["components"])
        return {"bonds": [[i, i + 1] for i in range(points - 1) if (i + 1) % size != 0]}


def make_policy(context: Any) -> BlocksPolicy:
    return BlocksPolicy()
