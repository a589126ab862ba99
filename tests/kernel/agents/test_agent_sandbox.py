"""``--agent-isolation bwrap``: a hostile Agent in a real Run sees its workspace and the session socket, nothing else.

Every Agent here is a ``command:`` script that speaks the Session protocol with the standard library
(``tests/support/session_call.py``). The run directory, the Host's signing keys and ``$EVOLEDGER_HOME`` live under
``/var/tmp`` (not ``/tmp``, which the sandbox replaces wholesale), so each hiding is tested on its own. The same
attacks succeed with ``agent_isolation="local"`` (the unsandboxed Agent of ``docs/security.md``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.agents import BuiltinAgent, ClaudeCodeAgent, CommandAgent, marked_processes
from evoledger.kernel.agents.sandbox import AgentSandbox, expand_state_paths
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, RunResult, ValidationConfig, run
from evoledger.kernel.session import WORKSPACE_ENV
from evoledger.ledger.events import RunCreated
from evoledger.ledger.signing_keys import create_key_file
from evoledger.ledger.store import Ledger

_BWRAP, _WHY_NOT = probe_bwrap()
needs_bwrap = pytest.mark.skipif(_BWRAP is None, reason=f"bubblewrap is not usable here: {_WHY_NOT}")

SUPPORT = Path(__file__).resolve().parents[2] / "support"  # tests/support/session_call.py
PRELUDE = r"""
import json, os, signal, socket, subprocess, sys, time
WS = os.environ["EVOLEDGER_WORKSPACE"]
sys.path.insert(0, __SUPPORT__)
from session_call import call

def note(name, value):
    with open(os.path.join(WS, "analysis", name), "w") as f:
        json.dump(value, f)

def attempt(action):
    try:
        return {"ok": True, "value": repr(action())[:200]}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}
""".replace("__SUPPORT__", repr(str(SUPPORT)))

POLICY = """
def make_policy(context):
    class _Policy:
        def act(self, observation):
            return 0

    return _Policy()
"""

ATTACKS = """
run_root = os.path.dirname(WS)
host_pid, port, home_key, lab_key = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
def read(path):
    with open(path, "rb") as f:
        return f.read()
found = {
    "ledger": attempt(lambda: read(os.path.join(WS, "..", "ledger.sqlite"))),
    "head": attempt(lambda: read(os.path.join(run_root, "ledger.head"))),
    "host_listing": attempt(lambda: sorted(os.listdir(os.path.join(run_root, "host")))),
    "agent_log": attempt(lambda: read(os.path.join(run_root, "host", "agent-1", "stdout.log"))),
    "home_key": attempt(lambda: read(home_key)),
    "lab_key": attempt(lambda: read(lab_key)),
    "host_environ": attempt(lambda: read(f"/proc/{host_pid}/environ")),
    "signal_host": attempt(lambda: os.kill(host_pid, 0)),
    "network": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close()),
    "write_run_root": attempt(lambda: open(os.path.join(run_root, "planted"), "w").close()),
    "task_file": attempt(lambda: len(read(os.environ["EVOLEDGER_TASK_FILE"]))),
}
note("attacks.json", found)
"""


def _script(root: Path, body: str) -> Path:
    script = root / "agent.py"
    script.write_text(PRELUDE + textwrap.dedent(body), encoding="utf-8")
    return script


def _run(root: Path, script: Path, *args: str, **config: Any) -> RunResult:
    signing_key = config.pop("signing_key", None)
    initial = root / "initial-program"
    initial.mkdir(exist_ok=True)
    (initial / "policy.py").write_text(POLICY.lstrip(), encoding="utf-8")
    settings: dict[str, Any] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "episode_budget": 4,
        "validation": ValidationConfig(episodes=0),
        "assessment": AssessmentConfig(episodes=0),
        "finish_grace_seconds": 0.5,
        "agent": AgentConfig(name=" ".join(["command:" + sys.executable, str(script), *args])),
        "agent_isolation": "bwrap",
        **config,
    }
    return run(RunConfig(**settings), record_to=root / "r", initial_program=initial, signing_key=signing_key)


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="eva-", dir="/var/tmp"))  # outside /tmp; short for the socket path
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _attack_run(root: Path, monkeypatch: pytest.MonkeyPatch, isolation: str) -> tuple[RunResult, dict[str, Any]]:
    home = root / "evoledger-home"
    home.mkdir()
    home_key = home / "signing-key.pem"
    create_key_file(home_key)
    lab_key = root / "keys" / "lab.pem"
    lab_key.parent.mkdir()
    signing_key = create_key_file(lab_key)
    monkeypatch.setenv("EVOLEDGER_HOME", str(home))
    monkeypatch.setenv("EVOLEDGER_TEST_HOST_SECRET", "do-not-leak")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        script = _script(
            root,
            ATTACKS
            + """
