"""Which Policy ABIs exist, and which Benchmarks accept ``--policy-abi evopolicygym`` with which encoding.

Standard library only: the coordinator checks a choice here before anything is created, without importing the
conversions or gymnasium. An encoding names how the Benchmark's observation is presented to an EvoPolicyGym
Program (its family section of that project's catalogue):

* ``list``: a Box observation as a list of floats (CartPole: cart position, cart velocity, pole angle, pole angular
  velocity);
* ``named``: a Box observation as a dict of named floats (MountainCar: position, velocity; Pendulum: cos_theta,
  sin_theta, theta_angular_velocity);
* ``tuple-named``: a Tuple observation as a dict of named ints and bools (Blackjack: player_sum, dealer_showing,
  usable_ace);
* ``grid``: a Discrete grid state as ``state``, ``row``, ``column`` and ``tile`` (FrozenLake, from the map in the
  environment parameters);
* ``tensors``: arrays as ``TensorValue``, dicts as dicts of their converted values, ints, floats and strings as they
  are (MiniGrid and BabyAI: ``image`` uint8 [7,7,3], ``direction``, ``mission``; CarRacing, Crafter and ALE Tetris
  RGB images; HighwayEnv tensors and goal dicts; ViZDoom's ``screen``, ``gamevariables``, ``audio``, ``notifications``;
  Gymnasium-Robotics' ``observation`` / ``achieved_goal`` / ``desired_goal`` dicts and Adroit's one array);
* ``json``: JSON-like values as plain data, numpy arrays as nested lists (the AtCoder contests: dicts of ints, lists
  and ``None``; AHC057's positions, velocities and components as the lists EvoPolicyGym gives).

Benchmarks whose EvoPolicyGym encoding is not pinned by name (Acrobot's six keys, LunarLander, BipedalWalker, MuJoCo's
named blocks, CliffWalking's and Taxi's tiles, Crafter's symbolic view) are refused rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from evoledger.ledger.errors import ConfigError

__all__ = [
    "DEFAULT_POLICY_ABI",
    "POLICY_ABIS",
    "ObservationEncoding",
    "PolicyAbi",
    "check_abi_program",
    "check_policy_abi",
    "evopolicygym_encoding",
    "evopolicygym_names",
    "policy_abis_of",
]

PolicyAbi = Literal["evoledger", "evopolicygym"]
POLICY_ABIS: Final[tuple[str, ...]] = ("evoledger", "evopolicygym")
DEFAULT_POLICY_ABI: Final = "evoledger"
"""The kernel's own contract: gymnasium spaces in the context, observations as the Environment produced them."""


@dataclass(frozen=True, slots=True)
class ObservationEncoding:
    """How one Benchmark's observations are presented to an EvoPolicyGym Program (see the module docstring)."""

    kind: Literal["list", "named", "tuple-named", "grid", "tensors", "json"]
    names: tuple[str, ...] = ()
    """The names of the Box's items (``list``, ``named``) or of the Tuple's parts (``tuple-named``)."""
    kinds: tuple[str, ...] = ()
    """``tuple-named``: ``int`` or ``bool`` per part."""


_TENSORS: Final = ObservationEncoding("tensors")
_GRID: Final = ObservationEncoding("grid")
_POSITION_VELOCITY: Final = ObservationEncoding("named", ("position", "velocity"))
_BY_NAME: Final[dict[str, ObservationEncoding]] = {
    "classic-control/cartpole": ObservationEncoding(
        "list", ("cart_position", "cart_velocity", "pole_angle", "pole_angular_velocity")
    ),
    "classic-control/mountain-car": _POSITION_VELOCITY,
    "classic-control/mountain-car-continuous": _POSITION_VELOCITY,
    "classic-control/pendulum": ObservationEncoding("named", ("cos_theta", "sin_theta", "theta_angular_velocity")),
    "toy-text/blackjack": ObservationEncoding(
        "tuple-named", ("player_sum", "dealer_showing", "usable_ace"), ("int", "int", "bool")
    ),
    "toy-text/frozen-lake": _GRID,
    "toy-text/frozen-lake-8x8": _GRID,
    "box2d/car-racing": _TENSORS,
    "crafter/achievement-score": _TENSORS,
    "ale/tetris": _TENSORS,
}
_BY_FAMILY: Final[dict[str, ObservationEncoding]] = {
    "minigrid/": _TENSORS,
    "babyai/": _TENSORS,
    "highway/": _TENSORS,
    "vizdoom/": _TENSORS,
    "robotics/": _TENSORS,
    "atcoder/": ObservationEncoding("json"),
}


def evopolicygym_encoding(benchmark: str) -> ObservationEncoding | None:
    """The EvoPolicyGym encoding of the registered Benchmark ``benchmark`` (its canonical name), or None."""
    found = _BY_NAME.get(benchmark)
    if found is not None:
        return found
    for prefix, encoding in _BY_FAMILY.items():
        if benchmark.startswith(prefix):
            return encoding
    return None


def evopolicygym_names() -> str:
    """The Benchmarks that accept ``--policy-abi evopolicygym``, in one line (families as ``family/*``)."""
    return ", ".join([*_BY_NAME, *(f"{prefix}*" for prefix in _BY_FAMILY)])


def policy_abis_of(benchmark: str) -> tuple[str, ...]:
    """The Policy ABIs ``--policy-abi`` accepts for the registered Benchmark ``benchmark`` (its canonical name)."""
    return (
        (DEFAULT_POLICY_ABI, "evopolicygym") if evopolicygym_encoding(benchmark) is not None else (DEFAULT_POLICY_ABI,)
    )


def check_policy_abi(policy_abi: str, benchmark: str) -> None:
    """Refuse ``policy_abi`` for the Benchmark named ``benchmark`` (a registered name or alias) unless it has it.

    The default ABI fits every Benchmark and costs nothing here; ``evopolicygym`` needs the registry (to resolve an
    alias) and an encoding for that Benchmark."""
    if policy_abi == DEFAULT_POLICY_ABI:
        return
    if policy_abi not in POLICY_ABIS:
        raise ConfigError(f"--policy-abi {policy_abi!r} is not one of {', '.join(POLICY_ABIS)}")
    from evoledger.kernel.registry import default_registry  # only for a non-default ABI

    registry = default_registry()
    canonical = registry.canonical(benchmark) if registry.knows(benchmark) else benchmark
    if evopolicygym_encoding(canonical) is None:
        raise ConfigError(
            f"--policy-abi evopolicygym: Benchmark {benchmark!r} has no EvoPolicyGym encoding; it is accepted by "
            f"{evopolicygym_names()} (or use the default --policy-abi evoledger)"
        )


def check_abi_program(policy_abi: str, program: object | None) -> None:
    """Refuse a Run under an ABI other than the default without a Program of its own (``--program``): the
    Benchmarks' starting Programs are written to the default ABI (gymnasium spaces, numpy observations)."""
    if policy_abi != DEFAULT_POLICY_ABI and program is None:
        raise ConfigError(
            f"--policy-abi {policy_abi} needs --program DIR, a Program written to that ABI: the Benchmark's starting "
            "Programs are written to the default --policy-abi evoledger"
        )
