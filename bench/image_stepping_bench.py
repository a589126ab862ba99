"""Steps/s through the Policy process with image observations, against in-process stepping of the same Environment.

Run with ``python bench/image_stepping_bench.py`` (``--steps N`` per figure, ``--rounds R``; each figure is the
median of the rounds). Issue 15 asks for steps/s through the Policy process on a 64x64x3 and a 96x96x3 uint8
observation of at least 50% of in-process stepping of the same Environment. For each Environment, in one run:

* **in-process**: the Benchmark's own Environment (``make_environment``, ``reset``, ``step``) with the Policy
  called directly, no second process (the garbage collector frozen after imports, as in a worker);
* **evoledger, not recorded**: ``LocalExecutor(workers=1)``, every check and limit, the observation sent to a
  fresh Policy process per Episode as a raw buffer, without recording the trajectory;
* **evoledger, recorded**: the same, recording every step's observation as ``evaluate()`` does by default (over a
  quarter of the steps: trajectories recorded as JSON lists make this figure slow for images).

Also measured: the raw round trip of one observation-sized message between two processes on one CPU, over a socket
pair and over two pipes (what evoledger's channel uses), and the limit ``1 / (1/in-process + 1/round-trip)`` that any
design with the Policy in its own process stays under, with each (on an Environment as cheap as ``toy/image``, that
limit is itself far below 50% of in-process).

Environments: ``toy/image`` at 64x64 and 96x96 (cheap to step, so the channel's cost shows most), and, when they
are importable, Gymnasium's ``CarRacing-v3`` (96x96x3, needs Box2D) and Crafter (64x64x3), each wrapped here in a
small Benchmark (``image_stepping_bench:car_racing`` / ``:crafter``) with a constant Policy.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gc
import importlib.util
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from evoledger.kernel.authoring import EpisodeSpec, Step
from evoledger.kernel.execution import EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

BENCH_DIR = Path(__file__).resolve().parent
_MODULE = Path(__file__).stem
"""The name the workers import this file by (``BENCH_DIR`` is on their path) to build the wrapped Benchmarks."""

POLICY = """
import numpy as np


class Policy:
    def __init__(self, action):
        self.action = action

    def act(self, observation):
        if type(observation) is not np.ndarray or observation.dtype != np.uint8:
            raise TypeError("expected a uint8 image")
        return self.action


def make_policy(context):
    space = context.action_space
    return Policy(np.asarray(space.low, dtype=space.dtype) * 0 if hasattr(space, "low") else 0)
"""


class _ConstantPolicy:
    """In-process twin of POLICY."""

    def __init__(self, action_space: Any) -> None:
        self.action = np.asarray(action_space.low, dtype=action_space.dtype) * 0 if hasattr(action_space, "low") else 0

    def act(self, observation: Any) -> Any:
        if type(observation) is not np.ndarray or observation.dtype != np.uint8:
            raise TypeError("expected a uint8 image")
        return self.action


class _GymImageEnvironment:
    """One Episode of a Gymnasium-style image environment: fresh, seeded with the Episode's seed."""

    def __init__(self, make: Callable[[], Any], episode: EpisodeSpec) -> None:
        self._env = make()
        self._seed = episode.seed

    def reset(self) -> Any:
        observation, _info = self._env.reset(seed=self._seed % 2**31)
        return np.asarray(observation, dtype=np.uint8)

    def step(self, action: Any) -> Step:
        observation, reward, terminated, truncated, _info = self._env.step(action)
        return Step(np.asarray(observation, dtype=np.uint8), float(reward), bool(terminated), bool(truncated))

    def close(self) -> None:
        self._env.close()


class _GymImageBenchmark:
    """The least Benchmark around an image environment: enough for the executor, nothing for Feedback or Runs."""

    def __init__(self, benchmark_id: str, make: Callable[[], Any], max_episode_steps: int) -> None:
        from evoledger.kernel.authoring import BenchmarkSpec, ScoreRule, describe_space, parameters_digest

        self._make = make
        probe = make()
        self.observation_space, self.action_space = probe.observation_space, probe.action_space
        probe.close()
        parameters = {"max_episode_steps": max_episode_steps}
        self.spec = BenchmarkSpec(
            id=benchmark_id,
            description=f"{benchmark_id}, wrapped for the image stepping bench",
            observation_space=describe_space(self.observation_space),
            action_space=describe_space(self.action_space),
            metadata={},
            environment_parameters=parameters,
            max_episode_steps=max_episode_steps,
            primary_metric="mean_return",
            parameters_digest=parameters_digest(parameters),
            scoring=ScoreRule(failure_return=0.0),
        )
        self.programs = None

    def episodes(self, split: Any, *, seed: int, count: int) -> list[EpisodeSpec]:
        from evoledger.kernel.authoring import derive_seed

        return [EpisodeSpec(split=split, index=i, seed=derive_seed(seed, "bench", split, i)) for i in range(count)]

    def make_environment(self, episode: EpisodeSpec) -> _GymImageEnvironment:
        return _GymImageEnvironment(self._make, episode)

    def feedback(self, records: Any) -> Any:
        raise NotImplementedError("the bench Benchmark only steps")


