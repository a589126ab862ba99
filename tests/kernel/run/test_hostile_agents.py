"""Hostile Agents in real Runs: quitting early, failing, hanging, leaving processes behind, vandalising feedback/,
racing the Program snapshot, and never finishing (the ``best_public`` fallback).

Every Agent is a ``command:`` Agent: a small Python script that speaks the Session protocol with the standard
library (one length-prefixed JSON frame per request), so each Run costs well under two seconds. Each test checks
the terminal reason, that nothing recorded is lost (``verify``), and what became of the Agent's processes and files.
Bugs found here are strict xfails naming the fix.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.agents import AGENT_LOG_HEAD_BYTES, AGENT_LOG_TAIL_BYTES
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, RunResult, ValidationConfig, run
from evoledger.kernel.run.resume import resume
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import AgentExited, EpisodeFinished, ProgramSnapshotted, RunEnded, SubmissionRejected
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from evoledger.projections import mirror, run_state
from evoledger.projections.mirror_files import Difference, diff_mirror

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

# Speaks the Session protocol with the standard library only (importing evoledger would cost ~0.7 s per Agent).
SUPPORT = Path(__file__).resolve().parents[2] / "support"  # tests/support/session_call.py
PRELUDE = r"""
import json, os, socket, struct, subprocess, sys, time
WS = os.environ["EVOLEDGER_WORKSPACE"]

sys.path.insert(0, __SUPPORT__)
from session_call import call

def note(name, value):  # written whole, then renamed: an Agent killed mid-write leaves the last whole note
    path = os.path.join(WS, "analysis", name)
    with open(path + ".part", "w") as f:
        json.dump(value, f)
    os.replace(path + ".part", path)

def write_program(source):
    with open(os.path.join(WS, "program", "policy.py"), "w") as f:
        f.write(source)
""".replace("__SUPPORT__", repr(str(SUPPORT)))

RANDOM_POLICY = """
def make_policy(context):
    context.action_space.seed(context.policy_seed % 2**32)

    class _Policy:
        def act(self, observation):
            return context.action_space.sample()

    return _Policy()
"""

FAILING_POLICY = """
def make_policy(context):
    class _Policy:
        def act(self, observation):
            raise RuntimeError("always wrong")

    return _Policy()
"""

BINARY_SEARCH_POLICY = """
class _Policy:
    def __init__(self, n):
        self.low, self.high, self.last = 0, n - 1, None

    def act(self, observation):
        if self.last is not None:
            if observation[0] > 0:
                self.low = self.last + 1
            elif observation[0] < 0:
                self.high = self.last - 1
        self.last = (self.low + self.high) // 2
        return self.last


def make_policy(context):
    return _Policy(context.action_space.n)
