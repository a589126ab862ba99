"""evaluate() with full trajectory recording vs the same CartPole Episodes stepped in-process by gymnasium.

Run: ``python bench/evaluate_bench.py [--episodes 200] [--workers 1]``. Both are measured in this process,
one after the other, and printed as a ratio (the machine is noisy: run it a few times).

* trivial Policy (always action 0): short Episodes, so per-Episode costs dominate (Policy process, Environment,
  trajectory Object, two ledger Events);
* heuristic Policy (500-step Episodes): steps/s through the Policy process, recording included.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from rich.console import Console
from rich.table import Table

TRIVIAL = "def make_policy(context):\n    class P:\n        def act(self, o):\n            return 0\n    return P()\n"
HEURISTIC = (
    "def make_policy(context):\n    class P:\n        def act(self, o):\n"
    "            return 1 if o[2] + 0.5 * o[3] > 0 else 0\n    return P()\n"
)


def _in_process(episodes: int, heuristic: bool) -> tuple[float, int]:
    env = gym.make("CartPole-v1")
    steps = 0
    start = time.perf_counter()
    for i in range(episodes):
        obs, _ = env.reset(seed=i)
        done = False
        while not done:
            action = (1 if obs[2] + 0.5 * obs[3] > 0 else 0) if heuristic else 0
            obs, _, terminated, truncated, _ = env.step(action)
            steps += 1
            done = terminated or truncated
    return time.perf_counter() - start, steps


def _evaluate(program: Path, episodes: int, workers: int, record_to: Path) -> tuple[float, int]:
    config = EvaluationConfig(episodes=episodes, workers=workers)
    with LocalExecutor(BenchmarkRef(name="cartpole"), workers=workers) as executor:  # start-up not timed
        start = time.perf_counter()
        result = evaluate(program, "cartpole", config=config, record_to=record_to, executor=executor)
        elapsed = time.perf_counter() - start
    return elapsed, sum(e.steps for e in result.episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--long-episodes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    table = Table(title=f"evaluate() vs in-process gymnasium (CartPole, workers={args.workers})")
    for column in ("case", "evoledger", "in-process", "ratio", "per Episode / steps/s"):
        table.add_column(column)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name, source, episodes, heuristic in (
            ("trivial Policy", TRIVIAL, args.episodes, False),
            ("500-step heuristic", HEURISTIC, args.long_episodes, True),
        ):
            program = root / name.replace(" ", "-")
            program.mkdir()
            (program / "policy.py").write_text(source, encoding="utf-8")
            ours, steps = _evaluate(program, episodes, args.workers, root / f"{program.name}-record")
            base, base_steps = _in_process(episodes, heuristic)
            per_episode_ms = (ours - base) / episodes * 1000
            rate = f"{per_episode_ms:.1f} ms overhead" if not heuristic else f"{steps / ours:,.0f} steps/s"
            table.add_row(
                f"{name} x{episodes}",
                f"{ours:.3f} s",
                f"{base:.3f} s ({base_steps} steps)",
                f"{ours / base:.1f}x",
                rate,
            )
    Console().print(table)


if __name__ == "__main__":
    main()
