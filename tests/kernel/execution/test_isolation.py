"""``--isolation bwrap``: hostile Policies in a bubblewrap sandbox, through the real LocalExecutor.

The local backend's limits (a Policy can kill its worker, escape with ``setsid``, read the Host's ``/proc``) are pinned
in ``test_hostile_policies.py``; here the same attacks run under bwrap and must fail: the Episode is the Policy's (never
a refunded infra fault), the worker survives, nothing outlives the Episode, and nothing of the Host leaks.
Skipped, with the reason, where bubblewrap is not installed or cannot create its namespaces.
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
from evoledger.kernel.execution import LocalExecutor, PolicyLimits
from evoledger.kernel.execution.isolation import probe_bwrap, resolve_isolation, sandbox_environment
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.errors import ConfigError
from evoledger.ledger.events import EpisodeFinished, RunCreated
from evoledger.ledger.store import Ledger
from evoledger.tests.support.process_tree import wait_until

MakeTasks = Callable[..., list]

_BWRAP, _WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(_BWRAP is None, reason=f"bubblewrap is not usable here: {_WHY_NOT}")
FAST = PolicyLimits(act_timeout_seconds=2.0, make_policy_timeout_seconds=20.0, memory_bytes=1024**3)
CANARY = "CANARY-isolation-not-for-policies"


def _program(root: Path, name: str, source: str) -> Path:
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "policy.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return directory


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _in_act(worker: int) -> list[int]:
    """The worker's descendants (host pids) that renamed themselves ``evl-in-act``: a Policy inside ``act``."""
    found, todo = [], [worker]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "evl-in-act":
                found.append(pid)
        todo += _children(pid)
    return found


def _host_processes_with(argument: str) -> list[int]:
    """Live host processes whose command line contains ``argument`` as one of its words."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if argument.encode() in words and state != "Z":
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def sandboxed() -> Iterator[LocalExecutor]:
    if _BWRAP is None:
        pytest.skip(f"bubblewrap is not usable here: {_WHY_NOT}")
    with LocalExecutor(BenchmarkRef(name="toy-counter"), isolation="bwrap") as executor:
        yield executor


# ------------------------------------------------------------------------------------------------ choosing


def test_isolation_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="isolation must be one of local, bwrap, auto"):
        resolve_isolation("chroot")
    assert resolve_isolation("local").describe() == "local"


def test_auto_falls_back_to_local_with_the_reason_and_explicit_bwrap_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    probe_bwrap.cache_clear()
    try:
        choice = resolve_isolation("auto")
        assert choice.isolation == "local"
        assert choice.describe() == "local (auto: bwrap unavailable: bwrap is not installed)"
        with pytest.raises(ConfigError, match="apt-get install bubblewrap"):
            resolve_isolation("bwrap")
        with pytest.raises(ConfigError, match="apt-get install bubblewrap"):
            LocalExecutor(BenchmarkRef(name="toy-counter"), isolation="bwrap")
    finally:
        probe_bwrap.cache_clear()


@needs_bwrap
def test_auto_uses_bwrap_where_it_works() -> None:
    assert resolve_isolation("auto").describe() == "bwrap"


def test_the_sandbox_environment_is_an_allow_list() -> None:
    environment = sandbox_environment({"HOSTILE_TEST_API_KEY": CANARY, "OPENBLAS_CORETYPE": "Haswell", "HOME": "/root"})
    assert CANARY not in environment.values()
    assert environment["OPENBLAS_CORETYPE"] == "Haswell"
    assert environment["HOME"] == "/tmp"


# ------------------------------------------------------------------------------------------------ attacks

SPY = """
import json
import os
import signal


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"error {type(exc).__name__}"


def make_policy(context):
    seen = {
        "environ": dict(os.environ),
        "host_environ": _read("/proc/HOST_PID/environ"),
        "secret": _read("SECRET_FILE"),
        "ledger": _read("LEDGER_FILE"),
        "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "ppid": os.getppid(),
        "parent_environ": _read(f"/proc/{os.getppid()}/environ"),
        "parent_maps": _read(f"/proc/{os.getppid()}/maps")[:40],
        "parent_fds": _read(f"/proc/{os.getppid()}/fd/0"),
    }
    print("SPY " + json.dumps(seen), flush=True)
    return _Policy()


