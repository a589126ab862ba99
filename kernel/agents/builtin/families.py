"""The generic Program families the hill-climb Agent tunes when the Benchmark ships no tunable Program.

The Agent learns the Benchmark's spaces where any Agent does: the public spec in its task file
(``$EVOLEDGER_TASK_FILE``, the JSON block that :func:`evoledger.kernel.agents.task_text.render_task_text` ends with).
From them it picks a family and writes it into ``program/``: the Policy in ``family_program/policy.py`` and a
``params.json`` of zeros sized for the spaces.

* ``tabular`` for a ``Discrete`` observation: one preference per (state, action);
* ``linear`` for any other observation: the flattened observation, scaled into ``[-1, 1]`` where bounded, times a
  weight matrix plus a bias, one output per action (``Discrete``) or per action dimension (``Box``).

Other action spaces have no family, and neither has an observation with a part no family can flatten (``Text``) or
more than :data:`MAX_LINEAR_FEATURES` features (an image): the Agent then submits the Program unchanged.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "FAMILY_PROGRAM",
    "MAX_LINEAR_FEATURES",
    "Family",
    "family_for",
    "public_spec",
    "target_score",
    "write_family",
]

FAMILY_PROGRAM: Final = Path(__file__).resolve().parent / "family_program"
"""The generic Policy (``policy.py``) every family shares; ``params.json`` says which parameters it has."""

_JSON_BLOCK: Final = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
_TARGET_KEYS: Final = ("reward_threshold", "gymnasium_reward_threshold")
MAX_LINEAR_FEATURES: Final = 1024
"""The most observation features the ``linear`` family weighs (a 64x64x3 image has 12,288: no family)."""


def public_spec(task_file: Path | None) -> dict[str, Any] | None:
    """The Benchmark's public spec from the task file (its last JSON block), or ``None`` if there is none."""
    if task_file is None:
        return None
    try:
        text = task_file.read_text(encoding="utf-8")
    except OSError:
        return None
    for block in reversed(_JSON_BLOCK.findall(text)):
        try:
            data = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "observation_space" in data and "action_space" in data:
            return data
    return None


def target_score(spec: dict[str, Any] | None) -> float | None:
    """The score the Benchmark calls solved, if its metadata declares one (``reward_threshold`` or gymnasium's)."""
    metadata = (spec or {}).get("metadata") or {}
    for key in _TARGET_KEYS:
        value = metadata.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def _flat_size(space: Any) -> int | None:
    """How many features ``gymnasium.spaces.flatten`` makes of a described space (``None``: unknown kind)."""
    if not isinstance(space, dict):
        return None
    kind = space.get("type")
    if kind == "Discrete":
        return int(space["n"])
    if kind == "Box":
        return math.prod(int(n) for n in space["shape"])
    if kind == "MultiBinary":
        return math.prod(int(n) for n in space["n"])
    if kind == "MultiDiscrete":
        return sum(int(n) for n in space["nvec"])
    parts = space.get("spaces")
    if kind in ("Tuple", "Dict") and isinstance(parts, list | dict):
        sizes = [_flat_size(s) for s in (parts.values() if isinstance(parts, dict) else parts)]
        return None if any(n is None for n in sizes) else sum(n for n in sizes if n is not None)
    return None


def _outputs(space: Any) -> int | None:
    if not isinstance(space, dict):
        return None
    if space.get("type") == "Discrete":
        return int(space["n"])
    if space.get("type") == "Box":
        return math.prod(int(n) for n in space["shape"])
    return None


@dataclass(frozen=True, slots=True)
class Family:
    """A generic family sized for one Benchmark: its ``name``, what it maps, and its zero parameters."""

    name: str
    description: str
    params: dict[str, float]


def family_for(spec: dict[str, Any] | None) -> Family | None:
    """The family for the spec's spaces, or ``None`` when there is no spec or no family for its action space."""
    if spec is None:
        return None
    observation, action = spec.get("observation_space"), spec.get("action_space")
    outputs = _outputs(action)
    if outputs is None:
        return None
    if isinstance(observation, dict) and observation.get("type") == "Discrete":
        states = int(observation["n"])
        params = {f"q{s}_{a}": 0.0 for s in range(states) for a in range(outputs)}
        return Family("tabular", f"{states} states x {outputs} actions", params)
    features = _flat_size(observation)
    if features is None or features > MAX_LINEAR_FEATURES:
        return None
    params = {f"w{o}_{i}": 0.0 for o in range(outputs) for i in range(features)}
    params.update({f"b{o}": 0.0 for o in range(outputs)})
    return Family("linear", f"{features} features -> {outputs} outputs", params)


def write_family(program: Path, family: Family) -> None:
    """Replace ``program/policy.py`` by the generic Policy and write the family's ``params.json``."""
    program.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FAMILY_PROGRAM / "policy.py", program / "policy.py")
    (program / "params.json").write_text(json.dumps(family.params, indent=1) + "\n", encoding="utf-8")
