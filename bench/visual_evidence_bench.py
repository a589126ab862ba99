"""What visual evidence costs a Feedback: ``feedback()`` with contact sheets vs the same Benchmark without.

The Episodes are played in-process with a fixed controller (CartPole: a balancing rule, so some Episodes last the
full 500 steps; other Benchmarks: seeded random actions), and Feedback is computed over records as the Host hands
them to a Run's ``feedback()`` (the first five with their trajectory and spec). Prints the time per Feedback of
both, their ratio and the bulk bytes the sheets add.

    python bench/visual_evidence_bench.py                      # CartPole, 10 Episodes
    python bench/visual_evidence_bench.py --benchmark lunar    # LunarLander-v3 (box2d)
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import numpy as np
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import EpisodeRecord, Trajectory
from evoledger.kernel.authoring.conformance_episodes import jsonable

TRACED = 5  # kernel.run.records.TRACE_RECORDS


def _benchmark(name: str, steps: int) -> tuple[GymBenchmark, GymBenchmark]:
    from evoledger.benchmarks.classic_control import make_cartpole

    if name == "cartpole":
        plain: GymBenchmark = make_cartpole(max_episode_steps=steps)
    else:
        task = GymTask(
            benchmark_id="lunar",
            gymnasium_id="LunarLander-v3",
            description="LunarLander-v3",
            primary_metric="mean_return",
            score_rule="mean return",
            failure_return=-1000.0,
            max_episode_steps=steps,
        )
        plain = GymBenchmark(task)
    rendered = type(plain)(dataclasses.replace(plain.task, visual_evidence=VisualEvidence()))
    return plain, rendered


def _records(benchmark: GymBenchmark, count: int) -> list[EpisodeRecord]:
    records = []
    for spec in benchmark.episodes("train", seed=1, count=count):
        rng = np.random.default_rng(spec.index)
        env = benchmark.make_environment(spec)
        observation: Any = env.reset()
        observations, actions, rewards = [jsonable(observation)], [], []
        while True:
            if benchmark.task.gymnasium_id == "CartPole-v1" and spec.index % 2:
                action = int(observation[2] + 0.5 * observation[3] > 0)
            else:
                action = int(rng.integers(int(benchmark.action_space.n)))  # type: ignore[attr-defined]
            step = env.step(action)
            observation = step.observation
            actions.append(action)
            rewards.append(step.reward)
            observations.append(jsonable(observation))
            if step.terminated or step.truncated:
                break
        env.close()
        traced = spec.index < TRACED
        trajectory = Trajectory(observations, actions, rewards, step.terminated, step.truncated)
        records.append(
            EpisodeRecord(
                split="train",
                index=spec.index,
                status="ok",
                episode_return=float(sum(rewards)),
                steps=len(actions),
                terminated=step.terminated,
                truncated=step.truncated,
                trajectory=trajectory if traced else None,
                episode=spec if traced else None,
            )
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", choices=("cartpole", "lunar"), default="cartpole")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--steps", type=int, default=500, help="max_episode_steps")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plain, rendered = _benchmark(args.benchmark, args.steps)
    records = _records(plain, args.episodes)
    rendered.feedback(records)  # warm up: the renderer's import and first window, fonts
    timings = {}
    for label, benchmark in (("plain", plain), ("visual", rendered)):
        start = time.perf_counter()
        for _ in range(args.repeat):
            feedback = benchmark.feedback(records)
        timings[label] = ((time.perf_counter() - start) / args.repeat, sum(len(a.data) for a in feedback.artifacts))
    (plain_s, plain_bytes), (visual_s, visual_bytes) = timings["plain"], timings["visual"]
    print(f"{args.benchmark}: Episode steps {[r.steps for r in records]}")
    print(f"feedback() plain {plain_s * 1000:.1f} ms, with visual evidence {visual_s * 1000:.1f} ms")
    print(f"visual / plain: {visual_s / plain_s:.1f}x per Feedback; sheets add {visual_bytes - plain_bytes} bulk bytes")
    print(f"notes: {feedback.content['visual_evidence']['notes']}")


if __name__ == "__main__":
    main()
