"""AHC054 Treant's Forest stepping speed: turns per second on the largest forests, against a naive simulator.

Run: ``python bench/ahc054_bench.py [--size 40] [--forests 4] [--turns 2048] [--rounds 3]``.

Forests of side ``--size`` (the first generated cases of that size) are played with the shipped heuristic's
first-turn treants (so Episodes run long), each for at most ``--turns`` turns, by:

* ``simulation``: :class:`~evoledger.benchmarks.ahc054_rules.ForestSimulation` alone;
* ``naive``: the same rules with the distances from the target recomputed every turn (a breadth-first search per
  turn, what a direct reading of the statement does) -- the baseline the figures are compared with;
* ``environment``: the Benchmark's Environment ``step`` (the simulation plus the observation and the per-turn
  metrics: the true-map path to the flower, the open-cell count), what a worker runs per turn.

Rounds interleave the three, and the table shows the best round of each (the machine may be loaded).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from evoledger.benchmarks.ahc054 import TreantsForestEnvironment
from evoledger.benchmarks.ahc054_rules import ForestSimulation, _distances, generate_case
from rich.console import Console
from rich.table import Table

_HEURISTIC = Path(__file__).resolve().parents[1] / "benchmarks" / "programs" / "ahc054-heuristic" / "policy.py"


class _NaiveSimulation(ForestSimulation):
    def _distance_from(self, source: int) -> list[int]:
        return _distances(self._neighbours, self.blocked, source)


def _walls() -> Any:
    namespace: dict[str, Any] = {"__name__": "_ahc054_heuristic", "__file__": str(_HEURISTIC)}
    exec(compile(_HEURISTIC.read_text(encoding="utf-8"), str(_HEURISTIC), "exec"), namespace)
    return namespace["make_policy"](None)


def _seeds(size: int, count: int) -> list[int]:
    found: list[int] = []
    seed = 0
    while len(found) < count:
        if generate_case(seed).size == size:
            found.append(seed)
        seed += 1
    return found


def _first_action(seed: int) -> list[tuple[int, int]]:
    case = generate_case(seed)
    observation = {
        "initial": {
            "size": case.size,
            "entrance": list(case.entrance),
            "flower": list(case.flower),
            "trees": [list(c) for c in sorted(case.trees)],
        }
    }
    return [(r, c) for r, c in _walls().act(observation)["placements"]]


def _play(kind: type[ForestSimulation], seed: int, first: list[tuple[int, int]], turns: int) -> tuple[int, float]:
    simulation = kind(generate_case(seed))
    start = time.perf_counter()
    simulation.step(first)
    while not simulation.done and simulation.turn < turns:
        simulation.step([])
    return simulation.turn, time.perf_counter() - start


def _play_environment(seed: int, first: list[tuple[int, int]], turns: int) -> tuple[int, float]:
    env = TreantsForestEnvironment(seed, max_turns=turns)
    env.reset()
    start = time.perf_counter()
    step = env.step({"placements": [list(c) for c in first]})
    steps = 1
    while not (step.terminated or step.truncated):
        step = env.step({"placements": []})
        steps += 1
    return steps, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--forests", type=int, default=4)
    parser.add_argument("--turns", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    seeds = _seeds(args.size, args.forests)
    firsts = {seed: _first_action(seed) for seed in seeds}
    best: dict[str, float] = {}
    turns: dict[str, int] = {}
    for _ in range(args.rounds):
        runs = {
            "simulation": [_play(ForestSimulation, s, firsts[s], args.turns) for s in seeds],
            "naive": [_play(_NaiveSimulation, s, firsts[s], args.turns) for s in seeds],
            "environment": [_play_environment(s, firsts[s], args.turns) for s in seeds],
        }
        for name, results in runs.items():
            steps = sum(n for n, _ in results)
            rate = steps / sum(t for _, t in results)
            best[name] = max(best.get(name, 0.0), rate)
            turns[name] = steps
    table = Table(title=f"AHC054 on {args.forests} forests of {args.size}x{args.size}, at most {args.turns} turns each")
    for column in ("stepper", "turns played", "steps/s (best round)", "x naive"):
        table.add_column(column)
    for name in ("simulation", "naive", "environment"):
        table.add_row(name, str(turns[name]), f"{best[name]:,.0f}", f"{best[name] / best['naive']:.2f}")
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