"""


@dataclass(frozen=True)
class AgentRun:
    """One finished Run of a scripted Agent."""

    root: Path
    result: RunResult

    @property
    def run_dir(self) -> Path:
        return self.root / "r"

    def note(self, name: str) -> Any:
        return json.loads((self.run_dir / "workspace" / "analysis" / name).read_text(encoding="utf-8"))

    def events(self, kind: str) -> list[Any]:
        with Ledger.open(self.run_dir) as book:
            return [r.event for r in book.events(kinds=[kind])]

    def state(self) -> run_state.RunState:
        with Ledger.open(self.run_dir) as book:
            return run_state.fold(r.event for r in book.events())

    def mirror_differences(self) -> list[Difference]:
        with Ledger.open(self.run_dir) as book:
            fresh = mirror.fold((r.stored.visibility, r.event) for r in book.events())
            return diff_mirror(fresh, self.run_dir / "workspace" / "feedback", book.objects)


def _new_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="eva-", dir="/tmp"))  # short: Unix socket paths are limited


def _run_agent(root: Path, body: str, *, program: str = RANDOM_POLICY, **config: Any) -> AgentRun:
    """Run the Agent ``PRELUDE + body`` on toy-counter with a tiny budget (overridable through ``config``)."""
    script = root / "agent.py"
    script.write_text(PRELUDE + textwrap.dedent(body), encoding="utf-8")
    initial = root / "initial-program"
    initial.mkdir()
    (initial / "policy.py").write_text(program.lstrip(), encoding="utf-8")
    settings: dict[str, Any] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "episode_budget": 4,
        "validation": ValidationConfig(episodes=0),
        "assessment": AssessmentConfig(episodes=0),
        "finish_grace_seconds": 0.5,
        "agent": AgentConfig(name=f"command:{sys.executable} {script}"),
        "agent_isolation": "local",  # the supervisor alone; the sandbox: tests/kernel/agents/test_agent_sandbox.py
        **config,
    }
    result = run(RunConfig(**settings), record_to=root / "r", initial_program=initial)
    return AgentRun(root, result)


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def root() -> Iterator[Path]:
    path = _new_root()
    yield path
    shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ leaving early


def test_an_agent_that_exits_without_finishing_ends_the_run_as_agent_exited(root: Path) -> None:
    done = _run_agent(
        root,
        """
        reply = call("submit", program="program", episodes="0:1")
        note("reply.json", reply)
        # the local backend does not hide the Run directory from the Agent (docs/security.md)
        import sqlite3
        db = sqlite3.connect("file:" + os.path.join(WS, "..", "ledger.sqlite") + "?mode=ro", uri=True)
        rows = db.execute("SELECT payload FROM events WHERE kind = 'episode-planned' ORDER BY seq").fetchall()
        note("peek.json", [json.loads(payload)["env_seed"] for (payload,) in rows])
        """,
    )
    assert done.note("reply.json")["ok"] is True
    assert done.result.reason == "agent_exited"
    assert done.result.selected is None
    assert done.result.budget_used == 1
    (ended,) = done.events("run-ended")
    assert isinstance(ended, RunEnded)
    assert (ended.reason, ended.selected_submission_id, ended.summary["candidates"]) == ("agent_exited", None, [])
    assert done.events("candidate-selected") == []
    (exited,) = done.events("agent-exited")
    assert isinstance(exited, AgentExited)
    assert (exited.exit_code, exited.reason) == (0, "agent_exited")
    assert verify(done.run_dir).ok
    assert done.mirror_differences() == []
    audit = replay(done.run_dir, execute=True)
    assert audit.ok, audit.first_failure
    # measured fact: the Agent read every Host seed straight from ../ledger.sqlite
    planned = [e.env_seed for e in done.events("episode-planned")]
    assert done.note("peek.json") == planned


def test_an_agent_that_exits_non_zero_ends_the_run_as_agent_failed(root: Path) -> None:
    done = _run_agent(root, 'call("submit", program="program", episodes="0:1")\nsys.exit(3)\n')
    assert done.result.reason == "agent_failed"
    (exited,) = done.events("agent-exited")
    assert (exited.exit_code, exited.signal, exited.reason) == (3, None, "agent_failed")
    (ended,) = done.events("run-ended")
    assert ended.reason == "agent_failed"
    assert verify(done.run_dir).ok


def test_an_agent_that_hangs_is_stopped_at_its_timeout_with_its_whole_group(root: Path) -> None:
    began = time.monotonic()
    done = _run_agent(
        root,
        """
        helper = subprocess.Popen(["sleep", "60"])
        note("helper.json", helper.pid)
        call("submit", program="program", episodes="0:1")
        time.sleep(60)
        """,
        agent_timeout_seconds=1.0,
    )
    helper = done.note("helper.json")
    try:
        assert done.result.reason == "agent_timeout"
        assert time.monotonic() - began < 30  # timeout 1 s; far less than the Agent's 60 s, even on a loaded machine
        (exited,) = done.events("agent-exited")
        assert exited.reason == "agent_timeout"
        assert exited.signal == signal.SIGTERM
        assert exited.exit_code is None
        assert done.result.budget_used == 1  # the submission made before hanging counts
        assert _wait_gone(helper, 2.0), "the hanging Agent's helper process survived"
        assert verify(done.run_dir).ok
    finally:
        _kill(helper)


@pytest.fixture(scope="module")
def leftovers() -> Iterator[tuple[AgentRun, int, int]]:
    """An Agent that exits leaving two sleepers: one in its process group, one that called setsid()."""
    path = _new_root()
    done = _run_agent(
        path,
        """
        child = subprocess.Popen(["sleep", "60"])
        daemon = subprocess.Popen(["sleep", "60"], start_new_session=True)
        note("pids.json", {"child": child.pid, "daemon": daemon.pid})
        call("submit", program="program", episodes="0:1")
        """,
    )
    pids = done.note("pids.json")
    yield done, pids["child"], pids["daemon"]
    for pid in pids.values():
        _kill(pid)
    shutil.rmtree(path, ignore_errors=True)


def test_a_child_the_agent_leaves_in_its_group_is_gone_after_the_run(leftovers: tuple[AgentRun, int, int]) -> None:
    done, child, _daemon = leftovers
    assert done.result.reason == "agent_exited"
    assert _wait_gone(child, 2.0), f"the Agent's child {child} outlived the Run"


def test_a_daemon_the_agent_leaves_behind_is_gone_after_the_run(leftovers: tuple[AgentRun, int, int]) -> None:
    _done, _child, daemon = leftovers
    # found by the EVOLEDGER_WORKSPACE entry of its environment (kernel.agents.marked), not by its group
    assert _wait_gone(daemon, 1.0), f"the Agent's setsid() child {daemon} outlived the Run"


def test_an_agent_printing_hundreds_of_mb_is_stored_capped_and_the_host_stays_small(root: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    done = _run_agent(
        root,
        """
        out = sys.stdout.buffer
        out.write(b"FIRST\\n")
        line = b"y" * 1023 + b"\\n"
        for _ in range(300 * 1024):  # 300 MiB
            out.write(line)
        out.write(b"LAST\\n")
        out.flush()
        call("submit", program="program", episodes="0:1")
        call("finish", candidates=["submission-000001"])
        """,
    )
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    assert done.result.reason == "finished"
    (exited,) = done.events("agent-exited")
    assert exited.stdout_digest is not None
    with Ledger.open(done.run_dir) as book:
        stored = book.objects.get(exited.stdout_digest)
    assert len(stored) <= AGENT_LOG_HEAD_BYTES + AGENT_LOG_TAIL_BYTES + 1024
    assert stored.startswith(b"FIRST\n")
    assert stored.endswith(b"LAST\n")
    assert b"were dropped" in stored
    assert grown < 150 * 1024 * 1024, f"the Host grew by {grown} bytes while the Agent printed 300 MiB"
    assert verify(done.run_dir).ok


def test_the_agent_timeout_holds_while_the_coordinator_is_busy_with_a_long_request(root: Path) -> None:
    """The submit runs 3 Episodes of 2 s Environment time each; the Agent's 1 s deadline passes meanwhile."""
    done = _run_agent(
        root,
        """
        import threading
        began = time.time()

        def beat():
            while True:
                note("beat.json", {"began": began, "last": time.time()})
                time.sleep(0.05)

        threading.Thread(target=beat, daemon=True).start()
        call("submit", program="program", episodes="0:3")
        time.sleep(60)
        """,
        benchmark=BenchmarkRef(
            name="toy-counter", config={"step_sleep_seconds": 1.0, "max_episode_steps": 2, "terminate_on_hit": False}
        ),
        agent_timeout_seconds=1.0,
    )
    beat = done.note("beat.json")
    assert done.result.reason == "agent_timeout"
    assert beat["last"] - beat["began"] < 4.0, "the Agent ran on until the coordinator was free"
    (exited,) = done.events("agent-exited")
    assert exited.duration_ms < 4000
    assert done.result.budget_used == 3  # the request in flight was decided and its Episodes ran
    assert verify(done.run_dir).ok