class _Policy:
    def act(self, observation):
        if os.getppid() != 1:  # outside a pid namespace, as root, kill(-1) would kill every process of the machine
            raise RuntimeError("refusing to run this attack outside a sandbox")
        me = os.getpid()
        for target in (os.getppid(), 1, *(int(p) for p in os.listdir("/proc") if p.isdigit())):
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                if target != me:
                    try:
                        os.kill(target, sig)
                    except OSError:
                        pass
        for kill, target in ((os.killpg, os.getpgid(os.getppid())), (os.kill, -1)):
            try:
                kill(target, signal.SIGKILL)
            except OSError:
                pass
        return 0
"""


@needs_bwrap
def test_a_policy_under_bwrap_sees_nothing_of_the_host_and_cannot_stop_or_kill_anything(
    sandboxed: LocalExecutor,
    programs: dict[str, Path],
    make_tasks: MakeTasks,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOSTILE_TEST_API_KEY", CANARY)  # the coordinator's environment
    secret = tmp_path / "run" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(CANARY, encoding="utf-8")
    ledger = tmp_path / "run" / "ledger.sqlite"
    ledger.write_text(CANARY, encoding="utf-8")
    source = SPY.replace("HOST_PID", str(os.getpid())).replace("SECRET_FILE", str(secret))
    spy = _program(tmp_path, "spy", source.replace("LEDGER_FILE", str(ledger)))
    worker = sandboxed.worker_pids[0]
    outcomes = list(sandboxed.run([*make_tasks(spy, limits=FAST), *make_tasks(programs["binary_search"], 2)]))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], outcomes[0].failure_message  # the kills did nothing
    assert sandboxed.worker_pids[0] == worker
    log = outcomes[0].policy_log.decode()
    assert CANARY not in log
    seen = json.loads(log.split("SPY ", 1)[1].splitlines()[0])
    assert seen["host_environ"].startswith("error")  # the Host's /proc is not mounted
    assert seen["secret"].startswith("error")  # no run directory
    assert seen["ledger"].startswith("error")
    assert seen["ppid"] == 1  # its own pid namespace, under the zygote
    assert max(seen["pids"]) < 100  # only the sandbox's few processes
    for private in ("parent_environ", "parent_maps", "parent_fds"):  # the zygote is not dumpable
        assert seen[private].startswith("error"), (private, seen[private])
    assert set(seen["environ"]) <= {*sandbox_environment(), "PWD", "PYGAME_HIDE_SUPPORT_PROMPT"}


KILL_WORKER_GROUP = """
import os
import signal


class _Policy:
    def act(self, observation):
        os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
        os.kill(os.getppid(), signal.SIGKILL)
        return 0


def make_policy(context):
    return _Policy()
"""


@needs_bwrap
def test_under_bwrap_killing_the_worker_is_impossible_and_never_a_refunded_infra_fault(
    sandboxed: LocalExecutor, programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """The bwrap counterpart of the local backend's strict xfail in test_hostile_policies.py."""
    killer = _program(tmp_path, "kill_worker_group", KILL_WORKER_GROUP)
    worker = sandboxed.worker_pids[0]
    outcomes = list(sandboxed.run([*make_tasks(killer, limits=FAST), *make_tasks(programs["binary_search"])]))
    assert outcomes[0].status != "infra_fault", outcomes[0].failure_message
    assert outcomes[1].status == "ok"
    assert sandboxed.worker_pids[0] == worker


SETSID_ESCAPE = """
import os


class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    if os.fork() == 0:
        os.setsid()  # leaves the Episode's process group
        os.execv("/bin/sleep", ["sleep", "MARKER"])
    return _Policy()
"""


