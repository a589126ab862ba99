"""Contest stepping: AHC057 Molecules and AHC058 Apple Incremental Game, in-process and through evaluate().

Run: ``python bench/contest_stepping_bench.py [--episodes 4] [--repeat 2]``. Everything is measured in this process,
interleaved, and printed as steps/s and as a ratio to CartPole measured the same way in the same run (the machine is
noisy: compare ratios, run it a few times).

* in-process: the Environment alone, the trivial baseline's actions (AHC057: the 290 block bonds on turn 0, then
  empty sets; AHC058: always wait), no Policy process;
* evaluate(): the shipped baseline Program in its Policy process, trajectories recorded (CartPole: its heuristic,
  whose Episodes last 500 steps, so that per-step costs dominate there too);
* the recorded trajectory's size per step (canonical encoding, before zstd).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
from evoledger.benchmarks.ahc057 import MoleculesEnvironment
from evoledger.benchmarks.ahc058 import AppleEnvironment
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.ledger.trajectories import Trajectory, encode_trajectory
from rich.console import Console
from rich.table import Table

AHC057 = "atcoder/ahc057-molecules"
AHC058 = "atcoder/ahc058-apple-incremental-game"
CARTPOLE = "classic-control/cartpole"
BLOCKS = [[i, i + 1] for i in range(299) if (i + 1) % 30 != 0]


def _molecules_action(turn: int) -> Any:
    return {"bonds": BLOCKS if turn == 0 else []}


def _apple_action(turn: int) -> Any:
    return None


def _contest_in_process(make: Callable[[int], Any], action: Callable[[int], Any], episodes: int) -> float:
    steps = 0
    start = time.perf_counter()
    for seed in range(episodes):
        env = make(seed)
        env.reset()
        turn, done = 0, False
        while not done:
            done = env.step(action(turn)).terminated
            turn += 1
        steps += turn
    return steps / (time.perf_counter() - start)


def _cartpole_in_process(episodes: int) -> float:
    env = gym.make("CartPole-v1")
    steps = 0
    start = time.perf_counter()
    for i in range(episodes):
        env.reset(seed=i)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(steps % 2)
            steps += 1
            done = terminated or truncated
    return steps / (time.perf_counter() - start)


def _through_evaluate(name: str, episodes: int, record_to: Path) -> float:
    programs = benchmark_programs(default_registry().make(name))
    program = (programs.heuristic or programs.baseline) if name == CARTPOLE else programs.baseline
    config = EvaluationConfig(episodes=episodes, seed=1)
    with LocalExecutor(BenchmarkRef(name=name)) as executor:  # start-up not timed
        start = time.perf_counter()
        result = evaluate(program, name, config=config, record_to=record_to, executor=executor)
        elapsed = time.perf_counter() - start
    return sum(e.steps for e in result.episodes) / elapsed


def _bytes_per_step(make: Callable[[int], Any], action: Callable[[int], Any]) -> float:
    env = make(0)
    observations: list[Any] = [env.reset()]
    actions: list[Any] = []
    rewards: list[float] = []
    done = False
    while not done:
        actions.append(action(len(actions)))
        step = env.step(actions[-1])
        observations.append(step.observation)
        rewards.append(step.reward)
        done = step.terminated
    return len(encode_trajectory(Trajectory(observations, actions, rewards, True, False))) / len(actions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            cartpole = _cartpole_in_process(args.episodes * 40)
            rows.setdefault("CartPole in-process", []).append(cartpole)
            rows.setdefault("AHC057 in-process", []).append(
                _contest_in_process(MoleculesEnvironment, _molecules_action, args.episodes)
            )
            rows.setdefault("AHC058 in-process", []).append(
                _contest_in_process(AppleEnvironment, _apple_action, args.episodes)
            )
            for label, name in (("CartPole", CARTPOLE), ("AHC057", AHC057), ("AHC058", AHC058)):
                rate = _through_evaluate(name, args.episodes, Path(tmp) / f"{label}-{r}")
                rows.setdefault(f"{label} evaluate()", []).append(rate)
    table = Table(title=f"contest stepping ({args.episodes} Episodes, {args.repeat} rounds; median)")
    for column in ("path", "steps/s", "x CartPole same path"):
        table.add_column(column)
    for label, rates in rows.items():
        path = label.partition(" ")[2]
        reference = statistics.median(rows[f"CartPole {path}"])
        rate = statistics.median(rates)
        table.add_row(label, f"{rate:,.0f}", f"{rate / reference:.2f}")
    console = Console()
    console.print(table)
    console.print(
        f"AHC057 trajectory: {_bytes_per_step(MoleculesEnvironment, _molecules_action):,.0f} bytes/step recorded; "
        f"AHC058: {_bytes_per_step(AppleEnvironment, _apple_action):,.0f} bytes/step recorded (before zstd)"
    )


if __name__ == "__main__":
    main()
