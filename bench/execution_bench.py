"""Measure the execution layer: per-Episode overhead, steps/s through the Policy process, worker scaling.

Run with ``python bench/execution_bench.py`` (``--quick`` for a fast smoke run). Prints absolute figures
and ratios against the targets:

1. per-Episode overhead of a trivial 1-step Episode through ``LocalExecutor`` vs a new ``python`` per
   Episode (a subprocess that imports gymnasium and runs one Episode) — target < 15 ms;
2. steps/s through the Policy process on 500-step Episodes (``toy-counter`` and, when registered,
   ``cartpole``) vs stepping the same Environment in-process — target >= 10k steps/s;
3. throughput with ``workers=2`` vs ``workers=1`` — target close to 2x;
4. ``isolation="bwrap"`` vs ``"local"`` measured in the same run, alternating: the per-Episode cost of short
   CartPole Episodes and steps/s on long ones — target <= 2x the local per-Episode cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.kernel.registry import BenchmarkRef, default_registry, resolve_benchmark

TRIVIAL_POLICY = """
class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    return _Policy()
"""

CARTPOLE_POLICY = """
class _Policy:
    def act(self, observation):
        return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def make_policy(context):
    return _Policy()
"""

LEFT_ONLY_POLICY = """
class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    return _Policy()
"""

NEW_INTERPRETER = """
import gymnasium, numpy
from evoledger.benchmarks.toy import make_toy_counter
benchmark = make_toy_counter(max_episode_steps=1)
env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
env.reset()
env.step(0)
env.close()
"""


def _program(root: Path, name: str, source: str) -> Path:
    directory = root / name
    directory.mkdir()
    (directory / "policy.py").write_text(source, encoding="utf-8")
    return directory


def _tasks(ref: BenchmarkRef, program: Path, count: int) -> list[EpisodeTask]:
    episodes = resolve_benchmark(ref).episodes("train", seed=0, count=count)
    limits = PolicyLimits(act_timeout_seconds=5.0)
    return [EpisodeTask(episode=e, program_dir=program, policy_seed=e.index, limits=limits) for e in episodes]


def _run(executor: LocalExecutor, tasks: list[EpisodeTask]) -> tuple[float, list[EpisodeOutcome]]:
    began = time.perf_counter()
    outcomes = list(executor.run(tasks))
    elapsed = time.perf_counter() - began
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        raise SystemExit(f"benchmark Episodes failed: {bad[0].status}: {bad[0].failure_message}")
    return elapsed, outcomes


def _median_of(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def overhead(root: Path, episodes: int, runs: int) -> None:
    ref = BenchmarkRef(name="toy-counter", config={"max_episode_steps": 1})
    program = _program(root, "trivial", TRIVIAL_POLICY)
    tasks = _tasks(ref, program, episodes)
    with LocalExecutor(ref, workers=1) as executor:
        _run(executor, tasks[:20])  # warm up
        per_episode = _median_of(runs, lambda: _run(executor, tasks)[0] / episodes)
        outcomes = _run(executor, tasks)[1]
    policy_ms = statistics.median(o.policy_seconds for o in outcomes) * 1000
    wall_ms = statistics.median(o.wall_seconds for o in outcomes) * 1000

    def fresh() -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", NEW_INTERPRETER], check=True)
        return time.perf_counter() - began

    fresh_seconds = _median_of(max(3, runs * 2), fresh)
    print("1. per-Episode overhead (trivial 1-step toy-counter Episode)")
    print(f"   LocalExecutor(workers=1): {per_episode * 1000:7.2f} ms/Episode end to end (target < 15 ms)")
    print(f"      inside the worker: median wall {wall_ms:.2f} ms, of which waiting for the Policy {policy_ms:.2f} ms")
    print(f"   new python per Episode:   {fresh_seconds * 1000:7.2f} ms/Episode")
    print(f"   ratio: {fresh_seconds / per_episode:.1f}x cheaper than a new interpreter")


def _in_process_toy(steps: int) -> float:
    benchmark = resolve_benchmark(BenchmarkRef(name="toy-counter", config=_LONG_TOY))
    episodes = benchmark.episodes("train", seed=0, count=steps // 500 + 1)
    count = 0
    began = time.perf_counter()
    for episode in episodes:
        env = benchmark.make_environment(episode)
        env.reset()
        done = False
        while not done:
            step = env.step(0)
            count += 1
            done = step.terminated or step.truncated
        env.close()
    return count / (time.perf_counter() - began)


def _in_process_cartpole(steps: int) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    observation, _ = env.reset(seed=0)
    count = 0
    began = time.perf_counter()
    while count < steps:
        action = 1 if observation[2] + 0.5 * observation[3] > 0 else 0
        observation, _reward, terminated, truncated, _ = env.step(action)
        count += 1
        if terminated or truncated:
            observation, _ = env.reset()
    return count / (time.perf_counter() - began)


_LONG_TOY: dict[str, Any] = {"max_episode_steps": 500, "terminate_on_hit": False}


def throughput(root: Path, episodes: int, runs: int) -> None:
    print("2. steps/s through the Policy process (500-step Episodes, workers=1)")
    cases: list[tuple[str, BenchmarkRef, str, Callable[[int], float]]] = [
        ("toy-counter", BenchmarkRef(name="toy-counter", config=_LONG_TOY), TRIVIAL_POLICY, _in_process_toy)
    ]
    if "cartpole" in default_registry().names():
        cases.append(("cartpole", BenchmarkRef(name="cartpole"), CARTPOLE_POLICY, _in_process_cartpole))
    for name, ref, source, in_process in cases:
        program = _program(root, f"steps-{name}", source)
        tasks = _tasks(ref, program, episodes)
        with LocalExecutor(ref, workers=1) as executor:
            _run(executor, tasks[:2])
            rates = []
            for _ in range(runs):
                elapsed, outcomes = _run(executor, tasks)
                rates.append(sum(o.steps for o in outcomes) / elapsed)
        rate = statistics.median(rates)
        local = statistics.median(in_process(20_000) for _ in range(runs))
        print(f"   {name:12s} through the Policy process: {rate:9.0f} steps/s (target >= 10000)")
        print(f"   {name:12s} in-process, no Policy process: {local:9.0f} steps/s  -> ratio {local / rate:.1f}x")


_SPIN = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
began = time.perf_counter()
x = 0
for i in range(5_000_000):
    x += i
print(time.perf_counter() - began)
"""


