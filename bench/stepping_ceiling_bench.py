"""How close to the stepping limit can any design come that keeps a fresh Policy process per Episode?

Run with ``python bench/stepping_ceiling_bench.py`` (``--steps N`` per figure). Issue 14 asks for steps/s through
the Policy process >= 50% of the limit ``1 / (1/in-process + 1/round-trip)``. This script measures, in the same run
and on CartPole with the same heuristic Policy, what the simplest possible two-process loops reach, so that the gap
left to evoledger's executor can be told apart from what the design itself costs:

* **in-process**: gymnasium stepping with the Policy called directly; **round trip**: a raw 32-byte round trip
  between two processes pinned to one CPU (as a worker and its Policy child run), over a socket pair and over a pair
  of pipes; **limit**: the formula above, with each (evoledger exchanges over pipes, whose round trip is cheaper: the
  limit with it is the higher, stricter one);
* **ideal, one process for all Episodes**: evoledger's Environment and wire codec, raw reads and writes of a pair of
  pipes, no checks, no recording, no timing, and one Policy process for every Episode (which the architecture rules
  out: every Episode needs a fresh Policy runtime);
* **ideal, a fresh process per Episode**: the same loop, but each Episode's Policy process forked ahead of time from
  a zygote, as evoledger does: the least any design keeping a fresh runtime per Episode pays;
* **evoledger**: ``LocalExecutor(workers=1)``, with every check, limit and recorded trajectory;
* the cost of one bare ``fork`` + ``exit`` + ``wait`` of a process holding numpy and gymnasium.
"""

from __future__ import annotations

import argparse
import gc
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evoledger.kernel.execution import LocalExecutor, decode_wire, encode_wire
from evoledger.kernel.execution.action_wire import decode_action, encode_action
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execution_bench import (
    CARTPOLE_POLICY,
    _channel_ends,
    _in_process_cartpole,
    _program,
    _round_trip,
    _run,
    _tasks,
)

_CPU = min(os.sched_getaffinity(0))
_SPARE = os.sched_getaffinity(0) - {_CPU}


def _serve_policy(read_fd: int, write_fd: int) -> None:
    """The Policy side of the ideal loops: decode, act (the CARTPOLE_POLICY heuristic), encode; never returns.

    Like an evoledger Policy child, it joins the driver's CPU as soon as it is set up, before its Episode: joining at
    the first observation instead would make every Episode wait milliseconds for the move (measured: 3.6-5 ms)."""
    os.sched_setaffinity(0, {_CPU})
    while frame := os.read(read_fd, 65536):
        observation = decode_wire(memoryview(frame)[1:])
        os.write(write_fd, b"A" + encode_action(1 if observation[2] + 0.5 * observation[3] > 0 else 0))
    os._exit(0)


def _episodes(steps: int) -> tuple[Any, list[Any]]:
    benchmark = resolve_benchmark(BenchmarkRef(name="cartpole"))
    return benchmark, benchmark.episodes("train", seed=0, count=steps // 8 + 1)


def _drive(benchmark: Any, episode: Any, ends: tuple[int, int]) -> int:
    env = benchmark.make_environment(episode)
    observation, count, done = env.reset(), 0, False
    read_fd, write_fd = ends
    while not done:
        os.write(write_fd, b"O" + encode_wire(observation))
        step = env.step(decode_action(memoryview(os.read(read_fd, 65536))[1:]))
        observation, count, done = step.observation, count + 1, step.terminated or step.truncated
    env.close()
    return count


def _ideal_one_process(steps: int) -> float:
    benchmark, episodes = _episodes(steps)
    ours, theirs = _channel_ends("pipe")
    pid = os.fork()
    if pid == 0:
        _close(ours)
        _serve_policy(*theirs)
    _close(theirs)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_CPU})
    count, began = 0, time.perf_counter()
    for episode in episodes:
        count += _drive(benchmark, episode, ours)
        if count >= steps:
            break
    elapsed = time.perf_counter() - began
    os.sched_setaffinity(0, before)
    _close(ours)
    os.waitpid(pid, 0)
    return count / elapsed


def _close(fds: tuple[int, ...]) -> None:
    for fd in fds:
        os.close(fd)


