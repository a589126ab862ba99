"""A generic parameterised Policy, written into ``program/`` by the built-in hill-climb Agent for a Benchmark that
ships no tunable Program. Its parameters live in ``params.json`` next to this file, a flat JSON object of numbers
(a missing key counts as 0):

* **tabular** (a ``Discrete(n)`` observation): ``q<s>_<a>`` is the preference for action ``a`` in state ``s``;
* **linear** (any other observation): ``w<o>_<i>`` weighs feature ``i`` in output ``o`` and ``b<o>`` is its bias.
  The features are the flattened observation (``gymnasium.spaces.flatten``: one-hot for a Discrete part), each
  bounded component scaled into ``[-1, 1]``.

The action is the output with the largest value for a ``Discrete`` action space (one output per action), or one
output per dimension of a ``Box`` action space, squashed into its bounds with ``tanh`` where they are finite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces


def _outputs(space: Any) -> int:
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape))
    raise TypeError(f"the generic family cannot act in {space}")


class FamilyPolicy:
    def __init__(self, context: Any, params: dict[str, float]) -> None:
        self.observation_space = context.observation_space
        self.action_space = context.action_space
        outputs = _outputs(self.action_space)
        if isinstance(self.observation_space, spaces.Discrete):
            self.tabular = True
            n = int(self.observation_space.n)
            self.table = np.array([[params.get(f"q{s}_{a}", 0.0) for a in range(outputs)] for s in range(n)])
        else:
            self.tabular = False
            flat: Any = spaces.flatten_space(self.observation_space)  # a Box for every space a Benchmark offers
            low, high = flat.low.astype(np.float64), flat.high.astype(np.float64)
            bounded = np.isfinite(low) & np.isfinite(high) & (high > low)
            low, high = np.where(bounded, low, -1.0), np.where(bounded, high, 1.0)  # unbounded: left as it is
            self.center, self.half = (low + high) / 2, (high - low) / 2
            d = int(flat.shape[0])
            self.weights = np.array([[params.get(f"w{o}_{i}", 0.0) for i in range(d)] for o in range(outputs)])
            self.bias = np.array([params.get(f"b{o}", 0.0) for o in range(outputs)])

    def _values(self, observation: Any) -> Any:
        if self.tabular:
            return self.table[int(observation) - int(self.observation_space.start)]
        if isinstance(self.observation_space, spaces.Box):
            x = np.asarray(observation, dtype=np.float64).reshape(-1)
        else:
            x = np.asarray(spaces.flatten(self.observation_space, observation), dtype=np.float64)
        return self.weights @ ((x - self.center) / self.half) + self.bias

    def act(self, observation: Any) -> Any:
        values = self._values(observation)
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            return int(space.start) + int(np.argmax(values))
        low, high = space.low.astype(np.float64).reshape(-1), space.high.astype(np.float64).reshape(-1)
        finite = np.isfinite(low) & np.isfinite(high)
        span_low, span_high = np.where(finite, low, -1.0), np.where(finite, high, 1.0)
        squashed = span_low + (np.tanh(values) + 1.0) / 2.0 * (span_high - span_low)
        return np.clip(np.where(finite, squashed, values), low, high).reshape(space.shape).astype(space.dtype)


def make_policy(context: Any) -> FamilyPolicy:
    params = json.loads((Path(__file__).parent / "params.json").read_text(encoding="utf-8"))
    return FamilyPolicy(context, {str(k): float(v) for k, v in params.items()})