# ------------------------------------------------------------------------------------------------ feedback/ vandalism


@pytest.fixture(scope="module")
def vandal() -> Iterator[tuple[AgentRun, list[Difference]]]:
    """An Agent that deletes, forges and adds mirror files, then removes feedback/ entirely, between submissions."""
    path = _new_root()
    done = _run_agent(
        path,
        """
        import shutil
        fb = os.path.join(WS, "feedback")
        seen = {}
        call("submit", program="program", episodes="0:1")
        os.remove(os.path.join(fb, "submission-000001", "feedback.json"))
        with open(os.path.join(fb, "rejections.json"), "w") as f:
            f.write("forged")
        with open(os.path.join(fb, "extra.txt"), "w") as f:
            f.write("planted")
        call("submit", program="program", episodes="1:2")
        seen["after_edit"] = sorted(
            os.path.relpath(os.path.join(d, n), fb) for d, _, names in os.walk(fb) for n in names
        )
        seen["rejections_after_edit"] = open(os.path.join(fb, "rejections.json")).read()
        shutil.rmtree(fb)
        call("submit", program="program", episodes="2:3")
        seen["after_delete"] = sorted(
            os.path.relpath(os.path.join(d, n), fb) for d, _, names in os.walk(fb) for n in names
        )
        note("seen.json", seen)
        call("finish", candidates=["submission-000003"])
        """,
    )
    differences = done.mirror_differences()  # taken before any test rebuilds the mirror
    yield done, differences
    shutil.rmtree(path, ignore_errors=True)


