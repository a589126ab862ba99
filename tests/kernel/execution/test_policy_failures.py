"""Real Policy processes on the toy Benchmarks: normal Episodes, every Policy failure code, and the limits."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from evoledger.benchmarks.toy import make_toy_counter
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.ledger.trajectories import decode_trajectory

MakeTasks = Callable[..., list[EpisodeTask]]


def _one(executor: LocalExecutor, tasks: list[EpisodeTask]) -> EpisodeOutcome:
    (outcome,) = list(executor.run(tasks))
    return outcome


def _missing_zero(tasks: list[EpisodeTask]) -> list[EpisodeTask]:
    """The first task whose hidden target is not 0 (so a Policy that always answers 0 never ends it early)."""
    benchmark = make_toy_counter()
    for task in tasks:
        env = benchmark.make_environment(task.episode)
        env.reset()
        if env.step(0).reward == 0.0:
            return [task]
    raise AssertionError("every Episode's target is 0")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_normal_episode_records_a_canonical_trajectory(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcomes = list(counter.run(make_tasks(programs["binary_search"], 4)))
    assert [o.status for o in outcomes] == ["ok"] * 4
    assert [o.index for o in outcomes] == [0, 1, 2, 3]
    for outcome in outcomes:
        trajectory = decode_trajectory(outcome.trajectory or b"")
        assert outcome.steps == trajectory.steps >= 1
        assert len(trajectory.observations) == outcome.steps + 1
        assert outcome.terminated
        assert outcome.episode_return == 1.0
        assert outcome.metrics["hits"] == 1
        assert b"observations are float32 arrays" in outcome.policy_log
        assert outcome.policy_seconds > 0
        assert outcome.environment_seconds > 0
        assert outcome.wall_seconds >= outcome.policy_seconds
        record = outcome.to_record(with_trajectory=True)
        assert record.trajectory == trajectory
        assert record.status == "ok"
        assert not record.failed
        assert outcome.to_record(with_trajectory=False).trajectory is None


def test_numpy_and_python_actions_record_the_same_bytes(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    plain = [o.trajectory for o in counter.run(make_tasks(programs["binary_search"], 3))]
    numpy = [o.trajectory for o in counter.run(make_tasks(programs["binary_search_numpy"], 3))]
    assert plain == numpy
    assert all(plain)


def test_recording_can_be_switched_off(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["binary_search"], record_trajectory=False))
    assert outcome.status == "ok"
    assert outcome.trajectory is None
    assert outcome.steps >= 1


def test_a_chatty_policy_keeps_only_the_tail_of_its_output(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, _missing_zero(make_tasks(programs["chatty"], 8)))
    assert outcome.status == "ok"
    assert len(outcome.policy_log) <= 64 * 1024
    assert outcome.steps == 10
    assert outcome.policy_log.endswith(b"last-line-10\n")
    assert outcome.policy_log.startswith(b"[evoledger:")
    assert b"bytes of output dropped" in outcome.policy_log


def test_a_policy_that_floods_its_output_is_neither_wedged_nor_blamed(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    # 3 MB per act: more than the output pipe holds, so the Policy blocks on it until the worker drains it.
    outcome = _one(counter, _missing_zero(make_tasks(programs["flood"], 3)))
    assert outcome.status == "ok", outcome.failure_message
    assert outcome.steps == 10
    assert outcome.policy_log.endswith(b"flood-line-10\n")
    assert b"bytes of output dropped" in outcome.policy_log


def test_a_policy_that_floods_its_output_forever_times_out_and_the_next_episode_runs(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    flooded, after = counter.run(make_tasks(programs["flood_forever"]) + make_tasks(programs["binary_search"]))
    assert flooded.status == "timeout"
    assert "act(observation) did not return within the act timeout of 1 s" in str(flooded.failure_message)
    assert flooded.policy_log.endswith(b"z" * 1000)
    assert after.status == "ok"


def test_an_exception_in_make_policy_is_reported_with_its_traceback(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["raise_in_make"]))
    assert outcome.status == "exception"
    assert outcome.steps == 0
    assert outcome.failure_message == "ValueError: make_policy refuses to work"
    assert "policy.py" in str(outcome.traceback)
    assert "make_policy" in str(outcome.traceback)
    assert "policy_runtime" not in str(outcome.traceback)  # the harness's own frames are cut
    assert outcome.to_record(with_trajectory=True).failed


def test_a_make_policy_that_fails_at_once_is_always_an_exception(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    """The first observation travels right behind the start message; a child that failed and ended in between must
    not turn the Episode into a protocol error (a race: many Episodes give it many chances to show)."""
    outcomes = list(counter.run(make_tasks(programs["raise_in_make"], 30)))
    assert {o.status for o in outcomes} == {"exception"}, [o.failure_message for o in outcomes]


def test_an_exception_in_act_is_reported_with_its_traceback(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["raise_in_act"]))
    assert outcome.status == "exception"
    assert outcome.steps == 0
    assert "KeyError" in str(outcome.failure_message)
    assert "_decide" in str(outcome.traceback)
    assert len(decode_trajectory(outcome.trajectory or b"").observations) == 1  # the reset observation


def test_a_syntax_error_is_an_exception(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["syntax_error"]))
    assert outcome.status == "exception"
    assert str(outcome.failure_message).startswith("SyntaxError")


def test_missing_make_policy_or_act_is_a_protocol_error(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    no_make = _one(counter, make_tasks(programs["no_make_policy"]))
    no_act = _one(counter, make_tasks(programs["no_act"]))
    assert (no_make.status, no_act.status) == ("protocol_error", "protocol_error")
    assert "make_policy" in str(no_make.failure_message)
    assert "no callable act" in str(no_act.failure_message)


def test_an_infinite_loop_times_out_and_its_process_group_is_killed(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    limits = PolicyLimits(act_timeout_seconds=0.3, memory_bytes=1024**3)
    began = time.monotonic()
    outcome = _one(counter, make_tasks(programs["loop_forever"], limits=limits))
    assert outcome.status == "timeout"
    assert "act timeout of 0.3 s" in str(outcome.failure_message)
    assert time.monotonic() - began < 30  # the loop never ends on its own; generous for a loaded machine
    assert 0.3 <= outcome.policy_seconds < 10
    helper = int(outcome.policy_log.decode().split("helper-pid=")[1].split()[0])
    deadline = time.monotonic() + 5
    while _alive(helper) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(helper), "the Policy's own subprocess survived the timeout"


def test_the_episode_policy_budget_counts_every_act(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    roomy = PolicyLimits(act_timeout_seconds=1.0, episode_policy_seconds=30.0)
    ok = _one(counter, _missing_zero(make_tasks(programs["sleep_per_act"], 8, limits=roomy)))
    assert ok.status == "ok"
    assert ok.steps == 10
    assert ok.policy_seconds >= 0.1 * ok.steps
    tight = PolicyLimits(act_timeout_seconds=1.0, episode_policy_seconds=0.25)
    outcome = _one(counter, _missing_zero(make_tasks(programs["sleep_per_act"], 8, limits=tight)))
    assert outcome.status == "timeout"
    assert "Policy time budget" in str(outcome.failure_message)
    assert 1 <= outcome.steps <= 2  # the budget (not the 10-step limit) ended it: 0.1 s acts, 0.25 s in all


def test_the_cpu_limit_is_a_backstop_reported_as_timeout(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    limits = PolicyLimits(act_timeout_seconds=30.0, cpu_seconds=1, memory_bytes=1024**3)
    outcome = _one(counter, make_tasks(programs["burn_cpu"], limits=limits))
    assert outcome.status == "timeout"
    assert "CPU time limit of 1 s" in str(outcome.failure_message)


def test_a_memory_bomb_is_a_memory_failure(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["memory_bomb"]))  # fast_limits: 1 GiB address space
    assert outcome.status == "memory"
    assert str(outcome.failure_message).startswith("MemoryError")


def test_invalid_actions_end_the_episode_as_invalid_action(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    out_of_range = _one(counter, make_tasks(programs["action_99"]))
    unsendable = _one(counter, make_tasks(programs["action_object"]))
    fraction = _one(counter, make_tasks(programs["action_fraction"]))
    assert [out_of_range.status, unsendable.status, fraction.status] == ["invalid_action"] * 3
    assert "99" in str(out_of_range.failure_message)
    assert "cannot be sent" in str(unsendable.failure_message)
    assert "1.5" in str(fraction.failure_message)  # never truncated to 1


def test_os_exit_is_a_protocol_error(counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    outcome = _one(counter, make_tasks(programs["exit_abruptly"]))
    assert outcome.status == "protocol_error"
    assert "exited with status 3" in str(outcome.failure_message)


def test_a_failed_policy_does_not_hurt_the_next_episode(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    tasks = [*make_tasks(programs["exit_abruptly"]), *make_tasks(programs["binary_search"])]
    pid = counter.worker_pids
    assert [o.status for o in counter.run(tasks)] == ["protocol_error", "ok"]
    assert counter.worker_pids == pid


def test_policy_randomness_is_seeded_from_the_policy_seed(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    def log(seed: int) -> bytes:
        return _one(counter, make_tasks(programs["randomness"], policy_seed=seed)).policy_log

    assert log(11) == log(11)
    assert log(11) != log(12)
    assert b"seed=11\n" in log(11)
    # The very values a fresh process seeded with 11 draws: whatever the zygote rehearsed before the fork is undone.
    action_space = resolve_benchmark(BenchmarkRef(name="toy-counter")).action_space
    action_space.seed(11 + 2)
    expected = (
        f"random={random.Random(11).random()!r} numpy={np.random.RandomState(11).random_sample()!r} "
        f"sample={action_space.sample()!r}\n"
    )
    assert expected.encode() in log(11)


def test_the_zygotes_rehearsal_leaves_no_trace_for_the_policy(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    outcome = _one(counter, make_tasks(programs["own_module"]))
    assert outcome.status == "ok", outcome.failure_message
    log = outcome.policy_log.decode()
    assert f"file={programs['own_module'] / 'policy.py'}\n" in log
    assert "rehearsal_on_path=[]\n" in log
    assert "rehearsal_modules=[]\n" in log


def test_the_program_directory_gets_no_bytecode_cache(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    _one(counter, make_tasks(programs["binary_search"]))
    assert sorted(p.name for p in Path(programs["binary_search"]).iterdir()) == ["policy.py"]
