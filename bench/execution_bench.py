"""Measure the execution layer: per-Episode overhead, steps/s through the Policy process, worker scaling.

Run with ``python bench/execution_bench.py`` (``--quick`` for a quick look, ``--smoke`` for the test suite's run).
Every target is a ratio measured in the same run (machines differ 3x from day to day):

1. per-Episode overhead of a trivial 1-step Episode through ``LocalExecutor`` vs a new ``python`` per Episode;
2. steps/s through the Policy process on 500-step Episodes (``toy-counter`` and ``cartpole``) against the limit
   ``1 / (1/in-process + 1/round-trip)``, where *in-process* is plain gymnasium stepping with the Policy called
   in-process and *round-trip* a raw socket round trip of a small message between two processes on the worker's
   CPU (as a worker and its Policy child run), both measured in the same run — target >= 50% of the limit; the same
   ratio per CPU second (worker, zygote and Policy children from /proc) is printed too: it does not depend on what
   else runs on the machine. A worker and its Policy child exchange over pipes, whose raw round trip is cheaper than
   a socket's: the limit with a raw *pipe* round trip (higher, so a stricter yardstick) is printed beside it;
3. throughput with ``workers=2`` vs ``workers=1`` — target >= 1.85x on a quiet machine (the machine's own
   parallelism, two pinned CPU-bound processes against one, is printed beside it, and so is the least a fresh Policy
   process per Episode costs, a fork and an exit of a zygote-sized process: with one worker that runs on the spare
   CPU, with two on each worker's own, which bounds the ratio);
4. ``isolation="bwrap"`` vs ``"local"`` measured in the same run, alternating.

``--baseline DIR`` (a checkout of evoledger, e.g. the main branch) compares today's code with this one in the same
minutes: both are measured in fresh subprocesses, alternating round by round (``--rounds``), and the medians of
per-Episode overhead, steps/s and their ratios are printed side by side — target: per-Episode overhead <= 0.5x.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
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


def _per_episode_seconds(root: Path, episodes: int, runs: int) -> tuple[float, float, list[EpisodeOutcome]]:
    """Wall seconds per trivial Episode, CPU seconds per Episode of the worker, its zygote and Policy children (what
    a quiet machine would show), and the outcomes of one run."""
    ref = BenchmarkRef(name="toy-counter", config={"max_episode_steps": 1})
    tasks = _tasks(ref, _program(root, "trivial", TRIVIAL_POLICY), episodes)
    with LocalExecutor(ref, workers=1) as executor:
        _run(executor, tasks[:20])  # warm up
        cpu = _worker_cpu_seconds(executor)
        per_episode = _median_of(runs, lambda: _run(executor, tasks)[0] / episodes)
        cpu_per_episode = (_worker_cpu_seconds(executor) - cpu) / (episodes * runs)
        outcomes = _run(executor, tasks)[1]
    return per_episode, cpu_per_episode, outcomes


def overhead(root: Path, episodes: int, runs: int) -> None:
    per_episode, cpu_per_episode, outcomes = _per_episode_seconds(root, episodes, runs)
    policy_ms = statistics.median(o.policy_seconds for o in outcomes) * 1000
    wall_ms = statistics.median(o.wall_seconds for o in outcomes) * 1000

    def fresh() -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", NEW_INTERPRETER], check=True)
        return time.perf_counter() - began

    fresh_seconds = _median_of(max(3, runs * 2), fresh)
    print("1. per-Episode overhead (trivial 1-step toy-counter Episode)")
    print(f"   LocalExecutor(workers=1): {per_episode * 1000:7.2f} ms/Episode end to end")
    print(f"      CPU of the worker, its zygote and Policy children: {cpu_per_episode * 1000:.2f} ms/Episode")
    print(f"      inside the worker: median wall {wall_ms:.2f} ms, of which waiting for the Policy {policy_ms:.2f} ms")
    print(f"   new python per Episode:   {fresh_seconds * 1000:7.2f} ms/Episode")
    print(f"   ratio: {fresh_seconds / per_episode:.1f}x cheaper than a new interpreter")
    print("   (today's code vs this one in the same minutes: --baseline DIR; target <= 0.5x)")


def _in_process_toy(steps: int) -> tuple[float, float]:
    benchmark = resolve_benchmark(BenchmarkRef(name="toy-counter", config=_LONG_TOY))
    episodes = benchmark.episodes("train", seed=0, count=steps // 500 + 1)
    policy = _ToyPolicy()
    count = 0
    cpu = time.process_time()
    began = time.perf_counter()
    for episode in episodes:
        env = benchmark.make_environment(episode)
        observation = env.reset()
        done = False
        while not done:
            step = env.step(policy.act(observation))
            observation = step.observation
            count += 1
            done = step.terminated or step.truncated
        env.close()
    return count / (time.perf_counter() - began), count / (time.process_time() - cpu)


class _ToyPolicy:
    def act(self, observation: Any) -> int:
        return 0


class _CartPolePolicy:
    def act(self, observation: Any) -> int:
        return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def _in_process_cartpole(steps: int) -> tuple[float, float]:
    """Plain gymnasium stepping, the Policy called in-process (the same heuristic as CARTPOLE_POLICY)."""
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    policy = _CartPolePolicy()
    observation, _ = env.reset(seed=0)
    count = 0
    cpu = time.process_time()
    began = time.perf_counter()
    while count < steps:
        observation, _reward, terminated, truncated, _ = env.step(policy.act(observation))
        count += 1
        if terminated or truncated:
            observation, _ = env.reset()
    return count / (time.perf_counter() - began), count / (time.process_time() - cpu)


def _channel_ends(over: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """A two-way channel between two processes as plain descriptors: ours (read, write) and the peer's (read, write);
    ``over`` a socket pair (one descriptor each, read and written) or two pipes (one each way, as evoledger's)."""
    if over == "socket":
        ours, theirs = (end.detach() for end in socket.socketpair())
        return (ours, ours), (theirs, theirs)
    peer_reads, we_write = os.pipe()
    we_read, peer_writes = os.pipe()
    return (we_read, we_write), (peer_reads, peer_writes)


def _round_trip(exchanges: int, cpu: int | None = None, *, over: str = "socket") -> tuple[float, float]:
    """Round trips/s of a 32-byte message between two processes (``cpu``: both pinned to it), per second of wall
    time and per second of CPU time of both processes; ``over`` a socket pair or a pair of pipes (one each way)."""
    (our_read, our_write), (peer_read, peer_write) = _channel_ends(over)
    pid = os.fork()
    if pid == 0:  # the echoing peer
        for fd in {our_read, our_write}:
            os.close(fd)
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        while data := os.read(peer_read, 64):
            os.write(peer_write, data)
        os._exit(0)
    for fd in {peer_read, peer_write}:
        os.close(fd)
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    message = b"o" * 32
    children = os.times()
    mine = time.thread_time()
    began = time.perf_counter()
    for _ in range(exchanges):
        os.write(our_write, message)
        os.read(our_read, 64)
    elapsed = time.perf_counter() - began
    mine = time.thread_time() - mine
    os.sched_setaffinity(0, before)
    for fd in {our_read, our_write}:
        os.close(fd)
    os.waitpid(pid, 0)
    after = os.times()
    theirs_cpu = after.children_user + after.children_system - children.children_user - children.children_system
    return exchanges / elapsed, exchanges / (mine + theirs_cpu)


_LONG_TOY: dict[str, Any] = {"max_episode_steps": 500, "terminate_on_hit": False}


def _cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of its children it has reaped (a zygote reaps its Policy children)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _worker_cpu_seconds(executor: LocalExecutor) -> float:
    """CPU time of the worker, its zygote and (once reaped) its Policy children."""
    total = 0.0
    for worker in executor.worker_pids:
        total += _cpu_seconds(worker)
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{worker}/task/{worker}/children").read_text().split()
            total += sum(_cpu_seconds(int(child)) for child in children)
    return total


def _knows(name: str) -> bool:
    """Whether this evoledger has Benchmark ``name`` (asked so that ``--baseline`` can measure older checkouts too)."""
    registry = default_registry()
    knows = getattr(registry, "knows", None)
    if knows is not None:
        return bool(knows(name))
    try:
        resolve_benchmark(BenchmarkRef(name=name))
    except Exception:
        return False
    return True


def _stepping(root: Path, episodes: int, runs: int, loops: int = 20_000) -> dict[str, dict[str, float]]:
    """Per Benchmark: steps/s through the Policy process, in-process, raw round trips/s, and the limit; each also
    per second of CPU time (``*_cpu``: what a quiet machine would show, whatever else runs on this one)."""
    cases: list[tuple[str, BenchmarkRef, str, Callable[[int], tuple[float, float]]]] = [
        ("toy-counter", BenchmarkRef(name="toy-counter", config=_LONG_TOY), TRIVIAL_POLICY, _in_process_toy)
    ]
    if _knows("cartpole"):
        cases.append(("cartpole", BenchmarkRef(name="cartpole"), CARTPOLE_POLICY, _in_process_cartpole))
    figures: dict[str, dict[str, float]] = {}
    for name, ref, source, in_process in cases:
        tasks = _tasks(ref, _program(root, f"steps-{name}", source), episodes)
        keys = ("through", "in_process", "round_trip", "pinned_round_trip", "pinned_pipe_round_trip")
        rates: dict[str, list[float]] = {key: [] for key in keys + tuple(f"{key}_cpu" for key in keys)}
        with LocalExecutor(ref, workers=1) as executor:
            _run(executor, tasks[:2])
            cpu = sorted(os.sched_getaffinity(0))[0]  # worker 0 and its Policy children are pinned here
            for _ in range(runs):  # interleaved, so that a change of load hits all alike
                used = _worker_cpu_seconds(executor)
                elapsed, outcomes = _run(executor, tasks)
                steps = sum(o.steps for o in outcomes)
                rates["through"].append(steps / elapsed)
                rates["through_cpu"].append(steps / max(1e-9, _worker_cpu_seconds(executor) - used))
                for key, (wall, cpu_rate) in (
                    ("in_process", in_process(loops)),
                    ("round_trip", _round_trip(loops)),
                    ("pinned_round_trip", _round_trip(loops, cpu)),
                    ("pinned_pipe_round_trip", _round_trip(loops, cpu, over="pipe")),
                ):
                    rates[key].append(wall)
                    rates[f"{key}_cpu"].append(cpu_rate)
        figure = {key: statistics.median(values) for key, values in rates.items()}
        # The round trip of two processes on the worker's CPU, as a worker and its Policy child exchange: unpinned,
        # the two land on one CPU or on two from run to run, and on a virtual machine that alone changes it up to 7x.
        figure["limit"] = 1 / (1 / figure["in_process"] + 1 / figure["pinned_round_trip"])
        figure["limit_cpu"] = 1 / (1 / figure["in_process_cpu"] + 1 / figure["pinned_round_trip_cpu"])
        figure["pipe_limit"] = 1 / (1 / figure["in_process"] + 1 / figure["pinned_pipe_round_trip"])
        figures[name] = figure
    return figures


def throughput(root: Path, episodes: int, runs: int, loops: int = 20_000) -> None:
    print("2. steps/s through the Policy process (500-step Episodes, workers=1) vs 1/(1/in-process + 1/round-trip)")
    for name, f in _stepping(root, episodes, runs, loops).items():
        print(f"   {name:12s} through the Policy process: {f['through']:9.0f} steps/s")
        print(f"   {name:12s} in-process (Policy called directly): {f['in_process']:9.0f} steps/s")
        print(
            f"   {'':12s} raw round trip between two processes on the worker's CPU: {f['pinned_round_trip']:9.0f}/s "
            f"(unpinned: {f['round_trip']:.0f}/s)"
        )
        print(
            f"   {name:12s} limit {f['limit']:9.0f} steps/s -> through the Policy process: "
            f"{f['through'] / f['limit']:.0%} of the limit (target >= 50%)"
        )
        print(
            f"   {'':12s} with a raw pipe round trip ({f['pinned_pipe_round_trip']:.0f}/s) instead: limit "
            f"{f['pipe_limit']:.0f} steps/s -> {f['through'] / f['pipe_limit']:.0%} of it"
        )
        print(
            f"   {'':12s} per CPU second (load-independent): through {f['through_cpu']:.0f}, in-process "
            f"{f['in_process_cpu']:.0f}, round trip {f['pinned_round_trip_cpu']:.0f}"
            f" -> {f['through_cpu'] / f['limit_cpu']:.0%}"
            " of the limit"
        )


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


_FORK_FLOOR = """
import gc, os, resource, sys
import evoledger.kernel.execution.worker  # what a worker imports before it forks its zygote
os.sched_setaffinity(0, {int(sys.argv[1])})
def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
if os.fork() == 0:  # the zygote: forked from the worker, frozen, then forking (as Zygote.fork and its loop do)
    gc.freeze()
    rounds = int(sys.argv[2])
    began = cpu()
    for _ in range(rounds):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    rss = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024
    print((cpu() - began) / rounds, rss, flush=True)
    os._exit(0)
os.wait()
"""


def _fork_floor(rounds: int = 200) -> tuple[float, int]:
    """CPU seconds of one fork + exit + wait of a process holding what a worker holds when it forks its zygote (the
    least a fresh Policy process per Episode costs), and that process's resident bytes."""
    cpu = min(os.sched_getaffinity(0))
    out = subprocess.run(
        [sys.executable, "-c", _FORK_FLOOR, str(cpu), str(rounds)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def _scaling(root: Path, episodes: int, runs: int) -> dict[str, float]:
    """steps/s with workers=1 and workers=2, measured alternately (both executors alive), and their ratio."""
    ref = BenchmarkRef(name="toy-counter", config=_LONG_TOY)
    tasks = _tasks(ref, _program(root, "scaling", TRIVIAL_POLICY), episodes)
    measured: dict[int, list[float]] = {1: [], 2: []}
    trajectories: dict[int, list[bytes | None]] = {}
    with LocalExecutor(ref, workers=1) as one, LocalExecutor(ref, workers=2) as two:
        executors = {1: one, 2: two}
        for executor in executors.values():
            _run(executor, tasks[:4])
        for _ in range(runs):
            for workers, executor in executors.items():
                elapsed, outcomes = _run(executor, tasks)
                measured[workers].append(sum(o.steps for o in outcomes) / elapsed)
                trajectories[workers] = [o.trajectory for o in outcomes]
    rates = {workers: statistics.median(values) for workers, values in measured.items()}
    return {
        "workers_1": rates[1],
        "workers_2": rates[2],
        "ratio": rates[2] / rates[1],
        "identical": float(trajectories[1] == trajectories[2]),
    }


def scaling(root: Path, episodes: int, runs: int) -> None:
    figures = _scaling(root, episodes, runs)
    print("3. workers=2 vs workers=1 (500-step toy-counter Episodes, measured alternately)")
    print(f"   workers=1: {figures['workers_1']:9.0f} steps/s; workers=2: {figures['workers_2']:9.0f} steps/s")
    identical = bool(figures["identical"])
    print(f"   ratio: {figures['ratio']:.2f}x (target >= 1.85x, quiet machine); identical trajectories: {identical}")
    parallelism = _machine_parallelism()
    print(f"   this machine's own parallelism (two pinned CPU-bound processes vs one): {parallelism:.2f}x")
    # With workers=1 a Policy child is forked and freed on the spare CPU; two workers leave none spare, so each pays
    # at least a fork and an exit per Episode on its own CPU: the ratio stays under about parallelism * E / (E + fork).
    floor, rss = _fork_floor()
    episode = _LONG_TOY["max_episode_steps"] / figures["workers_1"]
    print(
        f"   fork + exit of a process the zygote's size ({rss / 2**20:.0f} MB): {floor * 1000:.2f} ms CPU; with "
        f"{episode * 1000:.1f} ms Episodes two workers reach about {parallelism * episode / (episode + floor):.2f}x"
    )


def isolation(root: Path, episodes: int, runs: int) -> None:
    print("4. isolation: bwrap vs local, same run, alternating (cartpole, workers=1)")
    bwrap, why_not = probe_bwrap()
    if bwrap is None or not default_registry().knows("cartpole"):
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


def _figures(quick: bool) -> dict[str, float]:
    """The compared figures of this interpreter's evoledger (one round of ``--baseline``)."""
    runs = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="evoledger-bench-") as tmp:
        root = Path(tmp)
        per_episode, cpu_per_episode, _outcomes = _per_episode_seconds(root, 50 if quick else 200, runs)
        figures = {"per_episode_ms": per_episode * 1000, "per_episode_cpu_ms": cpu_per_episode * 1000}
        for name, figure in _stepping(root, 4 if quick else 10, runs).items():
            figures[f"{name}_steps"] = figure["through"]
            figures[f"{name}_of_limit"] = figure["through"] / figure["limit"]
            figures[f"{name}_of_limit_cpu"] = figure["through_cpu"] / figure["limit_cpu"]
            figures[f"{name}_of_pipe_limit"] = figure["through"] / figure["pipe_limit"]
        figures["workers_2_ratio"] = _scaling(root, 8 if quick else 20, runs)["ratio"]
        figures["busy_caller_steps"] = _with_a_busy_caller(root, 10 if quick else 40, runs)
    return figures


_CALLER_WORK_SECONDS = 0.010
"""What the caller spends on each outcome in :func:`_with_a_busy_caller`: about a Host's ledger append with its fsync
on a busy disk."""


def _with_a_busy_caller(root: Path, episodes: int, runs: int) -> float:
    """CartPole steps/s (500-step Episodes, workers=1) while the caller spends 10 ms of CPU on every outcome, as a Host
    does between reading an outcome and asking for the next one: whether the worker waits for it between Episodes."""
    ref = BenchmarkRef(name="cartpole")
    program = _program(root, "busy-caller", CARTPOLE_POLICY)
    rates = []
    with LocalExecutor(ref, workers=1) as executor:
        _run(executor, _tasks(ref, program, 3))
        for _ in range(runs):
            steps, began = 0, time.perf_counter()
            for outcome in executor.run(_tasks(ref, program, episodes)):
                steps += outcome.steps
                busy_until = time.perf_counter() + _CALLER_WORK_SECONDS
                while time.perf_counter() < busy_until:
                    pass
            rates.append(steps / (time.perf_counter() - began))
    return statistics.median(rates)


_COMPARED = [
    ("per_episode_ms", "per-Episode overhead, ms (trivial 1-step Episode)", "target <= 0.5x"),
    ("per_episode_cpu_ms", "  its CPU ms (worker, zygote, Policy child; load-independent)", ""),
    ("cartpole_steps", "cartpole steps/s through the Policy process", ""),
    ("cartpole_of_limit", "cartpole, fraction of 1/(1/in-process + 1/round-trip)", "target >= 50%"),
    ("cartpole_of_limit_cpu", "cartpole, the same per CPU second (load-independent)", "target >= 50%"),
    ("cartpole_of_pipe_limit", "cartpole, fraction of the limit with a raw pipe round trip", ""),
    ("toy-counter_steps", "toy-counter steps/s through the Policy process", ""),
    ("toy-counter_of_limit", "toy-counter, fraction of the limit", ""),
    ("workers_2_ratio", "workers=2 / workers=1", "target >= 1.85x quiet"),
    ("busy_caller_steps", "cartpole steps/s, caller busy 10 ms per outcome", ""),
]


def _measure_in_subprocess(package_parent: Path, quick: bool) -> dict[str, float]:
    command = [sys.executable, str(Path(__file__).resolve()), "--emit-figures"] + (["--quick"] if quick else [])
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    check = [sys.executable, "-c", "import evoledger; print(evoledger.__file__)"]
    imported = subprocess.run(check, env=env, check=True, capture_output=True, text=True).stdout.strip()
    if not imported.startswith(str(package_parent)):
        raise SystemExit(f"cannot measure {package_parent}: its python imports evoledger from {imported}")
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def compare(baseline: Path, rounds: int, quick: bool) -> None:
    """Today's code (``baseline``, a checkout) against this one, alternating in fresh subprocesses."""
    import evoledger

    with tempfile.TemporaryDirectory(prefix="evoledger-baseline-") as tmp:
        sides: dict[str, Path] = {}
        for side, checkout in (("baseline", baseline), ("this", Path(evoledger.__file__).parent)):
            sides[side] = Path(tmp) / side  # a folder holding only ``evoledger``: the checkout to import
            sides[side].mkdir()
            (sides[side] / "evoledger").symlink_to(checkout.resolve(), target_is_directory=True)
        results: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
        for round_number in range(rounds):
            for side, parent in sides.items():
                results[side].append(_measure_in_subprocess(parent, quick))
            print(f"   round {round_number + 1}/{rounds} done", file=sys.stderr)
    print(f"today's code ({baseline}) vs this code, alternating, median of {rounds} rounds")
    print(f"   {'figure':58s} {'baseline':>10s} {'this':>10s} {'this/baseline':>14s}")
    for key, words, target in _COMPARED:
        if any(key not in r for side in results.values() for r in side):  # a figure the baseline did not measure yet
            continue
        old = statistics.median(r[key] for r in results["baseline"])
        new = statistics.median(r[key] for r in results["this"])
        print(f"   {words:58s} {old:10.3f} {new:10.3f} {new / old:13.2f}x  {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer Episodes and repetitions (a quick look)")
    parser.add_argument(
        "--smoke", action="store_true", help="the fewest Episodes and loops that run every section (the test suite's)"
    )
    parser.add_argument("--baseline", type=Path, help="a checkout of evoledger to compare with (e.g. the main branch)")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: alternating rounds per side")
    parser.add_argument("--emit-figures", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.emit_figures:
        print(json.dumps(_figures(args.quick)))
        return
    if args.baseline is not None:
        compare(args.baseline, args.rounds, args.quick)
        return
    runs = 1 if args.quick or args.smoke else 3
    with tempfile.TemporaryDirectory(prefix="evoledger-bench-") as tmp:
        root = Path(tmp)
        if args.smoke:  # every section's code path, no figure worth quoting
            overhead(root, 5, runs)
            throughput(root, 2, runs, loops=2_000)
            scaling(root, 4, runs)
            isolation(root, 4, runs)
            return
        overhead(root, 50 if args.quick else 300, runs)
        throughput(root, 4 if args.quick else 20, runs)
        scaling(root, 8 if args.quick else 40, runs)
        isolation(root, 20 if args.quick else 200, runs)


if __name__ == "__main__":
    main()