def test_vandalising_feedback_does_not_disturb_the_run_and_replay_rebuilds_it(
    vandal: tuple[AgentRun, list[Difference]],
) -> None:
    done, _differences = vandal
    assert done.result.reason == "finished"
    assert done.result.selected == "submission-000003"
    assert done.result.budget_used == 3
    assert verify(done.run_dir).ok
    rebuilt = replay(done.run_dir, rebuild=True)
    assert rebuilt.ok, rebuilt.first_failure
    assert done.mirror_differences() == []


def test_the_hosts_next_sync_repairs_vandalised_feedback(vandal: tuple[AgentRun, list[Difference]]) -> None:
    done, differences = vandal
    seen = done.note("seen.json")
    assert "submission-000001/feedback.json" in seen["after_edit"]
    assert "extra.txt" not in seen["after_edit"]
    assert seen["rejections_after_edit"] != "forged"
    assert "submission-000001/feedback.json" in seen["after_delete"]
    assert differences == []


def test_a_symlinked_feedback_folder_is_never_followed(root: Path) -> None:
    done = _run_agent(
        root,
        """
        import shutil
        call("submit", program="program", episodes="0:1")
        decoy = os.path.join(WS, "analysis", "decoy")
        os.makedirs(decoy)
        with open(os.path.join(decoy, "canary.txt"), "w") as f:
            f.write("the Agent's own notes")
        shutil.rmtree(os.path.join(WS, "feedback"))
        os.symlink(decoy, os.path.join(WS, "feedback"))
        call("submit", program="program", episodes="1:2")
        call("finish", candidates=["submission-000002"])
        """,
    )
    assert done.result.reason == "finished"
    decoy = done.run_dir / "workspace" / "analysis" / "decoy"
    assert not (done.run_dir / "workspace" / "feedback").is_symlink()
    assert sorted(p.name for p in decoy.iterdir()) == ["canary.txt"]  # nothing written through the link
    replay(done.run_dir, rebuild=True)
    assert (decoy / "canary.txt").exists()  # and nothing deleted through it


NEST = """
def nest(parent, depth, name):
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)
"""


def test_deep_long_and_special_garbage_in_feedback_never_stops_the_host(root: Path) -> None:
    """1,200 nested folders, names of 255 bytes past PATH_MAX, a fifo: the Host removes them and the Run goes on."""
    done = _run_agent(
        root,
        textwrap.indent(NEST, " " * 8)
        + """
        fb = os.path.join(WS, "feedback")
        call("submit", program="program", episodes="0:1")
        nest(fb, 1200, "d")
        nest(os.path.join(fb, "submission-000001"), 24, "n" * 255)
        os.mkfifo(os.path.join(fb, "fifo"))
        note("second.json", call("submit", program="program", episodes="1:2"))
        note("left.json", sorted(os.listdir(fb)))
        nest(fb, 1200, "e")  # left for the end of the Run
        call("finish", candidates=["submission-000002"])
        """,
    )
    assert done.result.reason == "finished", done.result
    assert done.note("second.json")["ok"] is True
    top = ["latest.json", "rejections.json", "retention.json", "submission-000001", "submission-000002"]
    assert done.note("left.json") == top
    assert done.mirror_differences() == []
    assert verify(done.run_dir).ok
    feedback = done.run_dir / "workspace" / "feedback"
    # garbage planted after the Run: replay reports it (never crashes), --rebuild removes it
    _nest(feedback, 1200, "z")
    _nest(feedback / "submission-000002", 24, "n" * 255)
    checked = replay(done.run_dir)
    assert not checked.ok
    assert "mirror_extra" in {f.code for check in checked.checks for f in check.findings}
    rebuilt = replay(done.run_dir, rebuild=True)
    assert rebuilt.ok, rebuilt.first_failure
    assert rebuilt.rebuilt is not None
    assert any("nested deeper" in odd for odd in rebuilt.rebuilt["garbage"])  # reported, and removed
    assert done.mirror_differences() == []