@needs_bwrap
def test_under_bwrap_a_policy_process_that_calls_setsid_does_not_outlive_its_episode(
    sandboxed: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    """The bwrap counterpart of the local backend's strict xfail in test_hostile_policies.py."""
    marker = f"61.{os.getpid()}{time.monotonic_ns() % 10000}"
    escape = _program(tmp_path, "setsid_escape", SETSID_ESCAPE.replace("MARKER", marker))
    (outcome,) = sandboxed.run(make_tasks(escape, limits=FAST))
    try:
        assert outcome.status == "ok", outcome.failure_message
        assert wait_until(lambda: not _host_processes_with(marker), 2.0, every=0.02), (
            "the setsid escapee outlived its Episode"
        )
    finally:
        for pid in _host_processes_with(marker):
            os.kill(pid, signal.SIGKILL)


LEAVE_SOMETHING = """
import os


class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    print("left-before:", sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm")))
    with open("/tmp/left-by-an-earlier-episode", "w") as f:
        f.write("x")
    with open("/dev/shm/left-too", "w") as f:
        f.write("x")
    try:
        open("program-write-test", "w")
        print("program-writable")
    except OSError:
        print("program-read-only")
    return _Policy()
"""


@needs_bwrap
def test_under_bwrap_an_episode_finds_nothing_an_earlier_one_left_and_its_program_is_read_only(
    sandboxed: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    leaver = _program(tmp_path, "leaver", LEAVE_SOMETHING)
    outcomes = list(sandboxed.run(make_tasks(leaver, 2, limits=FAST)))
    assert [o.status for o in outcomes] == ["ok", "ok"], outcomes[0].failure_message
    for outcome in outcomes:
        log = outcome.policy_log.decode()
        assert "left-before: [] []" in log, log
        assert "program-read-only" in log, log
    assert not (leaver / "program-write-test").exists()


SLOW_ACT = """
import time


class _Policy:
    def act(self, observation):
        with open("/proc/self/comm", "w") as comm:  # tells the test that the Episode is under way
            comm.write("evl-in-act")
        time.sleep(30)
        return 0


def make_policy(context):
    return _Policy()
"""


@needs_bwrap
def test_a_sandbox_that_dies_during_an_episode_charges_the_policy_and_is_replaced(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path
) -> None:
    slow = _program(tmp_path, "slow_act", SLOW_ACT)
    limits = PolicyLimits(act_timeout_seconds=20.0, make_policy_timeout_seconds=20.0, memory_bytes=1024**3)
    with LocalExecutor(BenchmarkRef(name="toy-counter"), isolation="bwrap") as executor:
        worker = executor.worker_pids[0]

        killed: list[int] = []

        def kill_the_sandbox() -> None:  # worker -> bwrap -> zygote (pid 1 inside) -> the Policy in act
            if wait_until(lambda: bool(_in_act(worker)), 20.0, every=0.02):
                killed.extend(z for b in _children(worker) for z in _children(b))
                for pid in killed:
                    os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_the_sandbox, daemon=True)
        killer.start()
        outcomes = list(executor.run([*make_tasks(slow, limits=limits), *make_tasks(programs["binary_search"])]))
        killer.join(5)
        assert killed, "the sandboxed zygote was never found"
        assert outcomes[0].status == "protocol_error", outcomes[0].failure_message
        assert "broke its sandbox" in str(outcomes[0].failure_message)
        assert outcomes[1].status == "ok", outcomes[1].failure_message
        assert executor.worker_pids[0] == worker  # the worker stayed; only its sandbox was replaced


# ------------------------------------------------------------------------------------------------ a whole Run

RUN_SPY = """
import json
import os
from pathlib import Path


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"error {type(exc).__name__}"


def make_policy(context):
    here = Path.cwd()
    report = {
        "cwd": str(here),
        "ledger": [str(d) for d in (here, *here.parents) if (d / "ledger.sqlite").exists()],
        "run_ledger": _read("RUN_DIR/ledger.sqlite")[:20],
        "workspace": os.access("RUN_DIR/workspace/program", os.F_OK),
        "parent_cmdline": _read(f"/proc/{os.getppid()}/cmdline"),
        "host_environ": _read("/proc/HOST_PID/environ"),
    }
    print("SPY " + json.dumps(report), flush=True)
    raise RuntimeError("spy done")
"""


@needs_bwrap
def test_a_spying_policy_in_a_bwrap_run_finds_nothing_and_the_run_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOSTILE_TEST_API_KEY", CANARY)
    root = Path(tempfile.mkdtemp(prefix="evb-", dir="/tmp"))  # short: Unix socket paths are limited
    try:
        run_dir = (root / "r").resolve()
        source = RUN_SPY.replace("RUN_DIR", str(run_dir)).replace("HOST_PID", str(os.getpid()))
        spy = _program(root, "spy", source)
        agent = root / "agent.py"
        support = Path(__file__).resolve().parents[2] / "support"
        agent.write_text(
            f"import sys\nsys.path.insert(0, {str(support)!r})\nfrom session_call import call\n"
            'call("submit", program="program", episodes="0:1")\ncall("finish", candidates=["submission-000001"])\n',
            encoding="utf-8",
        )
        config = RunConfig(
            benchmark=BenchmarkRef(name="toy-counter"),
            episode_budget=1,
            validation=ValidationConfig(episodes=0),
            assessment=AssessmentConfig(episodes=2),
            finish_grace_seconds=0.5,
            agent=AgentConfig(name=f"command:{sys.executable} {agent}"),
            isolation="auto",
        )
        result = run(config, record_to=run_dir, initial_program=spy)
        assert result.reason == "finished"
        with Ledger.open(run_dir) as book:
            (created,) = [r.event for r in book.events(kinds=["run-created"]) if isinstance(r.event, RunCreated)]
            finished = [e for r in book.events(kinds=["episode-finished"]) if isinstance(e := r.event, EpisodeFinished)]
            logs = [book.objects.get(f.policy_log_digest or "").decode() for f in finished]
        assert created.config["isolation"] == "bwrap"  # resolved, never "auto"
        assert [f.status for f in finished] == ["exception"]  # the spy's own failure, charged to it
        report = json.loads(logs[0].split("SPY ", 1)[1].splitlines()[0])
        assert report["cwd"].startswith("/program/")
        assert report["ledger"] == []
        assert report["run_ledger"].startswith("error")
        assert report["workspace"] is False
        assert "sandbox_main" in report["parent_cmdline"]  # its parent is the sandboxed zygote, not the worker
        assert report["host_environ"].startswith("error")
        assert CANARY not in logs[0]
        assert replay(run_dir, execute=True, isolation="bwrap").ok
    finally:
        shutil.rmtree(root, ignore_errors=True)


BOMB_THEN_ESCAPE = """
import os
import time


class _Policy:
    def act(self, observation):
        for _ in range(5):  # 32 processes, bounded for the safety of the test machine
            try:
                os.fork()
            except OSError:
                pass
        if os.getpid() % 2:
            try:
                os.setsid()  # half of them leave the Episode's process group
            except OSError:
                pass  # the group leader cannot
        while True:
            time.sleep(0.01)


def make_policy(context):
    return _Policy()
"""

LIST_PROCESSES = """
import os


class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "me", os.getpid())
    return _Policy()
"""


@needs_bwrap
def test_under_bwrap_the_next_episode_finds_no_process_of_a_fork_bomb_in_its_sandbox(
    sandboxed: LocalExecutor, make_tasks: MakeTasks, tmp_path: Path
) -> None:
    bomb = _program(tmp_path, "bomb_then_escape", BOMB_THEN_ESCAPE)
    lister = _program(tmp_path, "list_processes", LIST_PROCESSES)
    limits = PolicyLimits(act_timeout_seconds=1.0, make_policy_timeout_seconds=20.0, memory_bytes=1024**3)
    first, second = sandboxed.run([*make_tasks(bomb, limits=limits), *make_tasks(lister, limits=FAST)])
    assert first.status == "timeout", first.failure_message
    assert second.status == "ok", second.failure_message
    words = second.policy_log.decode().split("me ")
    me = int(words[1].split()[0])
    assert f"pids [1, {me}]" in words[0], second.policy_log  # the zygote and this Policy: nothing else


def _program_copy_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("evoledger-programs-*"))


