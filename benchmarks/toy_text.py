"""Gymnasium's toy-text tasks as Benchmarks: Blackjack, CliffWalking, FrozenLake (4x4 / 8x8, slippery or not), Taxi.

Scores (all maximized; Episodes the Policy failed count as the worst return a running Policy could get, so failing
never pays; infra faults are left out):

* ``blackjack`` (Blackjack-v1): ``mean_return``, the expected payoff per hand (+1 win, 0 draw, -1 loss). A payoff
  says more than a win rate because draws and (with ``natural``) 1.5 payouts matter; a failure counts -1.
* ``cliff-walking`` (CliffWalking-v1): ``mean_return`` (-1 per step, -100 per fall into the cliff). The return
  already weighs path length against risk, which a success rate would not; a failure counts
  ``-100 * max_episode_steps``.
* ``frozen-lake`` / ``frozen-lake-8x8`` (FrozenLake-v1): ``success_rate``, the fraction of Episodes that reach the
  goal (the return is 1 at the goal and 0 otherwise, so this is the mean return); a failure counts 0.
* ``taxi`` (Taxi-v4, gymnasium 1.x's current version): ``mean_return`` (+20 delivery, -1 per step, -10 per illegal
  pickup/drop-off), so both speed and correctness count; a failure counts ``-10 * max_episode_steps``.

Observations are plain ints (a state index; the encoding is in ``environment_parameters``) and tuples of ints for
Blackjack. Feedback counts outcomes (``win`` / ``draw`` / ``loss`` / ``bust``; ``reached_goal`` /
``fell_in_hole`` / ``timed_out``; ``delivered``) and per-Episode notes (cliff falls, illegal actions, hits).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from evoledger.benchmarks._shipped import shipped
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymConfig, GymTask
from evoledger.kernel.authoring import CatalogEntry, EpisodeRecord
from pydantic import Field

__all__ = [
    "BENCHMARKS",
    "CATALOG",
    "FROZEN_LAKE_MAPS",
    "Blackjack",
    "BlackjackConfig",
    "CliffWalking",
    "CliffWalkingConfig",
    "FrozenLake",
    "FrozenLakeConfig",
    "Taxi",
    "TaxiConfig",
    "make_blackjack",
    "make_cliff_walking",
    "make_frozen_lake",
    "make_frozen_lake_8x8",
    "make_taxi",
]

FROZEN_LAKE_MAPS: Final[dict[str, tuple[str, ...]]] = {
    "4x4": ("SFFF", "FHFH", "FFFH", "HFFG"),
    "8x8": ("SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF", "FHFFHFHF", "FFFHFFFG"),
}
"""Gymnasium's named FrozenLake maps (S start, F frozen, H hole, G goal), rows top to bottom."""

TAXI_MAP: Final = (
    "+---------+",
    "|R: | : :G|",
    "| : | : : |",
    "| : : : : |",
    "| | : | : |",
    "|Y| : |B: |",
    "+---------+",
)
TAXI_LOCATIONS: Final = {"R": [0, 0], "G": [0, 4], "Y": [4, 0], "B": [4, 3]}

_FAILURE_NOTE: Final = "Episodes the Policy failed count as {worst}; infra faults are left out"


def _rewards(record: EpisodeRecord) -> list[float] | None:
    if record.trajectory is None:
        return None
    try:
        return [float(r) for r in record.trajectory.rewards]
    except (TypeError, ValueError):
        return None


class BlackjackConfig(GymConfig):
    """Blackjack rules: ``natural`` pays 1.5 for a natural blackjack; ``sab`` follows Sutton and Barto."""

    natural: bool = False
    sab: bool = True


