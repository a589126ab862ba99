"""LocalExecutor: the Policy's view, infra faults, worker replacement, parallel determinism, and usage errors."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution import (
    POLICY_CONTEXT_FIELDS,
    EpisodeOutcome,
    EpisodeTask,
    Executor,
    LocalExecutor,
    PolicyLimits,
)
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import ConfigError, InfraError, InputError
from evoledger.ledger.trajectories import decode_trajectory

MakeTasks = Callable[..., list[EpisodeTask]]

MEMORY_SPY = """
import hashlib
import json
import re
from pathlib import Path


def _scan():
    canaries, numbers = set(), set()
    with open("/proc/self/maps", encoding="ascii") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("[v")):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            canaries.update(m.decode() for m in re.findall(rb"CANARY-[0-9a-f]{16}", data))
            numbers.update(hashlib.sha256(m).hexdigest() for m in re.findall(rb"(?<![0-9])[0-9]{15,20}(?![0-9])", data))
    return canaries, numbers


class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    control = Path("control.txt").read_text()  # brings a known canary and a known number into memory
    canaries, numbers = _scan()
    wanted = json.loads(Path("wanted.json").read_text())
    print(json.dumps({
        "dir": sorted(name for name in dir(context) if not name.startswith("_")),
        "vars": sorted(vars(context)),
        "canaries": sorted(canaries),
        "numbers_found": sorted(name for name, digest in wanted.items() if digest in numbers),
        "control_length": len(control),
    }))
    return _Policy()