@needs_bwrap
def test_a_killed_worker_leaves_no_program_copies_behind(
    programs: dict[str, Path], make_tasks: MakeTasks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = tmp_path / "tmp"  # not the shared temporary folder: other executors on this machine make copies there
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    before = _program_copy_folders()
    slow = _program(tmp_path, "slow_act_worker", SLOW_ACT)
    limits = PolicyLimits(act_timeout_seconds=20.0, make_policy_timeout_seconds=20.0, memory_bytes=1024**3)
    with LocalExecutor(BenchmarkRef(name="toy-counter"), isolation="bwrap") as executor:
        worker = executor.worker_pids[0]
        assert len(_program_copy_folders() - before) == 1

        def kill_the_worker() -> None:  # the machine's fault, not the Policy's: an infra fault
            if wait_until(lambda: bool(_in_act(worker)), 20.0, every=0.02):
                os.kill(worker, signal.SIGKILL)

        killer = threading.Thread(target=kill_the_worker, daemon=True)
        killer.start()
        outcomes = list(executor.run([*make_tasks(slow, limits=limits), *make_tasks(programs["binary_search"])]))
        killer.join(5)
        assert [o.status for o in outcomes] == ["infra_fault", "ok"], outcomes[0].failure_message
        assert executor.worker_pids[0] != worker
        assert len(_program_copy_folders() - before) == 1  # the dead worker's folder is gone, the new one's is there
    assert _program_copy_folders() - before == set()