class Blackjack(GymBenchmark):
    """Blackjack-v1; outcomes ``win`` / ``draw`` / ``loss`` / ``bust``; note ``hits``."""

    def outcome(self, record: EpisodeRecord) -> str:
        if not record.terminated:
            return "timed_out"
        if record.episode_return > 0:
            return "win"
        if record.episode_return == 0:
            return "draw"
        actions = record.trajectory.actions if record.trajectory is not None else ()
        return "bust" if actions and actions[-1] == 1 else "loss"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        if record.trajectory is None:
            return {}
        return {"hits": float(sum(1 for a in record.trajectory.actions if a == 1))}


def make_blackjack(**config: Any) -> Blackjack:
    """``blackjack``: one hand per Episode; score = mean payoff, failures count -1."""
    cfg = BlackjackConfig.model_validate(config)
    steps = cfg.max_episode_steps or 20
    return Blackjack(
        GymTask(
            benchmark_id="blackjack",
            programs=shipped("blackjack"),
            gymnasium_id="Blackjack-v1",
            description=(
                "Play one hand of Blackjack against the dealer per Episode (gymnasium Blackjack-v1, "
                f"natural={cfg.natural}, sab={cfg.sab}). Observation: a tuple (player sum 0-31, dealer's showing "
                "card 1-10 with 1 = ace, usable ace 0/1). Actions: 0 stick, 1 hit. Reward at the end: +1 win, 0 "
                "draw, -1 loss or bust (1.5 for a natural win when natural=True). Score (mean_return, maximize): "
                f"mean payoff per hand; {_FAILURE_NOTE.format(worst=-1.0)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean payoff per hand; {_FAILURE_NOTE.format(worst=-1.0)}",
            failure_return=-1.0,
            max_episode_steps=steps,
            env_kwargs={"natural": cfg.natural, "sab": cfg.sab},
        )
    )


class CliffWalkingConfig(GymConfig):
    """CliffWalking: ``is_slippery`` makes each move go sideways with probability 2/3."""

    is_slippery: bool = False


class CliffWalking(GymBenchmark):
    """CliffWalking-v1; outcomes ``reached_goal`` / ``timed_out``; note and step metric ``cliff_falls``."""

    def step_metrics(self, observation: Any, reward: float, terminated: bool, truncated: bool) -> dict[str, float]:
        return {"cliff_fall": 1.0 if reward <= -100 else 0.0}

    def outcome(self, record: EpisodeRecord) -> str:
        return "reached_goal" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        rewards = _rewards(record)
        return {} if rewards is None else {"cliff_falls": float(sum(1 for r in rewards if r <= -100))}


def make_cliff_walking(**config: Any) -> CliffWalking:
    """``cliff-walking``: cross a 4x12 grid past a cliff; score = mean return, failures count -100 per step."""
    cfg = CliffWalkingConfig.model_validate(config)
    steps = cfg.max_episode_steps or 200
    worst = float(-100 * steps)
    return CliffWalking(
        GymTask(
            benchmark_id="cliff-walking",
            programs=shipped("cliff-walking"),
            gymnasium_id="CliffWalking-v1",
            description=(
                "Walk from the bottom-left to the bottom-right corner of a 4x12 grid without stepping into the "
                f"cliff between them (gymnasium CliffWalking-v1, is_slippery={cfg.is_slippery}). Observation: the "
                "state row * 12 + column (start 36, goal 47, cliff 37-46). Actions: 0 up, 1 right, 2 down, 3 left. "
                "Reward -1 per step and -100 for a fall, which sends the walker back to the start; the Episode "
                f"terminates at the goal and is truncated after {steps} steps. Score (mean_return, maximize): "
                f"mean Episode return; {_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={"is_slippery": cfg.is_slippery},
            public_parameters={
                "shape": [4, 12],
                "start": [3, 0],
                "goal": [3, 11],
                "cliff": [[3, c] for c in range(1, 11)],
                "state_encoding": "row * 12 + column",
                "actions": ["up", "right", "down", "left"],
            },
        )
    )


class FrozenLakeConfig(GymConfig):
    """FrozenLake: a named map and whether the ice is slippery (the intended move then happens 1/3 of the time)."""

    map_name: Literal["4x4", "8x8"] = Field(default="4x4", description="Gymnasium's named map: '4x4' or '8x8'.")
    is_slippery: bool = True


class FrozenLake8x8Config(GymConfig):
    """``frozen-lake-8x8``: the 8x8 map; only slipperiness and the step limit are configurable."""

    is_slippery: bool = True


class FrozenLake(GymBenchmark):
    """FrozenLake-v1; outcomes ``reached_goal`` / ``fell_in_hole`` / ``timed_out``; step metric ``success``."""

    def step_metrics(self, observation: Any, reward: float, terminated: bool, truncated: bool) -> dict[str, float]:
        return {"success": 1.0 if reward > 0 else 0.0}

    def outcome(self, record: EpisodeRecord) -> str:
        if not record.terminated:
            return "timed_out"
        return "reached_goal" if record.episode_return > 0 else "fell_in_hole"


def _frozen_lake(benchmark_id: str, map_name: str, is_slippery: bool, max_episode_steps: int | None) -> FrozenLake:
    rows = FROZEN_LAKE_MAPS[map_name]
    steps = max_episode_steps or (100 if map_name == "4x4" else 200)
    size = len(rows)
    return FrozenLake(
        GymTask(
            benchmark_id=benchmark_id,
            gymnasium_id="FrozenLake-v1",
            programs=shipped("frozen-lake"),  # its Programs read the map: one family serves every size
            description=(
                f"Cross a frozen lake from S to G without falling into a hole H (gymnasium FrozenLake-v1, "
                f"{map_name} map, is_slippery={is_slippery}; the map is in environment_parameters['map']). "
                f"Observation: the state row * {size} + column. Actions: 0 left, 1 down, 2 right, 3 up; on "
                "slippery ice the intended move happens with probability 1/3 and each perpendicular move with "
                "1/3. Reward 1 at the goal, else 0; the Episode terminates at the goal or in a hole and is "
                f"truncated after {steps} steps. Score (success_rate, maximize): fraction of Episodes reaching "
                f"the goal; {_FAILURE_NOTE.format(worst=0)}."
            ),
            primary_metric="success_rate",
            score_rule=f"fraction of Episodes reaching the goal; {_FAILURE_NOTE.format(worst=0)}",
            failure_return=0.0,
            max_episode_steps=steps,
            env_kwargs={"map_name": map_name, "is_slippery": is_slippery},
            public_parameters={
                "map": list(rows),
                "state_encoding": f"row * {size} + column",
                "actions": ["left", "down", "right", "up"],
            },
            metadata={"gymnasium_reward_threshold": 0.7 if map_name == "4x4" else 0.85},
        )
    )


def make_frozen_lake(**config: Any) -> FrozenLake:
    """``frozen-lake``: configurable ``map_name`` ('4x4' / '8x8') and ``is_slippery``; score = success rate."""
    cfg = FrozenLakeConfig.model_validate(config)
    return _frozen_lake("frozen-lake", cfg.map_name, cfg.is_slippery, cfg.max_episode_steps)


def make_frozen_lake_8x8(**config: Any) -> FrozenLake:
    """``frozen-lake-8x8``: the 8x8 map; configurable ``is_slippery``; score = success rate."""
    cfg = FrozenLake8x8Config.model_validate(config)
    return _frozen_lake("frozen-lake-8x8", "8x8", cfg.is_slippery, cfg.max_episode_steps)


class TaxiConfig(GymConfig):
    """Taxi variants: ``is_rainy`` makes moves slip sideways; ``fickle_passenger`` may change destination once."""

    is_rainy: bool = False
    fickle_passenger: bool = False


class Taxi(GymBenchmark):
    """Taxi-v4; outcomes ``delivered`` / ``timed_out``; note and step metric ``illegal_actions``."""

    def step_metrics(self, observation: Any, reward: float, terminated: bool, truncated: bool) -> dict[str, float]:
        return {"illegal_action": 1.0 if reward <= -10 else 0.0}

    def outcome(self, record: EpisodeRecord) -> str:
        return "delivered" if record.terminated else "timed_out"

    def episode_notes(self, record: EpisodeRecord) -> dict[str, float]:
        rewards = _rewards(record)
        return {} if rewards is None else {"illegal_actions": float(sum(1 for r in rewards if r <= -10))}


def make_taxi(**config: Any) -> Taxi:
    """``taxi``: pick up and deliver a passenger; score = mean return, failures count -10 per step."""
    cfg = TaxiConfig.model_validate(config)
    steps = cfg.max_episode_steps or 200
    worst = float(-10 * steps)
    return Taxi(
        GymTask(
            benchmark_id="taxi",
            programs=shipped("taxi"),
            gymnasium_id="Taxi-v4",
            description=(
                "Drive a taxi on a 5x5 grid with walls (environment_parameters['map']) to the passenger, pick them "
                "up and drop them off at their destination (gymnasium Taxi-v4, "
                f"is_rainy={cfg.is_rainy}, fickle_passenger={cfg.fickle_passenger}). Observation: the state "
                "((taxi_row * 5 + taxi_col) * 5 + passenger_location) * 4 + destination, where locations 0-3 are "
                "R, G, Y, B (environment_parameters['locations']) and passenger_location 4 means in the taxi. "
                "Actions: 0 south, 1 north, 2 east, 3 west, 4 pick up, 5 drop off. Reward -1 per step, +20 for "
                f"a delivery (terminated), -10 for an illegal pick-up or drop-off; truncated after {steps} steps. "
                f"Score (mean_return, maximize): mean Episode return; {_FAILURE_NOTE.format(worst=worst)}."
            ),
            primary_metric="mean_return",
            score_rule=f"mean return; {_FAILURE_NOTE.format(worst=worst)}",
            failure_return=worst,
            max_episode_steps=steps,
            env_kwargs={"is_rainy": cfg.is_rainy, "fickle_passenger": cfg.fickle_passenger},
            public_parameters={
                "map": list(TAXI_MAP),
                "locations": dict(TAXI_LOCATIONS),
                "location_order": ["R", "G", "Y", "B"],
                "state_encoding": "((taxi_row * 5 + taxi_col) * 5 + passenger_location) * 4 + destination",
                "actions": ["south", "north", "east", "west", "pickup", "dropoff"],
            },
            metadata={"gymnasium_reward_threshold": 8.0},
        )
    )


BENCHMARKS = {
    "toy-text/blackjack": make_blackjack,
    "toy-text/cliff-walking": make_cliff_walking,
    "toy-text/frozen-lake": make_frozen_lake,
    "toy-text/frozen-lake-8x8": make_frozen_lake_8x8,
    "toy-text/taxi": make_taxi,
}

CATALOG = (
    CatalogEntry(
        "toy-text/blackjack", "toy-text", "Blackjack-v1: hit or stick against the dealer", None, ("blackjack",)
    ),
    CatalogEntry(
        "toy-text/cliff-walking",
        "toy-text",
        "CliffWalking-v1: walk along a cliff edge to the goal without falling",
        None,
        ("cliff-walking",),
    ),
    CatalogEntry(
        "toy-text/frozen-lake",
        "toy-text",
        "FrozenLake-v1: cross slippery ice to the goal, avoiding holes (4x4 map, configurable)",
        None,
        ("frozen-lake",),
    ),
    CatalogEntry(
        "toy-text/frozen-lake-8x8",
        "toy-text",
        "FrozenLake-v1 on the 8x8 map: cross slippery ice to the goal, avoiding holes",
        None,
        ("frozen-lake-8x8",),
    ),
    CatalogEntry("toy-text/taxi", "toy-text", "Taxi-v4: pick a passenger up and drop them off", None, ("taxi",)),
)
"""The catalogue rows of :data:`BENCHMARKS`: the core install runs them (no extra); old names are aliases."""