def _zygote(requests: socket.socket) -> None:
    """Fork one Policy process per request (its pipe ends passed along), reap the ended ones; never returns.

    Like evoledger's zygote, it forks on the CPUs the driver does not use (when there are some)."""
    if _SPARE:
        os.sched_setaffinity(0, _SPARE)
    gc.collect()
    gc.freeze()
    children: list[int] = []
    while True:
        message, fds, _flags, _address = socket.recv_fds(requests, 16, 2)
        if not message:
            for child in children:
                os.waitpid(child, 0)
            os._exit(0)
        pid = os.fork()
        if pid == 0:
            requests.close()
            _serve_policy(*fds)
        _close(tuple(fds))
        children.append(pid)
        for child in list(children):
            if os.waitpid(child, os.WNOHANG)[0]:
                children.remove(child)


def _ideal_fresh_per_episode(steps: int) -> float:
    benchmark, episodes = _episodes(steps)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = os.fork()
    if zygote == 0:
        ours.close()
        _zygote(theirs)
    theirs.close()

    def fork_ahead() -> tuple[int, int]:
        mine, policy = _channel_ends("pipe")
        socket.send_fds(ours, [b"F"], list(policy))
        _close(policy)
        return mine

    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_CPU})
    count, began = 0, time.perf_counter()
    ahead = fork_ahead()
    for episode in episodes:
        current, ahead = ahead, fork_ahead()
        count += _drive(benchmark, episode, current)
        _close(current)
        if count >= steps:
            break
    elapsed = time.perf_counter() - began
    os.sched_setaffinity(0, before)
    _close(ahead)
    ours.close()
    os.waitpid(zygote, 0)
    return count / elapsed


def _evoledger(steps: int, program: Path) -> float:
    ref = BenchmarkRef(name="cartpole")
    tasks = _tasks(ref, program, steps // 8 + 1)
    with LocalExecutor(ref, workers=1) as executor:
        _run(executor, tasks[:3])
        count, began = 0, time.perf_counter()
        for outcome in executor.run(tasks):
            count += outcome.steps
            if count >= steps:
                break
        return count / (time.perf_counter() - began)


def _fork_exit_seconds(times: int) -> float:
    def once() -> float:
        began = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return time.perf_counter() - began

    return statistics.median(once() for _ in range(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60_000, help="steps per figure")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each figure is the median")
    args = parser.parse_args()
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="evoledger-ceiling-") as tmp:
        program = _program(Path(tmp), "cartpole", CARTPOLE_POLICY)
        for _ in range(args.rounds):
            measured = {
                "in-process": _in_process_cartpole(args.steps)[0],
                "round trip": _round_trip(args.steps, _CPU)[0],
                "pipe round trip": _round_trip(args.steps, _CPU, over="pipe")[0],
                "ideal, one process for all Episodes": _ideal_one_process(args.steps),
                "ideal, a fresh process per Episode": _ideal_fresh_per_episode(args.steps),
                "evoledger LocalExecutor(workers=1)": _evoledger(args.steps, program),
            }
            for name, value in measured.items():
                figures.setdefault(name, []).append(value)
        fork_exit = _fork_exit_seconds(max(20, args.steps // 300))
    median = {name: statistics.median(values) for name, values in figures.items()}
    limit = 1 / (1 / median["in-process"] + 1 / median["round trip"])
    pipe_limit = 1 / (1 / median["in-process"] + 1 / median["pipe round trip"])
    print(f"CartPole, {args.steps} steps per figure, median of {args.rounds} rounds, one CPU for both processes")
    print(f"   {'in-process':<40} {median['in-process']:>9.0f} steps/s")
    print(f"   {'raw round trip, socket pair':<40} {median['round trip']:>9.0f} /s")
    print(f"   {'raw round trip, two pipes':<40} {median['pipe round trip']:>9.0f} /s")
    print(f"   {'limit 1/(1/in-process + 1/round-trip)':<40} {limit:>9.0f} steps/s (socket round trip)")
    print(f"   {'the same with the pipe round trip':<40} {pipe_limit:>9.0f} steps/s")
    for name in list(median)[3:]:
        print(
            f"   {name:<40} {median[name]:>9.0f} steps/s = {median[name] / limit:5.1%} of the limit, "
            f"{median[name] / pipe_limit:5.1%} of the pipe one"
        )
    fresh = median["ideal, a fresh process per Episode"]
    ours = median["evoledger LocalExecutor(workers=1)"]
    print(f"   evoledger / ideal with a fresh process per Episode: {ours / fresh:.2f}x")
    print(f"   one fork + exit + wait of this process (numpy, gymnasium loaded): {fork_exit * 1000:.2f} ms")


if __name__ == "__main__":
    main()