def _nest(parent: Path, depth: int, name: str) -> None:
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


STALE_AGENT = """
attempt = os.path.join(WS, "analysis", "attempt")
fb = os.path.join(WS, "feedback")
if not os.path.exists(attempt):
    open(attempt, "w").close()
    # the Agent re-launches itself in a new session: a copy that carries its environment and leaves its group
    relaunched = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    note("relaunched.json", relaunched.pid)
    nest(fb, 1200, "d")
    nest(fb, 24, "n" * 255)
    try:
        call("submit", program="program", episodes="0:1")  # the Host dies right after accepting it
    except Exception:
        pass
    time.sleep(60)
else:
    pid = json.load(open(os.path.join(WS, "analysis", "relaunched.json")))
    try:
        alive = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        alive = False
    note("resumed.json", {"relaunched_alive": alive, "feedback": sorted(os.listdir(fb))})
    call("finish", candidates=["submission-000001"])
"""

HOST = """
import sys
from pathlib import Path
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
agent, record_to, initial = sys.argv[1:4]
config = RunConfig(
    benchmark=BenchmarkRef(name="toy-counter"), episode_budget=4, validation=ValidationConfig(episodes=0),
    assessment=AssessmentConfig(episodes=0), finish_grace_seconds=0.5, agent=AgentConfig(name=agent),
)
run(config, record_to=Path(record_to), initial_program=Path(initial))
"""