"""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_policy_sees_only_the_public_context_and_no_host_secret(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    program = tmp_path / "spy"
    program.mkdir()
    (program / "policy.py").write_text(MEMORY_SPY, encoding="utf-8")
    control_number = "4711471147114711471"
    (program / "control.txt").write_text(f"CANARY-{'c' * 16} {control_number}", encoding="utf-8")
    earlier_seed, seed = 7351092846273019485, 6028371946510273849  # irregular: no library holds these digits
    (program / "wanted.json").write_text(
        json.dumps({"control": _sha(control_number), "earlier_seed": _sha(str(earlier_seed)), "seed": _sha(str(seed))}),
        encoding="utf-8",
    )
    (base,) = make_tasks(programs["binary_search"])
    earlier = EpisodeTask(
        episode=EpisodeSpec("train", 5, earlier_seed, {"canary": "CANARY-" + "a" * 16}),
        program_dir=programs["binary_search"],
        policy_seed=1,
    )
    spy = EpisodeTask(
        episode=EpisodeSpec("train", 6, seed, {"canary": "CANARY-" + "b" * 16}),
        program_dir=program,
        policy_seed=2,
        limits=PolicyLimits(make_policy_timeout_seconds=60.0),
    )
    outcomes = list(counter.run([base, earlier, spy]))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], outcomes[2].failure_message
    report = json.loads(outcomes[2].policy_log.decode().strip().splitlines()[-1])
    assert report["dir"] == sorted(POLICY_CONTEXT_FIELDS)
    assert report["vars"] == sorted(POLICY_CONTEXT_FIELDS)
    assert report["canaries"] == ["CANARY-" + "c" * 16]  # the control is found; no Episode's scenario is
    assert report["numbers_found"] == ["control"]  # neither this Episode's Host seed nor an earlier one's


def test_environment_time_does_not_count_against_the_policy(programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    config = {"step_sleep_seconds": 0.05, "terminate_on_hit": False, "max_episode_steps": 6}
    limits = PolicyLimits(act_timeout_seconds=0.2, episode_policy_seconds=0.2)
    with LocalExecutor(BenchmarkRef(name="toy-counter", config=config)) as executor:
        (outcome,) = executor.run(make_tasks(programs["fast_zero"], config=config, limits=limits))
    assert outcome.status == "ok", outcome.failure_message
    assert outcome.steps == 6
    assert outcome.truncated
    assert outcome.environment_seconds >= 0.3 > outcome.policy_seconds


def test_an_environment_fault_is_an_infra_fault_and_the_worker_survives(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    pids = counter.worker_pids
    faulty_step = make_tasks(programs["fast_zero"], scenario={"fail_on_step": 1})
    faulty_reset = make_tasks(programs["fast_zero"], scenario={"fail_on_reset": True})
    healthy = make_tasks(programs["binary_search"])
    outcomes = list(counter.run([*faulty_step, *faulty_reset, *healthy]))
    assert [o.status for o in outcomes] == ["infra_fault", "infra_fault", "ok"]
    assert "Environment.step raised RuntimeError" in str(outcomes[0].failure_message)
    assert "Environment.reset raised RuntimeError" in str(outcomes[1].failure_message)
    assert outcomes[1].policy_seconds == 0.0  # no Policy was started for an Environment that never reset
    assert not outcomes[0].to_record(with_trajectory=False).failed
    assert counter.worker_pids == pids


def test_a_killed_worker_is_an_infra_fault_and_is_replaced(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    program = tmp_path / "slow"
    program.mkdir()
    marker = tmp_path / "started"
    (program / "policy.py").write_text(
        "import time\n"
        "class _Policy:\n"
        "    def act(self, observation):\n"
        "        time.sleep(0.2)\n"
        "        return 0\n"
        "def make_policy(context):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    return _Policy()\n",
        encoding="utf-8",
    )
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        victim = executor.worker_pids[0]

        def kill_when_started() -> None:
            deadline = time.monotonic() + 20
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_when_started)
        killer.start()
        tasks = [*make_tasks(program), *make_tasks(programs["binary_search"], 2)]
        outcomes = list(executor.run(tasks))
        killer.join()
        assert [o.status for o in outcomes] == ["infra_fault", "ok", "ok"]
        assert f"pid {victim}" in str(outcomes[0].failure_message)
        assert "SIGKILL" in str(outcomes[0].failure_message)
        assert executor.worker_pids[0] != victim
        assert [o.status for o in executor.run(make_tasks(programs["binary_search"]))] == ["ok"]
        idle_victim = executor.worker_pids[0]
        os.kill(idle_victim, signal.SIGKILL)  # dies between runs: its next task never started, so it is re-queued
        while Path(f"/proc/{idle_victim}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            time.sleep(0.01)
        again = list(executor.run(make_tasks(programs["binary_search"], 2)))
        assert [o.status for o in again] == ["ok", "ok"]
        assert executor.worker_pids[0] not in (victim, idle_victim)


def test_two_workers_give_identical_trajectories_in_task_order(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    program = tmp_path / "uneven"
    program.mkdir()
    source = (programs["binary_search"] / "policy.py").read_text(encoding="utf-8")
    uneven = source.replace(
        "def make_policy(context):",
        "def make_policy(context):\n    import time\n    time.sleep(0.15 if context.policy_seed % 3 == 0 else 0.0)",
    )
    (program / "policy.py").write_text(uneven, encoding="utf-8")
    tasks = make_tasks(program, 6, seed=3)
    serial = list(counter.run(tasks))
    with LocalExecutor(BenchmarkRef(name="toy-counter"), workers=2) as parallel:
        assert len(set(parallel.worker_pids)) == 2
        concurrent = list(parallel.run(tasks))
    assert [o.index for o in concurrent] == [0, 1, 2, 3, 4, 5]
    assert [o.trajectory for o in concurrent] == [o.trajectory for o in serial]
    assert all(o.status == "ok" for o in concurrent)


def test_box_observations_and_actions(programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    with LocalExecutor(BenchmarkRef(name="toy-continuous")) as executor:
        tasks = [
            *make_tasks(programs["box_numpy"], benchmark="toy-continuous"),
            *make_tasks(programs["box_list"], benchmark="toy-continuous"),
            *make_tasks(programs["box_nan"], benchmark="toy-continuous"),
        ]
        numpy_actions, list_actions, nan_action = executor.run(tasks)
    assert numpy_actions.status == list_actions.status == "ok"
    assert numpy_actions.trajectory == list_actions.trajectory
    assert decode_trajectory(numpy_actions.trajectory or b"").actions[0] == [0.25, -0.5]
    assert nan_action.status == "invalid_action"
    assert "NaN" in str(nan_action.failure_message)


def test_structured_observations_arrive_as_the_environment_made_them(
    programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    with LocalExecutor(BenchmarkRef(name="toy-structured")) as executor:
        outcomes = list(executor.run(make_tasks(programs["structured"], 3, benchmark="toy-structured")))
    assert [o.status for o in outcomes] == ["ok"] * 3, outcomes[0].failure_message
    assert all(b"structured-ok" in o.policy_log for o in outcomes)
    first = decode_trajectory(outcomes[0].trajectory or b"").observations[0]
    assert set(first) == {"position", "steps", "flags"}
    assert first["steps"] == 0
    assert len(first["flags"]) == 2


def test_an_environment_crashing_on_an_out_of_space_action_blames_the_policy(
    programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    config = {"check_actions": False}
    with LocalExecutor(BenchmarkRef(name="toy-structured", config=config)) as executor:
        bad, faulty = executor.run(
            [
                *make_tasks(programs["action_7"], benchmark="toy-structured", config=config),
                *make_tasks(
                    programs["fast_zero"], benchmark="toy-structured", config=config, scenario={"fail_on_step": 1}
                ),
            ]
        )
    assert bad.status == "invalid_action"
    assert "outside the action space" in str(bad.failure_message)
    assert faulty.status == "infra_fault"  # a valid action: the crash is the Environment's


def test_a_busy_worker_gets_its_next_task_queued_and_a_queued_task_survives_its_death(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """The next task waits in the worker's channel while it runs one, so it starts without waiting for this process
    to read the outcome; a task queued behind an Episode its worker dies in never started: it runs elsewhere, ok."""
    program = tmp_path / "held"
    program.mkdir()
    release = tmp_path / "release"
    (program / "policy.py").write_text(
        "import os, time\n"
        "class _Policy:\n"
        "    def act(self, observation):\n"
        f"        while not os.path.exists({str(release)!r}):\n"
        "            time.sleep(0.01)\n"
        "        return 0\n"
        "def make_policy(context):\n"
        "    return _Policy()\n",
        encoding="utf-8",
    )
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        victim = executor.worker_pids[0]
        held = PolicyLimits(act_timeout_seconds=60, make_policy_timeout_seconds=60, memory_bytes=1024**3)
        run = executor.run([*make_tasks(program, limits=held), *make_tasks(programs["binary_search"], 2)])

        def kill_once_queued() -> None:
            _wait_for_queued(executor)
            os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_once_queued)
        killer.start()
        outcomes: list[EpisodeOutcome] = []
        consumer = threading.Thread(target=lambda: outcomes.extend(run), daemon=True)
        consumer.start()
        consumer.join(120)  # a queued task lost with its worker would leave the run waiting for it forever
        killer.join()
        release.touch()
        assert not consumer.is_alive(), "the run never ended: the task queued behind the killed Episode was lost"
        assert [o.status for o in outcomes] == ["infra_fault", "ok", "ok"]
        assert [o.status for o in executor.run(make_tasks(programs["binary_search"], 3))] == ["ok", "ok", "ok"]


def test_a_caller_that_holds_the_outcomes_does_not_get_a_busy_worker_killed(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """The caller holds the run for longer than the watchdog of the task after the one it was given: that task ended
    meanwhile (its outcome waits unread) and the worker runs the next, slow one. The worker is not stuck: nothing is
    killed, and every Episode is ok."""
    slow = tmp_path / "slow_start"
    slow.mkdir()
    (slow / "policy.py").write_text(
        "import time\n"
        "class _Policy:\n"
        "    def act(self, observation):\n"
        "        return 0\n"
        "def make_policy(context):\n"
        "    time.sleep(8)\n"
        "    return _Policy()\n",
        encoding="utf-8",
    )
    short = PolicyLimits(act_timeout_seconds=1, make_policy_timeout_seconds=1, episode_policy_seconds=1)
    long = PolicyLimits(act_timeout_seconds=5, make_policy_timeout_seconds=60, episode_policy_seconds=60)
    fast = make_tasks(programs["binary_search"], 2, limits=short)  # each: a watchdog of 3.5 s
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        worker = executor.worker_pids[0]
        run = executor.run([*fast, *make_tasks(slow, limits=long)])
        first = next(run)
        time.sleep(6)  # the second Episode ends; the slow one starts behind it and is still setting up
        rest = list(run)
        assert [o.status for o in [first, *rest]] == ["ok", "ok", "ok"], [o.failure_message for o in rest]
        assert executor.worker_pids[0] == worker


def _wait_for_queued(executor: LocalExecutor) -> None:
    deadline = time.monotonic() + 30
    worker = executor._workers[0]  # the coordinator's own record of what it sent
    while not (worker.accepted and worker.queued):  # the held Episode runs, the next task waits behind it
        assert time.monotonic() < deadline, "no task was queued behind the running one"
        time.sleep(0.01)


def test_an_abandoned_run_does_not_leak_into_the_next(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    tasks = make_tasks(programs["binary_search"], 3)
    run = counter.run(tasks)
    assert isinstance(run, types.GeneratorType)
    first = next(run)
    with pytest.raises(InputError, match="still being iterated"):
        counter.run(tasks)
    run.close()
    again = list(counter.run(tasks))
    assert [o.index for o in again] == [0, 1, 2]
    assert again[0].trajectory == first.trajectory


def test_usage_errors_are_reported_clearly(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="unknown benchmark 'toy-countr'"):
        LocalExecutor(BenchmarkRef(name="toy-countr"))
    with pytest.raises(ConfigError, match="n_actions"):
        LocalExecutor(BenchmarkRef(name="toy-counter", config={"n_actions": 1}))
    with pytest.raises(ConfigError, match="workers must be a positive integer"):
        LocalExecutor(BenchmarkRef(name="toy-counter"), workers=0)
    with pytest.raises(ConfigError, match=r"has no policy\.py"):
        counter.run(make_tasks(tmp_path))
    with pytest.raises(ConfigError, match="not an EpisodeTask"):
        counter.run(["nope"])  # type: ignore[list-item]
    executor = LocalExecutor(BenchmarkRef(name="toy-counter"), pin_cpus=False)
    assert isinstance(executor, Executor)
    executor.close()
    executor.close()
    with pytest.raises(InputError, match="closed"):
        executor.run(make_tasks(programs["binary_search"]))


def test_workers_are_pinned_one_cpu_each() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    with LocalExecutor(BenchmarkRef(name="toy-counter"), workers=2) as executor:
        pinned = [os.sched_getaffinity(pid) for pid in executor.worker_pids]
    assert pinned == [{cpus[0]}, {cpus[1 % len(cpus)]}]


def test_no_processes_are_left_behind(programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        list(executor.run(make_tasks(programs["binary_search"], 2)))
        worker = executor.worker_pids[0]
        children = Path(f"/proc/{worker}/task/{worker}/children").read_text().split()
        assert len(children) == 1  # the zygote (its Policy children belong to it)
        zygote = int(children[0])
        deadline = time.monotonic() + 30
        while not Path(f"/proc/{zygote}/task/{zygote}/children").read_text().split():
            assert time.monotonic() < deadline, "no spare Policy child was forked ahead"
            time.sleep(0.01)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{zygote}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not Path(f"/proc/{worker}").exists()
    assert not Path(f"/proc/{zygote}").exists()


MISBEHAVING_BENCHMARK = """
import math

