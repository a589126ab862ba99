"""Agents that print without end, outlive their deadline while nobody polls, or escape their group with setsid."""

from __future__ import annotations

import os
import resource
import sys
import textwrap
import time
from pathlib import Path

import pytest
from evoledger.kernel.agents import (
    AGENT_LOG_HEAD_BYTES,
    AGENT_LOG_TAIL_BYTES,
    AgentSupervisor,
    AgentTask,
    CappedLog,
    CommandAgent,
)
from evoledger.ledger.errors import ConfigError

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs procfs")


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


def _wait_gone(pid: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not _gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _supervisor(tmp_path: Path, code: str, timeout: float | None = None, **kwargs: object) -> AgentSupervisor:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    agent = CommandAgent(argv=(sys.executable, "-c", textwrap.dedent(code)))
    marker_value = str(workspace)
    return AgentSupervisor(
        agent,
        AgentTask(task_text="# task\n", workspace=workspace, timeout=timeout),
        log_dir=tmp_path / "logs",
        parent_env={"PATH": os.environ["PATH"]},
        host_env={"EVOLEDGER_WORKSPACE": marker_value},
        marker=f"EVOLEDGER_WORKSPACE={marker_value}",
        **kwargs,  # type: ignore[arg-type]
    )


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_an_agent_printing_hundreds_of_mb_is_capped_and_says_what_was_dropped(tmp_path: Path) -> None:
    mib = 1024 * 1024
    sup = _supervisor(
        tmp_path,
        """
        import sys
        out = sys.stdout.buffer
        out.write(b"FIRST LINE\\n")
        line = b"x" * 1023 + b"\\n"
        for _ in range(300 * 1024):  # 300 MiB of 1 KiB lines
            out.write(line)
        out.write(b"THE END\\n")
        sys.stderr.write("a short error\\n")
        """,
    )
    before = _peak_rss_bytes()
    sup.start()
    exit_ = sup.wait()
    assert exit_.exit_code == 0
    log = exit_.stdout_path.read_bytes()
    assert len(log) <= AGENT_LOG_HEAD_BYTES + AGENT_LOG_TAIL_BYTES + 1024
    assert log.startswith(b"FIRST LINE\n")
    assert log.endswith(b"THE END\n")
    assert b"bytes (" in log
    assert b"were dropped" in log
    assert exit_.stderr_path.read_bytes() == b"a short error\n"
    assert _peak_rss_bytes() - before < 100 * mib  # the Host never held the output


def test_the_capped_log_counts_what_it_drops() -> None:
    log = CappedLog(head_bytes=4, tail_bytes=6)
    for chunk in (b"ab", b"cd\n1\n2\n3\n", b"4\n5\n6\n"):
        log.feed(chunk)
    rendered = log.render()
    assert rendered.startswith(b"abcd")
    assert rendered.endswith(b"4\n5\n6\n")
    assert log.dropped_bytes == 7
    assert log.dropped_lines == 4
    assert b"7 bytes (4 newlines)" in rendered
    small = CappedLog(head_bytes=4, tail_bytes=6)
    small.feed(b"hello")
    assert small.render() == b"hello"


def test_the_deadline_is_enforced_while_nobody_polls(tmp_path: Path) -> None:
    sup = _supervisor(tmp_path, "import time; time.sleep(60)", timeout=0.5, kill_grace=0.5)
    pid = sup.start()
    began = time.monotonic()
    assert _wait_gone(pid, 30.0), "the Agent outlived its deadline while the coordinator was busy"
    assert time.monotonic() - began < 30  # the Agent wanted 60 s
    exit_ = sup.poll()  # the coordinator comes back: the exit is there, ended by the watchdog
    assert exit_ is not None
    assert exit_.timed_out
    assert exit_.duration < 8


def test_a_child_that_called_setsid_is_ended_with_the_agent(tmp_path: Path) -> None:
    sup = _supervisor(
        tmp_path,
        """
        import subprocess, sys
        daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        print(daemon.pid, flush=True)
        """,
    )
    sup.start()
    exit_ = sup.wait()
    daemon = int(exit_.stdout_path.read_text().split()[0])
    try:
        assert _wait_gone(daemon), f"the Agent's setsid() child {daemon} outlived it"
    finally:
        if not _gone(daemon):
            os.kill(daemon, 9)


def test_processes_without_the_marker_are_left_alone(tmp_path: Path) -> None:
    import subprocess

    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={"PATH": os.environ["PATH"], "EVOLEDGER_WORKSPACE": str(tmp_path / "another")},
        start_new_session=True,
    )
    try:
        sup = _supervisor(tmp_path, "pass")
        sup.start()
        sup.wait()
        sup.stop()
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_the_marker_must_be_a_host_variable(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with pytest.raises(ConfigError, match="marker"):
        AgentSupervisor(
            CommandAgent(argv=("true",)),
            AgentTask(task_text="x", workspace=workspace),
            log_dir=tmp_path / "logs",
            host_env={"EVOLEDGER_WORKSPACE": str(workspace)},
            marker="EVOLEDGER_WORKSPACE=/elsewhere",
        )
