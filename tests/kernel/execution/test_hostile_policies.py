"""Hostile Policies through the real LocalExecutor (and one real Run): fork bombs, attacks on the worker, escapes,
reads of Host data, and garbage actions from a Box space.

Each case ends the Episode with a clear status and leaves the executor usable for the next Episode. Cases where the
local backend *cannot* stop a Policy are pinned here as measured facts (so docs/security.md stays true) or as strict
xfails naming the bug and its fix. Cases already covered elsewhere (infinite loops, sleep, memory bombs, bulk output,
exceptions, ``os._exit``, NaN Box actions, out-of-range Discrete actions, the Policy's own memory) live in
``test_policy_failures.py`` and ``test_executor.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from evoledger.kernel.authoring import EpisodeSpec
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.events import EpisodeFinished, EpisodePlanned
from evoledger.ledger.store import Ledger
from evoledger.tests.support.hostile_programs import KILL_WORKER_GROUP, KILL_ZYGOTE, stopper
from evoledger.tests.support.process_tree import wait_until

MakeTasks = Callable[..., list[EpisodeTask]]

FAST = PolicyLimits(act_timeout_seconds=0.5, make_policy_timeout_seconds=1.0, memory_bytes=1024**3)

# A fork bomb bounded for the safety of the test machine: 6 doublings = 64 processes (an unbounded one would be
# stopped by nothing but the Episode's timeout; see docs/security.md). Each process reports itself in one write.
FORK_BOMB = """
import os
import time


def _bomb():
    for _ in range(6):
        try:
            os.fork()
        except OSError:
            pass
    os.write(1, f"bomb pid={os.getpid()} pgid={os.getpgid(0)}\\n".encode())
    while True:
        time.sleep(0.01)


class _Policy:
    def act(self, observation):
        IN_ACT
        return 0


def make_policy(context):
    IN_MAKE
    return _Policy()
"""


# Signals the next Episode's Policy child, forked ahead by the same zygote (found by name among its children). It waits
# for that child for up to HIT_WAIT seconds: the fork is requested before this Policy starts, and is quick on a quiet
# machine, but was once not seen within 20 s under load 12. If none comes, it says what the zygote had then.
HIT_WAIT = 100
HIT_THE_NEXT_CHILD = """
import os
import signal
import time


def _ours(pid):
    try:  # a child the zygote reaps meanwhile is gone from /proc: not a target (and no reason to fail)
        return b"evoledger.kernel.execution.worker" in open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return False


def _siblings():
    zygote = os.getppid()
    children = open(f"/proc/{zygote}/task/{zygote}/children").read().split()
    return [int(c) for c in children if int(c) != os.getpid() and _ours(int(c))]


def _zygote_children():
    zygote = os.getppid()
    found = []
    for child in open(f"/proc/{zygote}/task/{zygote}/children").read().split():
        try:
            state = open(f"/proc/{child}/stat").read().rsplit(")", 1)[1].split()[0]
            command = open(f"/proc/{child}/cmdline", "rb").read().replace(b"\\0", b" ")[-60:]
        except OSError:
            state, command = "gone", b""
        found.append((int(child), state, command))
    return f"zygote {zygote} children {found}"


class _Policy:
    def act(self, observation):
        began = time.monotonic()
        while not _siblings() and time.monotonic() < began + WAIT:
            time.sleep(0.01)
        targets = _siblings()
        for pid in targets:
            try:
                os.kill(pid, signal.SIGNAL)
            except ProcessLookupError:  # reaped since it was listed
                pass
        print("hit", targets, flush=True)
        if not targets:
            print(f"after {time.monotonic() - began:.1f} s:", _zygote_children(), flush=True)
        raise SystemExit("done")


def make_policy(context):
    return _Policy()
"""
STOP_THE_WORKER = stopper("worker")
STOP_THE_ZYGOTE = stopper("zygote")

SETSID_ESCAPE = """
import os
import time


class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    pid = os.fork()
    if pid == 0:
        os.setsid()  # leaves the Episode's process group
        time.sleep(60)
        os._exit(0)
    os.write(1, f"escapee={pid}\\n".encode())
    return _Policy()
"""

WORKER_MEMORY_SPY = """
import os


def _worker():
    stat = open(f"/proc/{os.getppid()}/stat", encoding="ascii").read()
    return int(stat.rsplit(")", 1)[1].split()[1])