import numpy as np
from evoledger.benchmarks.toy import make_toy_counter
from evoledger.kernel.authoring import InvalidAction, Step


class _Env:
    def __init__(self, mode):
        self.mode = mode

    def reset(self):
        if self.mode == "reject_in_reset":
            raise InvalidAction("reset is not where actions are judged")
        if self.mode == "unsendable_observation":
            return object()
        return np.zeros(3, dtype=np.float32)

    def step(self, action):
        observation = np.zeros(3, dtype=np.float32)
        if self.mode == "not_a_step":
            return (observation, 1.0, False, False, {})
        if self.mode == "nan_reward":
            return Step(observation, math.nan, False, False)
        if self.mode == "bad_metrics":
            return Step(observation, 0.0, False, False, {"m": object()})
        if self.mode == "close_fails":
            return Step(observation, 0.0, True, False)
        raise AssertionError(self.mode)

    def close(self):
        if self.mode == "close_fails":
            raise OSError("cannot close")


class _Benchmark:
    def __init__(self):
        self._inner = make_toy_counter()
        self.spec = self._inner.spec
        self.observation_space = self._inner.observation_space
        self.action_space = self._inner.action_space

    def episodes(self, split, *, seed, count):
        return self._inner.episodes(split, seed=seed, count=count)

    def make_environment(self, episode):
        return _Env(episode.scenario["mode"])

    def feedback(self, records):
        return self._inner.feedback(records)


def make():
    return _Benchmark()


def broken():
    raise RuntimeError("this factory is broken")
"""


def test_misbehaving_environments_are_infra_faults(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "misbehaving_benchmark.py").write_text(MISBEHAVING_BENCHMARK, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    modes = ["reject_in_reset", "unsendable_observation", "not_a_step", "nan_reward", "bad_metrics", "close_fails"]
    tasks = [make_tasks(programs["fast_zero"], scenario={"mode": mode})[0] for mode in modes]
    with LocalExecutor(BenchmarkRef(name="misbehaving_benchmark:make")) as executor:
        outcomes = list(executor.run(tasks))
    assert [o.status for o in outcomes] == ["infra_fault"] * len(modes)
    messages = [str(o.failure_message) for o in outcomes]
    assert "only step() may reject" in messages[0]
    assert "observation that cannot be sent" in messages[1]
    assert "expected an evoledger Step" in messages[2]
    assert "non-finite reward" in messages[3]
    assert "metrics that cannot be recorded" in messages[4]
    assert "Environment.close raised OSError" in messages[5]
    with pytest.raises(InfraError, match="failed to start: RuntimeError: this factory is broken"):
        LocalExecutor(BenchmarkRef(name="misbehaving_benchmark:broken"))
