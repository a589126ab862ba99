"""AgentSupervisor with real processes: exits, timeouts, environment filtering, stop()."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from evoledger.kernel.agents import (
    AgentCommand,
    AgentSupervisor,
    AgentTask,
    CommandAgent,
    build_agent_env,
)
from evoledger.ledger.errors import ConfigError, InfraError


def _gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (absent, or a zombie waiting for a reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


def _wait_gone(pids: list[int], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.02)
    return all(_gone(p) for p in pids)


def _python_agent(code: str, **allow: str) -> CommandAgent:
    return CommandAgent(argv=(sys.executable, "-c", textwrap.dedent(code)), env_allowlist=frozenset(allow))


def _task(tmp_path: Path, timeout: float | None = None) -> AgentTask:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return AgentTask(task_text="# the task\nDo it.\n", workspace=workspace, timeout=timeout)


def _supervisor(tmp_path: Path, code: str, timeout: float | None = None, **kwargs: object) -> AgentSupervisor:
    parent_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "SECRET_TOKEN": "s3cret", "OTHER": "x"}
    return AgentSupervisor(
        _python_agent(code),
        _task(tmp_path, timeout),
        log_dir=tmp_path / "logs",
        parent_env=parent_env,
        host_env={"EVOLEDGER_SESSION_SOCKET": "/run/sock", "EVOLEDGER_WORKSPACE": str(tmp_path / "workspace")},
        **kwargs,  # type: ignore[arg-type]
    )


def test_normal_exit_captures_output_stdin_and_task_file(tmp_path: Path) -> None:
    sup = _supervisor(
        tmp_path,
        """
        import os, sys
        text = sys.stdin.read()
        print("cwd", os.getcwd())
        print("stdin", text == open(os.environ["EVOLEDGER_TASK_FILE"]).read())
        print("oops", file=sys.stderr)
        """,
    )
    pid = sup.start()
    assert pid == sup.pid
    exit_ = sup.wait()
    assert exit_.exit_code == 0
    assert exit_.signal is None
    assert exit_.ok
    assert not exit_.timed_out
    assert not exit_.stopped
    assert exit_.duration >= 0
    out = exit_.stdout_path.read_text()
    assert f"cwd {tmp_path / 'workspace'}" in out
    assert "stdin True" in out
    assert exit_.stderr_path.read_text() == "oops\n"
    assert (tmp_path / "logs" / "task.md").read_text() == "# the task\nDo it.\n"
    assert sup.task.task_file == tmp_path / "logs" / "task.md"


def test_nonzero_exit_is_reported(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, "import sys; sys.exit(3)")
    sup.start()
    exit_ = sup.wait()
    assert exit_.exit_code == 3
    assert not exit_.ok
    assert sup.poll() == exit_


def test_environment_is_filtered_to_the_allowlist(tmp_path: Path) -> None:
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    parent_env = {
        "PATH": os.environ["PATH"],
        "HOME": "/home/agent",
        "LANG": "C.UTF-8",
        "SECRET_TOKEN": "s3cret",
        "MY_API_KEY": "k",
        "PYTHONPATH": "/elsewhere",
    }
    agent = CommandAgent(argv=(sys.executable, "-c", code), env_allowlist=frozenset({"MY_API_KEY"}))
    sup = AgentSupervisor(
        agent,
        _task(tmp_path),
        log_dir=tmp_path / "logs",
        parent_env=parent_env,
        host_env={"EVOLEDGER_SESSION_SOCKET": "/run/sock"},
    )
    sup.start()
    exit_ = sup.wait()
    seen = json.loads(exit_.stdout_path.read_text())
    seen.pop("LC_CTYPE", None)  # the interpreter may coerce the C locale by itself
    assert seen == {
        "PATH": os.environ["PATH"],
        "HOME": "/home/agent",
        "LANG": "C.UTF-8",
        "MY_API_KEY": "k",
        "EVOLEDGER_SESSION_SOCKET": "/run/sock",
        "EVOLEDGER_TASK_FILE": str(tmp_path / "logs" / "task.md"),
    }
    assert "SECRET_TOKEN" not in sup.env


def test_secret_of_the_real_environment_does_not_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLEDGER_TEST_SECRET_FROM_PARENT", "leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "leak")
    code = "import os; print(sorted(os.environ))"
    sup = AgentSupervisor(_python_agent(code), _task(tmp_path), log_dir=tmp_path / "logs")
    sup.start()
    out = sup.wait().stdout_path.read_text()
    assert "AWS_SECRET_ACCESS_KEY" not in out
    assert "EVOLEDGER_TEST_SECRET_FROM_PARENT" not in out  # the prefix alone does not pass the parent's variables
    assert "PATH" in out


def test_host_env_must_use_the_evoledger_prefix() -> None:
    agent = CommandAgent(argv=("true",))
    with pytest.raises(ConfigError, match="only pass EVOLEDGER_"):
        build_agent_env(agent, AgentCommand(argv=("true",)), {}, {"PATH": "/evil"})


def test_adapter_env_and_host_env_override_in_order() -> None:
    agent = CommandAgent(argv=("true",), env_allowlist=frozenset({"KEY"}))
    command = AgentCommand(argv=("true",), env={"KEY": "adapter", "EVOLEDGER_X": "adapter"})
    env = build_agent_env(agent, command, {"KEY": "parent", "PATH": "/bin"}, {"EVOLEDGER_X": "host"})
    assert env == {"KEY": "adapter", "PATH": "/bin", "EVOLEDGER_X": "host"}


GRANDCHILDREN = """
import subprocess, time
pids = []
for _ in range(2):
    child = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
    pids.append(child.pid)
    pids.append(int(child.stdout.readline()))
