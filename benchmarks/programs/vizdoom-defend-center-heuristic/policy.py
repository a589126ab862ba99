"""Heuristic Policy for ``vizdoom/defend-center``: a blind turret, turning right and firing on every fourth step.

No perception: three TURN_RIGHT steps, then one ATTACK, forever (actions found by name in
``context.metadata["actions"]``). The monsters close in from every side, so a steady sweep meets most of them; the
26 rounds of ammunition last about a hundred steps of sweeping. Aiming at what the screen shows would do better.
"""

from typing import Any


class Turret:
    def __init__(self, actions: list[str]) -> None:
        turn, attack = actions.index("turn_right"), actions.index("attack")
        self.cycle = [turn, turn, turn, attack]
        self.t = 0

    def act(self, observation: Any) -> int:
        action = self.cycle[self.t % len(self.cycle)]
        self.t += 1
        return action


def make_policy(context: Any) -> Any:
    return Turret(list(context.metadata["actions"]))
