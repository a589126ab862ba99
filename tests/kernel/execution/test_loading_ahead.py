"""The next Episode's Policy child loads its Program while the worker runs the Episode before (same Program only).

Through the real LocalExecutor on CartPole, whose Episodes here last seconds (the Policy sleeps in ``act``): the task
queued behind the running one is read ahead, and the child forked for it loads ``policy.py`` and runs ``make_policy``
on the zygote's spare CPU. What this must never change: which Episode a failure, a timeout or a signal is blamed on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef
from evoledger.tests.kernel.execution.conftest import write_program

MakeTasks = Callable[..., list[EpisodeTask]]

pytestmark = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="loading ahead needs a CPU that no worker is pinned to"
)

LIMITS = PolicyLimits(act_timeout_seconds=10, make_policy_timeout_seconds=10, memory_bytes=1024**3)

# Balances the pole for the whole 500 steps, 2 ms a step: an Episode lasts over a second, time enough for the next
# Episode's child to be forked and set up however busy the machine is.
REPORTER = """
import os
import time


class _Policy:
    def __init__(self):
        self.steps = 0

    def act(self, observation):
        if self.steps == 0:
            print(f"acting on {sorted(os.sched_getaffinity(0))}", flush=True)
        self.steps += 1
        time.sleep(0.002)
        return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def make_policy(context):
    print(f"loaded on {sorted(os.sched_getaffinity(0))}", flush=True)
    SLOW
    return _Policy()
"""


@pytest.fixture(scope="module")
def cartpole() -> Iterator[LocalExecutor]:
    with LocalExecutor(BenchmarkRef(name="cartpole"), workers=1) as executor:
        yield executor


def _cpus(log: bytes, what: str) -> list[int]:
    found = re.search(rf"{what} on \[([0-9, ]+)\]", log.decode())
    assert found is not None, log.decode()[-500:]
    return [int(c) for c in found.group(1).split(",")]


def _tasks(make_tasks: MakeTasks, program: Path, count: int) -> list[EpisodeTask]:
    return make_tasks(program, count, benchmark="cartpole", limits=LIMITS)


def test_the_next_episode_of_the_same_program_loads_on_the_spare_cpu_while_this_one_runs(
    cartpole: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    program = write_program(tmp_path, "reporter", REPORTER.replace("SLOW", "pass"))
    outcomes = list(cartpole.run(_tasks(make_tasks, program, 3)))
    assert [(o.status, o.steps) for o in outcomes] == [("ok", 500)] * 3, outcomes[0].failure_message
    acting = [_cpus(o.policy_log, "acting") for o in outcomes]
    loaded = [_cpus(o.policy_log, "loaded") for o in outcomes]
    assert all(len(cpus) == 1 for cpus in acting)  # every Policy acts on its worker's CPU
    assert loaded[0] == acting[0]  # the first had nothing to load ahead of: it loaded when its Episode began
    for load, act in zip(loaded[1:], acting[1:], strict=True):  # the others loaded while the one before ran
        assert act[0] not in load, (load, act)


def test_a_program_loaded_ahead_is_not_loaded_ahead_of_another_programs_episode(
    cartpole: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """Its Policy would run beside another Program's Episode (and could disturb it): never for another Program."""
    first = write_program(tmp_path, "first", REPORTER.replace("SLOW", "pass"))
    second = write_program(tmp_path, "second", REPORTER.replace("SLOW", "pass"))
    outcomes = list(cartpole.run([*_tasks(make_tasks, first, 1), *_tasks(make_tasks, second, 1)]))
    assert [o.status for o in outcomes] == ["ok", "ok"]
    assert _cpus(outcomes[1].policy_log, "loaded") == _cpus(outcomes[1].policy_log, "acting")


def test_a_make_policy_that_fails_while_loaded_ahead_fails_its_own_episode_with_its_traceback(
    cartpole: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    source = REPORTER.replace("SLOW", "if context.policy_seed == 1:\n        raise ValueError('seed one refuses')")
    program = write_program(tmp_path, "fails_second", source)
    outcomes = list(cartpole.run(_tasks(make_tasks, program, 3)))
    assert [o.status for o in outcomes] == ["ok", "exception", "ok"], outcomes[1].failure_message
    assert outcomes[1].failure_message == "ValueError: seed one refuses"
    assert 'policy.py", line 20, in make_policy' in str(outcomes[1].traceback)


def test_a_make_policy_loaded_ahead_still_times_out(
    cartpole: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """It began while the Episode before ran, and ran on past its timeout counted from its own Episode's start."""
    source = REPORTER.replace("SLOW", "if context.policy_seed == 1:\n        time.sleep(30)")
    program = write_program(tmp_path, "slow_second", source)
    limits = PolicyLimits(act_timeout_seconds=10, make_policy_timeout_seconds=2, memory_bytes=1024**3)
    outcomes: list[EpisodeOutcome] = list(cartpole.run(make_tasks(program, 3, benchmark="cartpole", limits=limits)))
    assert [o.status for o in outcomes] == ["ok", "timeout", "ok"], outcomes[1].failure_message
    assert "make_policy" in str(outcomes[1].failure_message)
    assert outcomes[1].wall_seconds < 20


# Seed 0's Policy waits (stepping) until its next Episode's child has loaded ahead (that child leaves a marker file in
# the Program folder, its working directory), signals it, and fails its own Episode; seed 1's Episode must run as if
# nothing had happened: a child so signalled is never handed on.
HIT_THE_CHILD_LOADED_AHEAD = """
import os
import signal
import time


class _Hitter:
    def __init__(self):
        self.deadline = time.monotonic() + 20

    def act(self, observation):
        time.sleep(0.002)
        loaded = [int(n.split("-")[1]) for n in os.listdir(".") if n.startswith("loaded-")]
        targets = [pid for pid in loaded if pid != os.getpid()]
        if targets or time.monotonic() > self.deadline:
            for pid in targets:
                for name in SIGNALS:
                    os.kill(pid, getattr(signal, name))
            print("hit", targets, flush=True)
            raise SystemExit("done")
        return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


class _Balancer:
    def act(self, observation):
        return 1 if observation[2] + 0.5 * observation[3] > 0 else 0


def make_policy(context):
    if context.policy_seed == 0:
        return _Hitter()
    open(f"loaded-{os.getpid()}", "w").close()
    return _Balancer()
"""


@pytest.mark.parametrize(
    "signals", [("SIGSTOP",), ("SIGKILL",), ("SIGINT",), ("SIGTERM",), ("SIGSTOP", "SIGCONT")], ids="+".join
)
def test_a_policy_cannot_spoil_the_next_episode_by_signalling_the_child_loaded_ahead_for_it(
    cartpole: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path, signals: tuple[str, ...]
) -> None:
    program = write_program(tmp_path, "hitter", HIT_THE_CHILD_LOADED_AHEAD.replace("SIGNALS", repr(signals)))
    first, second = cartpole.run(_tasks(make_tasks, program, 2))
    assert first.status == "exception", first.failure_message
    log = first.policy_log.decode()
    assert "hit [" in log, log
    assert "hit []" not in log, log  # it found the child loaded ahead
    assert second.status == "ok", second.failure_message
    assert second.steps == 500