with open("pids.json", "w") as f:
    f.write(repr(pids))
print("ready", flush=True)
time.sleep(300)
"""


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, GRANDCHILDREN, timeout=2.0, kill_grace=0.5)
    leader = sup.start()
    exit_ = sup.wait()
    assert "ready" in exit_.stdout_path.read_text()
    assert exit_.timed_out
    assert exit_.exit_code is None
    assert exit_.signal in (signal.SIGTERM, signal.SIGKILL)
    assert 2.0 <= exit_.duration < 10.0
    pids = eval((tmp_path / "workspace" / "pids.json").read_text())
    assert len(pids) == 4
    assert _wait_gone([leader, *pids])


def test_timeout_uses_the_injected_clock(tmp_path: Path) -> None:
    now = [100.0]

    def clock() -> float:
        now[0] += 1.0  # every reading advances one "second"
        return now[0]

    sup = _supervisor(tmp_path, "import time; time.sleep(60)", timeout=5.0, clock=clock, kill_grace=0.0)
    sup.start()
    started = time.monotonic()
    exit_ = sup.wait()
    assert exit_.timed_out
    assert time.monotonic() - started < 30.0  # far less than the 60 s the child wanted: the clock is the injected one
    assert exit_.signal in (signal.SIGTERM, signal.SIGKILL)
    assert exit_.duration >= 5.0  # measured on the injected clock


def test_stop_with_grace_lets_the_agent_exit_cleanly(tmp_path: Path) -> None:
    code = """
    import os, signal, sys, time
    def bye(*_):
        os.write(1, b"terminated\\n")  # not print(): SIGTERM may land while print("ready") is still flushing
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
    print("ready", flush=True)
    time.sleep(300)
    """
    sup = _supervisor(tmp_path, code)
    sup.start()
    _wait_for_text(sup.stdout_path, "ready")
    exit_ = sup.stop(grace_seconds=5.0)
    assert exit_.exit_code == 0
    assert exit_.stopped
    assert not exit_.timed_out
    assert "terminated" in exit_.stdout_path.read_text()
    assert sup.stop(0.0) == exit_  # idempotent


def test_stop_kills_an_agent_that_ignores_sigterm_after_the_grace(tmp_path: Path) -> None:
    code = """
    import signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)
    time.sleep(300)
    """
    sup = _supervisor(tmp_path, code)
    sup.start()
    _wait_for_text(sup.stdout_path, "ready")
    started = time.monotonic()
    exit_ = sup.stop(grace_seconds=0.5)
    assert 0.4 <= time.monotonic() - started < 30.0  # the grace was waited for; the 300 s sleep was not
    assert exit_.signal == signal.SIGKILL
    assert exit_.stopped


def test_stop_ends_children_that_outlive_the_agent(tmp_path: Path) -> None:
    code = """
    import subprocess, sys
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    open("child.pid", "w").write(str(child.pid))
    """
    sup = _supervisor(tmp_path, code, reap_orphans=False)
    sup.start()
    exit_ = sup.wait()
    assert exit_.exit_code == 0
    child = int((tmp_path / "workspace" / "child.pid").read_text())
    assert not _gone(child)  # the orphan still runs: it would keep the Agent's authority
    after = sup.stop(grace_seconds=2.0)
    assert after.exit_code == 0
    assert not after.stopped  # the Agent itself had already exited
    assert _wait_gone([child])


def test_children_left_behind_are_reaped_when_the_agent_exits(tmp_path: Path) -> None:
    code = """
    import signal, subprocess, sys
    ignore = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); time.sleep(300)"
    child = subprocess.Popen([sys.executable, "-c", ignore], stdout=subprocess.PIPE)
    child.stdout.readline()  # the child now ignores SIGTERM
    open("child.pid", "w").write(str(child.pid))
    """
    sup = _supervisor(tmp_path, code, kill_grace=0.3)
    sup.start()
    exit_ = sup.wait()
    assert exit_.exit_code == 0
    assert not exit_.timed_out
    child = int((tmp_path / "workspace" / "child.pid").read_text())
    assert _wait_gone([child], seconds=1.0)  # SIGKILLed after the grace, before wait() returned


def test_poll_enforces_the_deadline(tmp_path: Path) -> None:
    now = [0.0]
    sup = _supervisor(tmp_path, "import time; time.sleep(60)", timeout=10.0, clock=lambda: now[0], kill_grace=0.0)
    pid = sup.start()
    assert sup.poll() is None
    now[0] = 9.9
    assert sup.poll() is None
    now[0] = 10.0
    exit_ = sup.poll()
    assert exit_ is not None
    assert exit_.timed_out
    assert exit_.duration == 10.0
    assert _wait_gone([pid])


def test_wait_and_stop_from_two_threads_agree(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, "import time; print('ready', flush=True); time.sleep(300)")
    sup.start()
    _wait_for_text(sup.stdout_path, "ready")
    results = []
    waiter = threading.Thread(target=lambda: results.append(sup.wait()))
    waiter.start()
    stopped = sup.stop(grace_seconds=1.0)
    waiter.join(10)
    assert results == [stopped]
    assert stopped.signal == signal.SIGTERM


def test_misuse_is_reported(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, "pass")
    with pytest.raises(ConfigError, match="call start"):
        sup.wait()
    with pytest.raises(ConfigError, match="grace_seconds"):
        sup.stop(-1)
    sup.start()
    with pytest.raises(ConfigError, match="already started"):
        sup.start()
    sup.wait()
    with pytest.raises(ConfigError, match="kill_grace"):
        _supervisor(tmp_path, "pass", kill_grace=-1)


def test_missing_workspace_and_missing_program_are_reported(tmp_path: Path) -> None:
    task = AgentTask(task_text="# t", workspace=tmp_path / "absent")
    with pytest.raises(ConfigError, match="not a directory"):
        AgentSupervisor(CommandAgent(argv=("true",)), task, log_dir=tmp_path / "logs").start()
    missing = CommandAgent(argv=(str(tmp_path / "no-such-agent"),))
    with pytest.raises(ConfigError, match="is not installed or not executable"):
        AgentSupervisor(missing, _task(tmp_path), log_dir=tmp_path / "logs").start()
    huge = CommandAgent(argv=("true", "x" * 200_000))  # one argument beyond the kernel's limit: E2BIG
    with pytest.raises(InfraError, match="cannot start Agent"):
        AgentSupervisor(huge, _task(tmp_path), log_dir=tmp_path / "logs2").start()


def _wait_for_text(path: Path, text: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {path}")