def make_policy(context):
    worker, hits = _worker(), 0
    with open(f"/proc/{worker}/maps", encoding="ascii") as maps, open(f"/proc/{worker}/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            if "rw" not in parts[1]:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            try:
                mem.seek(start)
                hits += mem.read(end - start).count(b"SEED")
            except (OSError, ValueError, OverflowError):
                continue
    print(f"worker={worker} hits={hits}")

    class _Policy:
        def act(self, observation):
            return 0

    return _Policy()
"""

ENVIRONMENT_SPY = """
import json
import os


def make_policy(context):
    with open(f"/proc/{os.getppid()}/environ", "rb") as environ:
        parent = environ.read()
    print(json.dumps({"own": os.environ.get("HOSTILE_TEST_API_KEY"), "parent": b"CANARY" in parent}))

    class _Policy:
        def act(self, observation):
            return 0

    return _Policy()
"""

# Reads what the local backend leaves reachable, prints it, then fails so that its log reaches the Agent's mirror.
FILESYSTEM_SPY = """
import json
import os
import sqlite3
from pathlib import Path


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        return f"error {exc.errno}".encode()


def _ledger_held_by_an_ancestor():
    pid = os.getpid()
    for _ in range(8):  # Policy -> zygote -> worker -> Host: the Host holds the ledger open
        stat = _read(f"/proc/{pid}/stat")
        pid = int(stat.rsplit(b")", 1)[1].split()[1]) if b")" in stat else 0
        if pid <= 1:
            return None
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.endswith("/ledger.sqlite"):
                    return Path(target)
        except OSError:
            pass
    return None


def make_policy(context):
    here = Path.cwd()
    ledger = next((d / "ledger.sqlite" for d in (here, *here.parents) if (d / "ledger.sqlite").is_file()), None)
    ledger = ledger or _ledger_held_by_an_ancestor()
    report = {"cwd": str(here), "ledger": None if ledger is None else str(ledger)}
    if ledger is not None:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
        rows = db.execute("SELECT kind, payload FROM events WHERE visibility = 'host'").fetchall()
        planned = [json.loads(payload) for kind, payload in rows if kind == "episode-planned"]
        report["assessment_seeds"] = [p["env_seed"] for p in planned if p["split"] == "assessment"]
        report["workspace_writable"] = os.access(ledger.parent / "workspace" / "program", os.W_OK)
    parent = os.getppid()
    report["parent_cmdline"] = _read(f"/proc/{parent}/cmdline").replace(b"\\0", b" ").decode()
    report["parent_environ_bytes"] = len(_read(f"/proc/{parent}/environ"))
    print("SPY " + json.dumps(report), flush=True)
    raise RuntimeError("spy done")
"""


def _program(root: Path, name: str, source: str) -> Path:
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "policy.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return directory


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``, found by scanning /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and fields[2] == str(pgid) and fields[0] != "Z":
                members.append(int(entry))
    return members


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


# ------------------------------------------------------------------------------------------------ process attacks


@pytest.mark.parametrize("where", ["make_policy", "act"])
def test_a_fork_bomb_times_out_and_leaves_no_process_behind(
    where: str, counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, hostile: Path
) -> None:
    source = FORK_BOMB.replace("IN_MAKE", "_bomb()" if where == "make_policy" else "pass").replace(
        "IN_ACT", "_bomb()" if where == "act" else "pass"
    )
    bomb = _program(hostile, f"bomb_{where}", source)
    began = time.monotonic()
    # Time enough for all 64 to fork and report on one pinned CPU even while another job loads the machine
    # (with 0.5 s, 11 of 64 had reported at load average 7).
    limits = PolicyLimits(act_timeout_seconds=3.0, make_policy_timeout_seconds=3.0, memory_bytes=1024**3)
    outcome, after = counter.run([*make_tasks(bomb, limits=limits), *make_tasks(programs["binary_search"])])
    assert outcome.status == "timeout", outcome.failure_message
    assert ("make_policy" if where == "make_policy" else "act timeout") in str(outcome.failure_message)
    assert time.monotonic() - began < 30
    reports = [line.split() for line in outcome.policy_log.decode().splitlines() if line.startswith("bomb pid=")]
    pids = {int(r[1].removeprefix("pid=")) for r in reports}
    groups = {int(r[2].removeprefix("pgid=")) for r in reports}
    assert len(pids) == 64  # the bomb really went off
    assert len(groups) == 1  # all in the Episode's own process group
    (group,) = groups
    # SIGKILL reaches every member at once; dying takes a moment (64 processes on one pinned CPU)
    assert wait_until(lambda: not _group_members(group) and not any(_running(p) for p in pids), 5.0, every=0.02), (
        f"still running: {_group_members(group)}"
    )
    assert after.status == "ok"


@pytest.mark.parametrize("name", ["kill_worker_group", "kill_zygote"])
def test_a_policy_that_kills_its_parent_costs_one_episode_and_the_next_ones_run(
    name: str, counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, hostile: Path
) -> None:
    killer = _program(hostile, name, {"kill_worker_group": KILL_WORKER_GROUP, "kill_zygote": KILL_ZYGOTE}[name])
    worker = counter.worker_pids[0]
    tasks = [*make_tasks(killer, limits=FAST), *make_tasks(programs["binary_search"], 2)]
    outcomes = list(counter.run(tasks))
    # Killing the worker's group: the worker dies; the executor reports an infra fault and replaces the worker. The
    # Policy is not blamed (see the xfail below). Killing the zygote: the worker finds it gone once the killer's
    # Episode has ended, blames that Policy, and retires so that the executor replaces it.
    statuses = [o.status for o in outcomes]
    if name == "kill_worker_group":
        assert statuses == ["infra_fault", "ok", "ok"]
        assert f"worker process (pid {worker})" in str(outcomes[0].failure_message)
    else:
        assert statuses == ["protocol_error", "ok", "ok"], outcomes[0].failure_message
        assert "zygote" in str(outcomes[0].failure_message)
    assert counter.worker_pids[0] != worker
    assert wait_until(lambda: not _running(worker), 5.0, every=0.02)
    assert [o.status for o in counter.run(make_tasks(programs["binary_search"]))] == ["ok"]


@pytest.mark.xfail(
    strict=True,
    reason=(
        "limitation of the local backend (isolation='local'): a Policy can kill its worker "
        "(os.killpg(os.getpgid(os.getppid()), SIGKILL)) and the Episode becomes a refunded infra fault that is left "
        "out of the score; in Validation/Assessment it is retried, so a Policy can re-roll the private Episodes it is "
        "losing. Fixed by --isolation bwrap (the Policy cannot see or signal its worker): see test_isolation.py"
    ),
)
def test_killing_the_worker_is_not_a_refunded_infra_fault(
    counter: LocalExecutor, make_tasks: MakeTasks, hostile: Path
) -> None:
    killer = _program(hostile, "kill_worker_group_blame", KILL_WORKER_GROUP)
    (outcome,) = counter.run(make_tasks(killer, limits=FAST))
    assert outcome.status not in ("ok", "infra_fault")


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP", "SIGTERM"])
def test_a_policy_cannot_spoil_the_next_episode_by_signalling_its_policy_child(
    counter: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, hostile: Path, how: str
) -> None:
    """The next Episode's child is forked while this one runs; one a Policy signalled is never handed on."""
    source = HIT_THE_NEXT_CHILD.replace("SIGNAL", how).replace("WAIT", str(HIT_WAIT))
    hitter = _program(hostile, f"hit_next_child_{how}", source)
    limits = PolicyLimits(act_timeout_seconds=HIT_WAIT + 30, make_policy_timeout_seconds=30, memory_bytes=1024**3)
    first, second = counter.run([*make_tasks(hitter, limits=limits), *make_tasks(programs["binary_search"])])
    assert first.status == "exception", first.failure_message
    log = first.policy_log.decode()
    assert "hit [" in log, (first.failure_message, log)
    assert "hit []" not in log, log  # it did find the next child
    assert second.status == "ok", second.failure_message


@pytest.mark.parametrize("target", ["worker", "zygote"])
def test_a_policy_that_stops_its_worker_cannot_hang_the_executor(
    programs: dict[str, Path], make_tasks: MakeTasks, hostile: Path, target: str
) -> None:
    """The stopped process is killed long before any wall-clock watchdog (these limits would give it 20 minutes),
    the Episode is the Policy's fault (never a refunded infra fault), and nothing of the old worker is left."""
    source = STOP_THE_WORKER if target == "worker" else STOP_THE_ZYGOTE
    stopper = _program(hostile, f"stop_{target}", source)
    limits = PolicyLimits(act_timeout_seconds=600, episode_policy_seconds=600, memory_bytes=1024**3)
    deadline = 90.0  # a replacement worker starts under heavy load within this; the watchdog alone would take 1230 s
    with LocalExecutor(BenchmarkRef(name="toy-counter"), isolation="local") as executor:
        worker = executor.worker_pids[0]
        old = [worker, *_children(worker)]  # the worker and its zygote
        outcomes: list[EpisodeOutcome] = []
        tasks = [*make_tasks(stopper, limits=limits), *make_tasks(programs["binary_search"])]
        runner = threading.Thread(target=lambda: outcomes.extend(executor.run(tasks)), daemon=True)
        runner.start()
        runner.join(deadline)
        finished_in_time = not runner.is_alive()
        if not finished_in_time:  # unstick the test: kill the stopped worker and zygote; the executor replaces them
            for pid in old:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            runner.join(30)
        assert finished_in_time, f"the executor was still waiting after {deadline:g} s"
        assert [o.status for o in outcomes] == ["protocol_error", "ok"], outcomes[0].failure_message
        assert "stopped" in str(outcomes[0].failure_message)
        assert executor.worker_pids[0] != worker  # replaced
        assert wait_until(lambda: not any(_running(pid) for pid in old), 30.0, every=0.02), (
            "the stopped worker outlived it"
        )


@pytest.mark.xfail(
    strict=True,
    reason=(
        "limitation of the local backend (isolation='local'): a Policy process that calls setsid() leaves the "
        "Episode's process group, so the group SIGKILL at the end of the Episode misses it and it outlives the "
        "Episode (and the executor). Fixed by --isolation bwrap (the sandbox's pid 1 kills every other process of "
        "its pid namespace after each Episode): see test_isolation.py"
    ),
)
def test_a_policy_process_that_calls_setsid_does_not_outlive_its_episode(
    counter: LocalExecutor, make_tasks: MakeTasks, hostile: Path
) -> None:
    escape = _program(hostile, "setsid_escape", SETSID_ESCAPE)
    (outcome,) = counter.run(make_tasks(escape, limits=FAST))
    escapee = int(outcome.policy_log.decode().split("escapee=")[1].split()[0])
    try:
        assert outcome.status == "ok", outcome.failure_message
        assert wait_until(lambda: not _running(escapee), 1.0, every=0.02), f"pid {escapee} escaped the Episode"
    finally:
        if _running(escapee):
            os.kill(escapee, signal.SIGKILL)


# ------------------------------------------------------------------------------------------------ reading secrets


@pytest.mark.skipif(os.geteuid() != 0, reason="measured as root: reading another process's memory needs ptrace rights")
def test_fact_a_policy_running_as_root_can_read_its_episode_seed_from_the_worker_memory(
    counter: LocalExecutor, hostile: Path
) -> None:
    """Pins docs/security.md: the zygote keeps seeds out of the Policy's own memory, not out of its reach."""
    seed = 5829173640918273645  # irregular digits: only this task carries them
    spy = _program(hostile, "worker_memory_spy", WORKER_MEMORY_SPY.replace("SEED", str(seed)))
    task = EpisodeTask(
        episode=EpisodeSpec("train", 4, seed, None),
        program_dir=spy,
        policy_seed=4,
        limits=PolicyLimits(make_policy_timeout_seconds=30.0, memory_bytes=1024**3),
    )
    (outcome,) = counter.run([task])
    assert outcome.status == "ok", outcome.failure_message
    report = dict(item.split("=") for item in outcome.policy_log.decode().split())
    assert int(report["worker"]) == counter.worker_pids[0]
    assert int(report["hits"]) >= 1


def test_a_policy_cannot_read_the_hosts_environment(
    make_tasks: MakeTasks, hostile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTILE_TEST_API_KEY", "CANARY-not-for-policies")
    spy = _program(hostile, "environment_spy", ENVIRONMENT_SPY)
    with LocalExecutor(BenchmarkRef(name="toy-counter")) as executor:
        (outcome,) = executor.run(make_tasks(spy, limits=FAST))
    assert outcome.status == "ok", outcome.failure_message
    seen = json.loads(outcome.policy_log.decode().strip().splitlines()[-1])
    assert seen == {"own": None, "parent": False}


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evh-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


SUPPORT = Path(__file__).resolve().parents[2] / "support"  # tests/support/session_call.py
SUBMIT_ONCE_AGENT = r"""
import json, os, socket, struct, sys
sys.path.insert(0, __SUPPORT__)
from session_call import call
call("submit", program="program", episodes="0:1")
call("finish", candidates=["submission-000001"])
""".replace("__SUPPORT__", repr(str(SUPPORT)))


def test_fact_a_policy_can_reach_the_ledger_and_proc_and_leak_host_seeds_to_the_agent(run_root: Path) -> None:
    """Pins docs/security.md: the local backend does not sandbox the filesystem or /proc.

    The Program runs from a private materialized copy outside the run directory, but the Host holds
    ``ledger.sqlite`` open and ``/proc/<pid>/fd`` names it; its host-only Events hold every Episode seed,
    including the Assessment's. A failing
    Episode's log is mirrored to the Agent, so the seeds can travel back to the Agent as well.
    """
    spy = _program(run_root, "spy", FILESYSTEM_SPY)
    agent = run_root / "agent.py"
    agent.write_text(SUBMIT_ONCE_AGENT, encoding="utf-8")
    config = RunConfig(
        benchmark=BenchmarkRef(name="toy-counter"),
        episode_budget=1,
        validation=ValidationConfig(episodes=0),
        assessment=AssessmentConfig(episodes=2),
        finish_grace_seconds=0.5,
        agent=AgentConfig(name=f"command:{sys.executable} {agent}"),
        isolation="local",  # the fact pinned here is the local backend's
    )
    run_dir = (run_root / "r").resolve()
    result = run(config, record_to=run_dir, initial_program=spy)
    assert result.reason == "finished"
    with Ledger.open(run_dir) as book:
        planned = [r.event for r in book.events(kinds=["episode-planned"]) if isinstance(r.event, EpisodePlanned)]
        (finished,) = [r.event for r in book.events(kinds=["episode-finished"]) if isinstance(r.event, EpisodeFinished)]
        log = book.objects.get(finished.policy_log_digest or "").decode()
    assessment_seeds = [p.env_seed for p in planned if p.split == "assessment"]
    report = json.loads(log.split("SPY ", 1)[1].splitlines()[0])
    cwd = Path(report["cwd"])
    assert run_dir not in cwd.parents  # a private copy made for this execution, not the Agent's program/
    assert not cwd.exists()  # ... removed once the execution ended
    assert report["ledger"] == str(run_dir / "ledger.sqlite")  # reachable by path: nothing is sandboxed
    assert report["assessment_seeds"] == assessment_seeds  # the held-out seeds are readable
    assert report["workspace_writable"] is True
    assert "evoledger.kernel.execution.worker" in report["parent_cmdline"]
    assert report["parent_environ_bytes"] > 0
    mirrored = (run_dir / "workspace" / "feedback" / "submission-000001" / "policy-logs" / "episode-0.txt").read_text()
    assert str(assessment_seeds[0]) in mirrored  # ... and the Agent can read them back from its feedback/


# ------------------------------------------------------------------------------------------------ Box actions

BOX_ACTIONS = {
    "huge": "[1e300, 0.0]",
    "infinite": "[float('inf'), 0.0]",
    "huge_int": "[10**30, 0]",
    "string": "'left'",
    "mapping": "{'x': 0.1}",
    "too_short": "[0.1]",
    "too_long": "[0.1, 0.2, 0.3]",
    "nested": "[[0.1, 0.2]]",
    "ragged": "[0.1, [0.2]]",
    "scalar": "0.5",
    "none": "None",
    "negative_infinity_numpy": "np.array([-np.inf, 0.0], dtype=np.float32)",
    "bytes": "b'ab'",
}


def test_garbage_box_actions_are_invalid_actions(make_tasks: MakeTasks, hostile: Path) -> None:
    names = [*BOX_ACTIONS, "control_float64"]
    tasks = []
    for name in names:
        action = BOX_ACTIONS.get(name, "np.array([0.25, -0.5])")
        source = (
            "import numpy as np\n\n\nclass _Policy:\n    def act(self, observation):\n"
            f"        return {action}\n\n\ndef make_policy(context):\n    return _Policy()\n"
        )
        tasks += make_tasks(_program(hostile, f"box_{name}", source), benchmark="toy-continuous", limits=FAST)
    with LocalExecutor(BenchmarkRef(name="toy-continuous")) as executor:
        outcomes = dict(zip(names, executor.run(tasks), strict=True))
    control = outcomes.pop("control_float64")
    assert control.status == "ok", control.failure_message  # float64 in range is converted, not refused
    assert {name: o.status for name, o in outcomes.items()} == dict.fromkeys(BOX_ACTIONS, "invalid_action")
    assert all(o.steps == 0 for o in outcomes.values())  # never reached the Environment's state
    assert "value of type bytes, which cannot be sent as an action" in str(outcomes["bytes"].failure_message)
    assert "not in the action space" in str(outcomes["string"].failure_message)