def car_racing(max_episode_steps: int = 1000) -> _GymImageBenchmark:
    """Gymnasium's CarRacing-v3 (96x96x3 uint8; continuous actions), the constant Policy does nothing."""
    import gymnasium as gym

    return _GymImageBenchmark(
        "bench/car-racing",
        lambda: gym.make("CarRacing-v3", max_episode_steps=max_episode_steps, disable_env_checker=True),
        max_episode_steps,
    )


def crafter(max_episode_steps: int = 1000) -> _GymImageBenchmark:
    """Crafter (64x64x3 uint8; Discrete(17)) through its Gymnasium-style ``reset``/``step``."""
    return _GymImageBenchmark("bench/crafter", lambda: _CrafterGym(max_episode_steps), max_episode_steps)


class _CrafterGym:
    """Crafter's old Gym API as Gymnasium's ``reset(seed=)`` / 5-tuple ``step``."""

    def __init__(self, length: int) -> None:
        import crafter as crafter_package  # type: ignore[import-untyped]
        from gymnasium import spaces

        self._length = length
        self._env = crafter_package.Env(length=length)
        self.observation_space = spaces.Box(0, 255, (64, 64, 3), dtype=np.uint8)
        self.action_space = spaces.Discrete(int(self._env.action_space.n))

    def reset(self, seed: int) -> tuple[Any, dict[str, Any]]:
        import crafter as crafter_package

        self._env = crafter_package.Env(length=self._length, seed=seed)
        return self._env.reset(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, done, info = self._env.step(int(action))
        return observation, reward, bool(done and info.get("discount", 1.0) == 0.0), bool(done), info

    def close(self) -> None:
        pass


def _in_process(ref: BenchmarkRef, steps: int) -> float:
    benchmark = resolve_benchmark(ref)
    policy = _ConstantPolicy(benchmark.action_space)
    count, began = 0, time.perf_counter()
    for episode in benchmark.episodes("train", seed=0, count=steps):
        env = benchmark.make_environment(episode)
        observation, done = env.reset(), False
        while not done and count < steps:
            step = env.step(policy.act(observation))
            observation, done, count = step.observation, step.terminated or step.truncated, count + 1
        env.close()
        if count >= steps:
            break
    return count / (time.perf_counter() - began)


def _raw_round_trips(size: int, exchanges: int, *, over: str = "socket") -> float:
    """Round trips/s of a ``size``-byte message and a 16-byte reply between two processes sharing one CPU (as a
    worker and its Policy child do), over a socket pair or over two pipes (what evoledger's channel uses): what no
    design with the Policy in another process can beat."""
    cpu = min(os.sched_getaffinity(0))
    if over == "socket":
        ours, theirs = (end.detach() for end in socket.socketpair())
        our_read, our_write, peer_read, peer_write = ours, ours, theirs, theirs
    else:
        peer_read, our_write = os.pipe()
        our_read, peer_write = os.pipe()
        with contextlib.suppress(OSError):  # as evoledger grows a pipe for a frame larger than it (up to 1 MiB)
            fcntl.fcntl(our_write, fcntl.F_SETPIPE_SZ, min(1 << 20, 1 << (size + 4).bit_length()))
    pid = os.fork()
    if pid == 0:  # the peer: read a whole message, answer; never returns
        for fd in {our_read, our_write}:
            os.close(fd)
        os.sched_setaffinity(0, {cpu})
        while True:
            got = 0
            while got < size:
                data = os.read(peer_read, 65536)
                if not data:
                    os._exit(0)
                got += len(data)
            os.write(peer_write, bytes(16))
    for fd in {peer_read, peer_write}:
        os.close(fd)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    message, began = bytes(size), time.perf_counter()
    for _ in range(exchanges):
        view = memoryview(message)
        while view:
            view = view[os.write(our_write, view) :]
        os.read(our_read, 64)
    elapsed = time.perf_counter() - began
    os.sched_setaffinity(0, before)
    for fd in {our_read, our_write}:
        os.close(fd)
    os.waitpid(pid, 0)
    return exchanges / elapsed


def _through_policy_process(
    executor: LocalExecutor, ref: BenchmarkRef, program: Path, steps: int, *, record: bool
) -> float:
    episodes = resolve_benchmark(ref).episodes("train", seed=0, count=steps + 2)
    limits = PolicyLimits(act_timeout_seconds=30.0)
    tasks = [EpisodeTask(e, program, e.index, limits, record_trajectory=record) for e in episodes]
    list(executor.run(tasks[:2]))  # warm up: the zygote, the Benchmark built in the worker
    count, began = 0, time.perf_counter()
    for outcome in executor.run(tasks[2:]):
        if outcome.status != "ok":
            raise SystemExit(f"a bench Episode failed: {outcome.status}: {outcome.failure_message}")
        count += outcome.steps
        if count >= steps:
            break
    return count / (time.perf_counter() - began)


def _toy(size: int, steps: int) -> BenchmarkRef:
    config = {"height": size, "width": size, "max_episode_steps": max(10, min(500, steps // 4))}
    return BenchmarkRef(name="toy/image", config={**config, "terminate_on_hit": False})


def _environments(steps: int, real_steps: int, toy_only: bool) -> dict[str, tuple[BenchmarkRef, int]]:
    refs = {"toy/image 64x64x3": (_toy(64, steps), steps), "toy/image 96x96x3": (_toy(96, steps), steps)}
    per_episode = {"max_episode_steps": max(10, real_steps // 2)}
    if not toy_only and importlib.util.find_spec("Box2D") is not None:
        refs["CarRacing-v3 96x96x3"] = (BenchmarkRef(name=f"{_MODULE}:car_racing", config=per_episode), real_steps)
    if not toy_only and importlib.util.find_spec("crafter") is not None:
        refs["crafter 64x64x3"] = (BenchmarkRef(name=f"{_MODULE}:crafter", config=per_episode), real_steps)
    return refs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="steps per figure on toy/image")
    parser.add_argument("--real-steps", type=int, default=300, help="steps per figure on CarRacing and Crafter")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each figure is the median")
    parser.add_argument("--toy-only", action="store_true", help="skip CarRacing and Crafter")
    args = parser.parse_args()
    # The workers import this module by name ("image_stepping_bench:car_racing") to build the wrapped Benchmarks.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH_DIR), os.environ.get("PYTHONPATH")) if p)
    sys.path.insert(0, str(BENCH_DIR))
    # As the workers do after their imports (worker.py): collections then skip the long-lived import-time objects,
    # so in-process stepping pays no more for the garbage collector than stepping in a worker does.
    gc.collect()
    gc.freeze()
    print(f"median of {args.rounds} rounds; every ratio is against in-process stepping measured in the same run")
    with tempfile.TemporaryDirectory(prefix="evoledger-image-bench-") as tmp:
        program = Path(tmp) / "program"
        program.mkdir()
        (program / "policy.py").write_text(POLICY, encoding="utf-8")
        for label, (ref, steps) in _environments(args.steps, args.real_steps, args.toy_only).items():
            names = ("in-process", "round trip", "pipe round trip", "not recorded", "recorded")
            figures: dict[str, list[float]] = {name: [] for name in names}
            frame = int(np.prod(resolve_benchmark(ref).observation_space.shape or (1,)))  # uint8: one byte each
            with LocalExecutor(ref, workers=1) as executor:
                for _ in range(args.rounds):
                    figures["in-process"].append(_in_process(ref, steps))
                    figures["round trip"].append(_raw_round_trips(frame, max(200, steps)))
                    figures["pipe round trip"].append(_raw_round_trips(frame, max(200, steps), over="pipe"))
                    figures["not recorded"].append(_through_policy_process(executor, ref, program, steps, record=False))
                    recorded = max(20, steps // 4)  # fewer steps: recording images as JSON is slow (see the docstring)
                    figures["recorded"].append(_through_policy_process(executor, ref, program, recorded, record=True))
            median = {name: statistics.median(values) for name, values in figures.items()}
            base = median["in-process"]
            limit = 1 / (1 / base + 1 / median["round trip"])
            pipe_limit = 1 / (1 / base + 1 / median["pipe round trip"])
            print(f"{label}, {steps} steps per figure")
            print(f"   {'in-process':<46} {base:>9.1f} steps/s")
            print(f"   {'raw round trip of one frame, same CPU':<46} {median['round trip']:>9.1f} /s")
            print(f"   {'  the same over two pipes':<46} {median['pipe round trip']:>9.1f} /s")
            text = "limit 1/(1/in-process + 1/round-trip)"
            print(f"   {text:<46} {limit:>9.1f} steps/s = {limit / base:6.1%} of in-process")
            text = "  the same with the pipe round trip"
            print(f"   {text:<46} {pipe_limit:>9.1f} steps/s = {pipe_limit / base:6.1%} of in-process")
            for name in ("not recorded", "recorded"):
                value = median[name]
                text = f"through the Policy process, {name}"
                print(
                    f"   {text:<46} {value:>9.1f} steps/s = {value / base:6.1%} of in-process, "
                    f"{value / limit:6.1%} of the limit, {value / pipe_limit:6.1%} of the pipe one"
                )


if __name__ == "__main__":
    main()
