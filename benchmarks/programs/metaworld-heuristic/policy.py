"""Heuristic Policy of every ``metaworld/*`` Benchmark: **upstream's scripted expert**, not a policy of ours.

MetaWorld ships a hand-written expert per task (``metaworld.policies.ENV_POLICY_MAP``: ``SawyerPickPlaceV3Policy``
and the like: move above the object, descend, grasp, carry to the goal, each a few lines of proportional control on
the observation). This Program runs in the family's venv, which has ``metaworld``, so it imports them and plays the
expert of the Episode's task: the ``task`` environment parameter for one task; for MT10 / MT50 the task the
observation's one-hot names (``tasks`` parameter: the names in one-hot order). It is a reference point for what the
family's tasks allow, and a starting point to improve on (the experts do not solve every Episode), not a
demonstration of search. The expert's action is clipped to [-1, 1] (out-of-range actions fail the Episode).
"""

from typing import Any

import numpy as np
from metaworld.policies import ENV_POLICY_MAP


class UpstreamExpert:
    def __init__(self, tasks: list[str]) -> None:
        self.experts = [ENV_POLICY_MAP[f"{task}-v3"]() for task in tasks]

    def act(self, observation: Any) -> Any:
        if isinstance(observation, dict):
            expert = self.experts[int(np.argmax(observation["task"]))]
            state = observation["state"]
        else:
            expert, state = self.experts[0], observation
        action = expert.get_action(np.asarray(state, dtype=np.float64))
        return np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)


def make_policy(context: Any) -> Any:
    parameters = context.environment_parameters
    tasks = parameters["tasks"] if "tasks" in parameters else [parameters["task"]]
    return UpstreamExpert(list(tasks))
