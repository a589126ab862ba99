"""Shared fixtures for the execution tests: real Program directories and real executors on the toy Benchmarks."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution import EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

BINARY_SEARCH = """
import numpy as np


class _Policy:
    def __init__(self, context):
        self.low, self.high = 0, context.action_space.n - 1
        self.last = None

    def act(self, observation):
        if not (isinstance(observation, np.ndarray) and observation.dtype == np.float32 and observation.shape == (3,)):
            raise TypeError(f"unexpected observation {observation!r} of type {type(observation)}")
        if self.last is not None:
            if observation[0] > 0:
                self.low = self.last + 1
            elif observation[0] < 0:
                self.high = self.last - 1
        self.last = (self.low + self.high) // 2
        return CONVERT(self.last)


def make_policy(context):
    print("observations are float32 arrays")
    return _Policy(context)
"""

PROGRAMS: dict[str, str] = {
    "binary_search": BINARY_SEARCH.replace("CONVERT", "int"),
    "binary_search_numpy": BINARY_SEARCH.replace("CONVERT", "np.int64"),
    "chatty": """
        class _Policy:
            n = 0

            def act(self, observation):
                self.n += 1
                print("x" * 100_000)
                print(f"last-line-{self.n}")
                return 0


        def make_policy(context):
            return _Policy()
    """,
    "flood": """
        import sys


        class _Policy:
            n = 0

            def act(self, observation):
                self.n += 1
                sys.stdout.write("x" * 3_000_000 + "\\n")
                print(f"flood-line-{self.n}")
                return 0


        def make_policy(context):
            return _Policy()
    """,
    "flood_forever": """
        import sys


        class _Policy:
            def act(self, observation):
                while True:
                    sys.stderr.write("z" * 65536)


        def make_policy(context):
            return _Policy()
    """,
    "raise_in_make": """
        def make_policy(context):
            raise ValueError("make_policy refuses to work")
    """,
    "raise_in_act": """
        def _decide(observation):
            raise KeyError("boom in act")


        class _Policy:
            def act(self, observation):
                return _decide(observation)


        def make_policy(context):
            return _Policy()
    """,
    "loop_forever": """
        import subprocess


        class _Policy:
            def act(self, observation):
                while True:
                    pass


        def make_policy(context):
            helper = subprocess.Popen(["sleep", "60"])
            print(f"helper-pid={helper.pid}", flush=True)
            return _Policy()
    """,
    "sleep_per_act": """
        import time


        class _Policy:
            def act(self, observation):
                time.sleep(0.1)
                return 0


        def make_policy(context):
            return _Policy()
    """,
    "fast_zero": """
        class _Policy:
            def act(self, observation):
                return 0


        def make_policy(context):
            return _Policy()
    """,
    "memory_bomb": """
        class _Policy:
            def act(self, observation):
                hog = bytearray(3 * 1024**3)
                return len(hog)


        def make_policy(context):
            return _Policy()
    """,
    "action_99": """
        class _Policy:
            def act(self, observation):
                return 99


        def make_policy(context):
            return _Policy()
    """,
    "action_object": """
        class _Policy:
            def act(self, observation):
                return object()


        def make_policy(context):
            return _Policy()
    """,
    "action_fraction": """
        class _Policy:
            def act(self, observation):
                return 1.5


        def make_policy(context):
            return _Policy()
    """,
    "exit_abruptly": """
        import os


        class _Policy:
            def act(self, observation):
                print("about to leave")
                os._exit(3)


        def make_policy(context):
            return _Policy()
    """,
    "no_make_policy": """
        VALUE = 1
    """,
    "no_act": """
        def make_policy(context):
            return 42
    """,
    "syntax_error": """
        def make_policy(context:
            return None
    """,
    "burn_cpu": """
        class _Policy:
            def act(self, observation):
                x = 0
                while True:
                    x += 1


        def make_policy(context):
            return _Policy()
    """,
    "own_module": """
        import sys


        def make_policy(context):
            module = sys.modules["policy"]
            print(f"file={module.__file__}")
            print(f"rehearsal_on_path={[p for p in sys.path if 'rehearsal' in p]}")
            files = {name: str(getattr(m, "__file__", "")) for name, m in sys.modules.items()}
            print(f"rehearsal_modules={[name for name, file in files.items() if 'rehearsal' in file]}")
            return module


        def act(observation):
            return 0
    """,
    "randomness": """
        import random

        import numpy as np


        class _Policy:
            def act(self, observation):
                return 0


        def make_policy(context):
            print(f"random={random.random()!r} numpy={np.random.random()!r} sample={context.action_space.sample()!r}")
            print(f"seed={context.policy_seed}")
            return _Policy()
    """,
    "box_numpy": """
        import numpy as np


        class _Policy:
            def act(self, observation):
                assert isinstance(observation, np.ndarray) and observation.dtype == np.float32, repr(observation)
                return np.array([0.25, -0.5], dtype=np.float32)


        def make_policy(context):
            return _Policy()
    """,
    "box_list": """
        class _Policy:
            def act(self, observation):
                return [0.25, -0.5]


        def make_policy(context):
            return _Policy()
    """,
    "box_nan": """
        class _Policy:
            def act(self, observation):
                return [float("nan"), 0.0]


        def make_policy(context):
            return _Policy()
    """,
    "structured": """
        import numpy as np


        class _Policy:
            def act(self, observation):
                assert isinstance(observation, dict), type(observation)
                assert sorted(observation) == ["flags", "position", "steps"], sorted(observation)
                position = observation["position"]
                assert isinstance(position, np.ndarray) and position.dtype == np.float32 and position.shape == (2,)
                assert type(observation["steps"]) is int, type(observation["steps"])
                flags = observation["flags"]
                assert isinstance(flags, tuple) and all(type(f) is int for f in flags), repr(flags)
                print("structured-ok")
                return 3 if flags[0] else (0 if flags[1] else 1)


        def make_policy(context):
            return _Policy()
    """,
    "action_7": """
        class _Policy:
            def act(self, observation):
                return 7


        def make_policy(context):
            return _Policy()
    """,
}


def toy_counter_template() -> tuple[object, object, object, object]:
    """What a worker sends its zygote for ``toy-counter`` (its spaces, metadata and parameters): for zygotes forked
    by the tests themselves."""
    benchmark = resolve_benchmark(BenchmarkRef(name="toy-counter"))
    spec = benchmark.spec
    return benchmark.observation_space, benchmark.action_space, spec.metadata, spec.environment_parameters


def write_program(root: Path, name: str, source: str) -> Path:
    """A Program directory ``root/name`` whose policy.py is ``source``."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "policy.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return directory


@pytest.fixture(scope="session")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every Program in PROGRAMS, written once per session."""
    root = tmp_path_factory.mktemp("programs")
    return {name: write_program(root, name, source) for name, source in PROGRAMS.items()}


@pytest.fixture(scope="session")
def fast_limits() -> PolicyLimits:
    """Short limits so failing tests fail fast."""
    return PolicyLimits(act_timeout_seconds=1.0, make_policy_timeout_seconds=10.0, memory_bytes=1024**3)


TaskFactory = Callable[..., list[EpisodeTask]]


@pytest.fixture(scope="session")
def make_tasks(fast_limits: PolicyLimits) -> TaskFactory:
    """``make_tasks(program, count, benchmark=..., config=..., seed=..., scenario=..., **task_fields)``: tasks as
    the Host would plan them (Episode seeds from the Benchmark's ``episodes()``, Policy seed = index)."""

    def make(
        program: Path,
        count: int = 1,
        *,
        benchmark: str = "toy-counter",
        config: dict[str, object] | None = None,
        seed: int = 0,
        scenario: dict[str, object] | None = None,
        limits: PolicyLimits | None = None,
        record_trajectory: bool = True,
        policy_seed: int | None = None,
    ) -> list[EpisodeTask]:
        ref = BenchmarkRef(name=benchmark, config=config or {})
        episodes = resolve_benchmark(ref).episodes("train", seed=seed, count=count)
        if scenario is not None:
            episodes = [EpisodeSpec(e.split, e.index, e.seed, scenario) for e in episodes]
        return [
            EpisodeTask(
                episode=e,
                program_dir=program,
                policy_seed=e.index if policy_seed is None else policy_seed,
                limits=limits or fast_limits,
                record_trajectory=record_trajectory,
            )
            for e in episodes
        ]

    return make


@pytest.fixture(scope="module")
def counter() -> Iterator[LocalExecutor]:
    """One worker on the default ``toy-counter``, shared by a test module."""
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        yield executor