call("submit", program="program", episodes="0:2")
reply = subprocess.run(["evoledger-session", "finish", "submission-000001"], capture_output=True, text=True)
note("finish.json", {"code": reply.returncode, "out": reply.stdout[-400:], "err": reply.stderr[-400:]})
""",
        )
        args = (str(os.getpid()), str(port), str(home_key), str(lab_key))
        result = _run(root, script, *args, agent_isolation=isolation, signing_key=signing_key)
    notes = json.loads((root / "r" / "workspace" / "analysis" / "attacks.json").read_text(encoding="utf-8"))
    return result, notes


@needs_bwrap
def test_a_sandboxed_agent_reaches_nothing_of_the_host_and_still_finishes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, found = _attack_run(root, monkeypatch, "bwrap")
    for name in ("ledger", "head", "agent_log", "home_key", "lab_key", "host_environ", "signal_host", "network"):
        assert found[name]["ok"] is False, f"the sandboxed Agent could do {name!r}: {found[name]}"
    # host/ is an empty folder of the sandbox's own, except the task file the Agent is handed
    assert found["host_listing"] == {"ok": True, "value": "['task.md']"}
    assert found["task_file"]["ok"] is True
    assert not (root / "r" / "planted").exists()  # whatever it wrote beside the workspace was a private tmpfs
    finish = json.loads((root / "r" / "workspace" / "analysis" / "finish.json").read_text(encoding="utf-8"))
    assert finish["code"] == 0, finish
    assert result.reason == "finished"
    assert result.selected == "submission-000001"
    audit = replay(root / "r")
    assert audit.ok, audit.first_failure
    with Ledger.open(root / "r") as book:
        (created,) = [r.event for r in book.events(kinds=["run-created"])]
    assert isinstance(created, RunCreated)
    assert created.config["agent_isolation"] == "bwrap"


def test_an_unsandboxed_agent_reads_the_ledger_keys_and_host(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same Agent under ``local``: what the sandbox takes away (documented in docs/security.md)."""
    result, found = _attack_run(root, monkeypatch, "local")
    for name in ("ledger", "head", "agent_log", "home_key", "lab_key", "host_environ", "signal_host", "network"):
        assert found[name]["ok"] is True, f"{name}: {found[name]}"
    assert result.reason == "finished"


@needs_bwrap
def test_a_hanging_sandboxed_agent_is_stopped_at_its_timeout(root: Path) -> None:
    script = _script(
        root,
        """
        helper = subprocess.Popen(["sleep", "60"])
        call("submit", program="program", episodes="0:1")
        time.sleep(60)
        """,
    )
    began = time.monotonic()
    result = _run(root, script, agent_timeout_seconds=1.0)
    assert result.reason == "agent_timeout"
    assert time.monotonic() - began < 30  # 1 s timeout; generous for a loaded machine
    assert result.budget_used == 1
    workspace = (root / "r" / "workspace").resolve()
    assert marked_processes(f"{WORKSPACE_ENV}={workspace}") == []


def _processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@needs_bwrap
def test_a_daemon_that_drops_its_environment_dies_with_the_sandbox(root: Path) -> None:
    """``setsid`` plus ``env -i``: neither the group nor the marker finds it, the pid namespace still ends it."""
    token = f"61.{os.getpid()}{time.monotonic_ns() % 100000}"
    script = _script(
        root,
        f"""
        call("submit", program="program", episodes="0:1")
        subprocess.Popen(["env", "-i", "sleep", "{token}"], start_new_session=True)
        time.sleep(0.3)
        """,
    )
    result = _run(root, script)
    try:
        assert result.reason == "agent_exited"
        deadline = time.monotonic() + 10
        while _processes_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(token) == [], "the Agent's environment-less daemon outlived the Run"
    finally:
        for pid in _processes_with(token):
            os.kill(pid, 9)


# ---------------------------------------------------------------------------------------------- the argv itself


def test_the_sandbox_hides_the_run_and_keys_and_binds_back_only_what_the_agent_needs(tmp_path: Path) -> None:
    run_root = tmp_path / "run"
    for sub in ("workspace", "control", "host"):
        (run_root / sub).mkdir(parents=True)
    (run_root / "host" / "task.md").write_text("# task\n")
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "lab.pem").write_text("secret")
    home = tmp_path / "home"
    home.mkdir()
    sandbox = AgentSandbox(
        run_root=run_root,
        workspace=run_root / "workspace",
        readable=(run_root / "control", run_root / "host" / "task.md"),
        hidden_folders=(home, tmp_path / "absent"),
        hidden_files=(keys / "lab.pem",),
        bwrap="/usr/bin/bwrap",
    )
    argv = sandbox.command(["python3", "agent.py"], network=False)
    real = os.path.realpath
    assert argv[:1] == ["/usr/bin/bwrap"]
    assert argv[-3:] == ["--", "python3", "agent.py"]
    assert "--unshare-net" in argv
    assert "--unshare-pid" in argv
    assert "--die-with-parent" in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    joined = " ".join(argv)
    assert f"--tmpfs {real(home)}" in joined
    assert str(tmp_path / "absent") not in joined
    assert f"--ro-bind /dev/null {real(keys / 'lab.pem')}" in joined
    root_at = joined.index(f"--tmpfs {real(run_root)} ")
    assert joined.index(f"--bind {real(run_root / 'workspace')} ") > root_at  # bound back after the hiding
    assert joined.index(f"--ro-bind {real(run_root / 'control')} ") > root_at
    assert "--setenv" not in argv  # the environment (API keys included) never appears in a command line
    assert "--unshare-net" not in sandbox.command(["claude"], network=True)


def test_adapters_declare_network_and_state_folders() -> None:
    assert ClaudeCodeAgent().needs_network is True
    assert CommandAgent(argv=("python3",)).needs_network is False
    assert BuiltinAgent(name="hill-climb", module="x").needs_network is False
    env = {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/etc/claude-conf"}
    paths = expand_state_paths(ClaudeCodeAgent().state_paths, env)
    assert paths == [Path("/etc/claude-conf")]  # the Run's own CLAUDE_CONFIG_DIR, never the user's ~/.claude
    assert expand_state_paths(("$UNSET", "~/x", "relative"), {}) == []