def _machine_parallelism() -> float:
    """How much faster two pinned CPU-bound processes finish their work than one doing both (ideal: 2x)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return 1.0

    def spin(cpu_list: list[int]) -> float:
        began = time.perf_counter()
        processes = [
            subprocess.Popen([sys.executable, "-c", _SPIN, str(c)], stdout=subprocess.DEVNULL) for c in cpu_list
        ]
        for process in processes:
            process.wait()
        return time.perf_counter() - began

    one = statistics.median(spin([cpus[0]]) for _ in range(3))
    two = statistics.median(spin(cpus[:2]) for _ in range(3))
    return 2 * one / two


def scaling(root: Path, episodes: int, runs: int) -> None:
    ref = BenchmarkRef(name="toy-counter", config=_LONG_TOY)
    program = _program(root, "scaling", TRIVIAL_POLICY)
    tasks = _tasks(ref, program, episodes)
    rates: dict[int, float] = {}
    trajectories: dict[int, list[bytes | None]] = {}
    for workers in (1, 2):
        with LocalExecutor(ref, workers=workers) as executor:
            _run(executor, tasks[:4])
            measured = []
            for _ in range(runs):
                elapsed, outcomes = _run(executor, tasks)
                measured.append(sum(o.steps for o in outcomes) / elapsed)
            trajectories[workers] = [o.trajectory for o in outcomes]
        rates[workers] = statistics.median(measured)
    print("3. workers=2 vs workers=1 (500-step toy-counter Episodes)")
    print(f"   workers=1: {rates[1]:9.0f} steps/s; workers=2: {rates[2]:9.0f} steps/s")
    identical = trajectories[1] == trajectories[2]
    print(f"   ratio: {rates[2] / rates[1]:.2f}x (target close to 2x); identical trajectories: {identical}")
    print(f"   this machine's own parallelism (two pinned CPU-bound processes vs one): {_machine_parallelism():.2f}x")


def isolation(root: Path, episodes: int, runs: int) -> None:
    print("4. isolation: bwrap vs local, same run, alternating (cartpole, workers=1)")
    bwrap, why_not = probe_bwrap()
    if bwrap is None or "cartpole" not in default_registry().names():
        print(f"   skipped: {why_not or 'cartpole is not registered'}")
        return
    ref = BenchmarkRef(name="cartpole")
    short = _tasks(ref, _program(root, "isolation-short", LEFT_ONLY_POLICY), episodes)  # ~10 steps each
    long = _tasks(ref, _program(root, "isolation-long", CARTPOLE_POLICY), max(2, episodes // 25))  # 500 steps
    per_episode: dict[str, list[float]] = {"local": [], "bwrap": []}
    rates: dict[str, list[float]] = {"local": [], "bwrap": []}
    executors = {name: LocalExecutor(ref, workers=1, isolation=name) for name in ("local", "bwrap")}
    try:
        for executor in executors.values():
            _run(executor, short[:10])  # warm up
        for _ in range(runs):
            for name, executor in executors.items():
                per_episode[name].append(_run(executor, short)[0] / len(short))
                elapsed, outcomes = _run(executor, long)
                rates[name].append(sum(o.steps for o in outcomes) / elapsed)
    finally:
        for executor in executors.values():
            executor.close()
    cost = {name: statistics.median(values) for name, values in per_episode.items()}
    rate = {name: statistics.median(values) for name, values in rates.items()}
    local_ms, bwrap_ms = cost["local"] * 1000, cost["bwrap"] * 1000
    print(f"   short Episodes: local {local_ms:7.2f} ms/Episode; bwrap {bwrap_ms:7.2f} ms/Episode")
    print(f"   per-Episode ratio bwrap/local: {cost['bwrap'] / cost['local']:.2f}x (target <= 2x)")
    print(f"   500-step Episodes: local {rate['local']:9.0f} steps/s; bwrap {rate['bwrap']:9.0f} steps/s")
    print(f"   steps/s ratio local/bwrap: {rate['local'] / rate['bwrap']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer Episodes and repetitions (a smoke run)")
    args = parser.parse_args()
    runs = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(prefix="evoledger-bench-") as tmp:
        root = Path(tmp)
        overhead(root, 50 if args.quick else 300, runs)
        throughput(root, 4 if args.quick else 20, runs)
        scaling(root, 8 if args.quick else 40, runs)
        isolation(root, 20 if args.quick else 200, runs)


if __name__ == "__main__":
    main()