def test_resume_stops_a_stale_agent_that_relaunched_itself_with_setsid_over_garbage_feedback(root: Path) -> None:
    """The Host dies mid-Run; its Agent had re-launched itself with setsid() and filled feedback/ with garbage."""
    script = root / "agent.py"
    script.write_text(PRELUDE + NEST + STALE_AGENT, encoding="utf-8")
    initial = root / "initial-program"
    initial.mkdir()
    (initial / "policy.py").write_text(RANDOM_POLICY.lstrip(), encoding="utf-8")
    crashed = subprocess.run(
        [sys.executable, "-c", HOST, f"command:{sys.executable} {script}", str(root / "r"), str(initial)],
        env={**os.environ, "EVOLEDGER_CRASH_AFTER": "submission-accepted:1"},
        capture_output=True,
        timeout=120,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    relaunched = json.loads((root / "r" / "workspace" / "analysis" / "relaunched.json").read_text())
    try:
        result = resume(root / "r", trust_agent=True)  # its own command: Agent
        resumed = json.loads((root / "r" / "workspace" / "analysis" / "resumed.json").read_text())
        assert resumed["relaunched_alive"] is False, "the stale Agent's setsid() copy survived resume"
        assert resumed["feedback"] == ["latest.json", "rejections.json", "retention.json", "submission-000001"]
        assert result.reason == "finished"
        assert result.selected == "submission-000001"
        assert verify(root / "r").ok
        audit = replay(root / "r")
        assert audit.ok, audit.first_failure
    finally:
        _kill(relaunched)


# ------------------------------------------------------------------------------------------------ snapshot race

VERSION_A = "VERSION = 'A'\n" + BINARY_SEARCH_POLICY + ("# " + "a" * 70 + "\n") * 300
VERSION_B = "VERSION = 'B'\n" + RANDOM_POLICY + ("# " + "b" * 70 + "\n") * 450


@pytest.fixture(scope="module")
def snapshot_race() -> Iterator[AgentRun]:
    """An Agent whose background thread rewrites policy.py in place (truncate + one write) while it submits."""
    path = _new_root()
    done = _run_agent(
        path,
        f"""
        import threading
        A, B = {VERSION_A.encode()!r}, {VERSION_B.encode()!r}
        path = os.path.join(WS, "program", "policy.py")
        stop = threading.Event()

        def rewrite():
            while not stop.is_set():
                for data in (A, B):
                    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
                    os.write(fd, data)
                    os.close(fd)

        writer = threading.Thread(target=rewrite, daemon=True)
        writer.start()
        replies = [call("submit", program="program", episodes=f"{{i}}:{{i + 1}}") for i in range(6)]
        stop.set()
        writer.join()
        replies.append(call("submit", program="program", episodes="6:7"))  # the writer has stopped at version B
        note("replies.json", replies)
        accepted = [r["result"]["submission_id"] for r in replies if r["ok"]]
        call("finish", candidates=accepted[-1:])
        """,
        program=VERSION_A,
        episode_budget=8,
    )
    yield done
    shutil.rmtree(path, ignore_errors=True)


def test_writing_into_program_during_submissions_never_breaks_the_run(snapshot_race: AgentRun) -> None:
    done = snapshot_race
    replies = done.note("replies.json")
    assert done.result.reason == "finished"
    assert verify(done.run_dir).ok
    state = done.state()
    assert state.charged - state.refunded + state.budget_left == state.episode_budget
    for rejected in done.events("submission-rejected"):
        assert isinstance(rejected, SubmissionRejected)
        assert rejected.code == "program_invalid"
        assert "changed during capture" in rejected.message
    assert sum(1 for r in replies if r["ok"]) == state.submissions_used
    # what ran is exactly what was snapshotted: each Program directory the Host executed holds the snapshot's bytes
    with Ledger.open(done.run_dir) as book:
        for event in (r.event for r in book.events(kinds=["program-snapshotted"])):
            assert isinstance(event, ProgramSnapshotted)
            executed = done.run_dir / "host" / "programs" / event.program_digest.removeprefix("sha256:")[:32]
            if executed.exists():
                assert digest_of((executed / "policy.py").read_bytes()) == event.files["policy.py"]


def test_an_accepted_snapshot_is_always_one_complete_version_of_the_file(snapshot_race: AgentRun) -> None:
    done = snapshot_race
    # The file really is empty between the writer's truncate and its write: a writer stalled there for longer than the
    # settle window (seen under load 18) left that version settled. Any other content is a torn read.
    versions = {digest_of(VERSION_A.encode()), digest_of(VERSION_B.encode()), digest_of(b"")}
    snapshots = [e for e in done.events("program-snapshotted") if isinstance(e, ProgramSnapshotted)]
    submitted = [e.files["policy.py"] for e in snapshots if e.source == "submission"]
    assert submitted, "no submission was accepted at all"
    assert set(submitted) <= versions
    assert submitted[-1] == digest_of(VERSION_B.encode())  # the submission made after the writer stopped
    finished = [e for e in done.events("episode-finished") if isinstance(e, EpisodeFinished)]
    assert finished[-1].status == "ok"


# ------------------------------------------------------------------------------------------------ never finishing


def test_best_public_fallback_selects_the_best_public_score_when_the_agent_never_finishes(root: Path) -> None:
    done = _run_agent(
        root,
        f"""
        write_program({FAILING_POLICY!r})
        call("submit", program="program", episodes="0:1")
        write_program({BINARY_SEARCH_POLICY!r})
        call("submit", program="program", episodes="1:2")
        write_program({FAILING_POLICY!r})
        call("submit", program="program", episodes="2:3")
        """,
        fallback="best_public",
        validation=ValidationConfig(episodes=2),
        assessment=AssessmentConfig(episodes=2),
    )
    assert [s.score for s in done.result.submissions] == [0.0, 1.0, 0.0]
    assert done.result.reason == "agent_exited"
    assert done.result.selected == "submission-000002"
    assert done.result.assessment_score == 1.0
    (selected,) = done.events("candidate-selected")
    assert selected.submission_id == "submission-000002"
    (ended,) = done.events("run-ended")
    assert (ended.reason, ended.selected_submission_id) == ("agent_exited", "submission-000002")
    assert "best_public" in ended.message
    assert ended.summary["candidates"] == ["submission-000002"]
    assert verify(done.run_dir).ok
