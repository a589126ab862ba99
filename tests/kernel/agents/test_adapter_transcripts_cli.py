"""Each coding-agent adapter end to end: `evoledger run --agent X` with a fake CLI, then `evoledger export` to messages.

The fake CLI (a Python script given as ``--agent-option executable=...``) checks the invocation it got (EvoPolicyGym's
flags, its own configuration folder), works like the real agent loop (it runs ``evoledger-session submit`` and
``finish`` in its workspace) and prints what it did in that CLI's transcript format, with a malformed line and a line
of an unknown shape mixed in. The Run must record the transcript (``agent-transcript``) and the ``messages`` export must
carry the real tool calls (their arguments and the session's answers) rather than a reconstruction.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result
from evoledger.kernel.cli import cli
from evoledger.ledger.events import AgentExited, AgentTranscript
from evoledger.ledger.store import Ledger

FAKE_CLI = r"""#!__PYTHON__
import json, os, shutil, subprocess, sys

FORMAT = __FORMAT__
EXPECTED = __EXPECTED__
HOME_VARIABLE = __HOME_VARIABLE__
args = sys.argv[1:]
for flags in EXPECTED:  # each expected run of flags appears, in order, in the argv
    n = len(flags)
    assert any(args[i:i + n] == flags for i in range(len(args))), (flags, args)
task = args[-1]
assert task.startswith("#") and "evoledger-session" in task, "the prompt is the last argument"
home = os.environ[HOME_VARIABLE]
assert os.path.isdir(home), home
with open(os.path.join(home, "state.txt"), "w") as f:
    f.write("the CLI writes its own state here")
with open("analysis/fake-cli.json", "w") as f:
    json.dump({"argv": args, "home": home}, f)

session = shutil.which("evoledger-session") or sys.exit("evoledger-session is not on PATH")

def run(command):  # the session client imports the evoledger under test (it may not be installed)
    env = {**os.environ, "PYTHONPATH": __PYTHONPATH__}
    done = subprocess.run([session, *command.split()[1:]], capture_output=True, text=True, env=env)
    return done.stdout + done.stderr, done.returncode

def emit(record):
    print(json.dumps(record), flush=True)

first_cmd = "evoledger-session submit program --episodes 0:2"
first_out, code = run(first_cmd)
assert code == 0, first_out
chosen = json.loads(first_out)["submission_id"]
finish_cmd = "evoledger-session finish " + chosen
finish_out, code = run(finish_cmd)
assert code == 0, finish_out
calls = [("call-1", first_cmd, first_out), ("call-2", finish_cmd, finish_out)]

if FORMAT in ("claude", "qoder"):
    emit({"type": "system", "subtype": "init", "session_id": "s-1", "model": "fake-model", "tools": ["Bash"]})
    for n, (cid, command, out) in enumerate(calls):
        emit({"type": "assistant", "session_id": "s-1", "message": {
            "id": f"msg_{n}", "role": "assistant", "model": "fake-model",
            "content": [{"type": "thinking", "thinking": f"plan {n}"}, {"type": "text", "text": f"Step {n}."}],
            "usage": {"input_tokens": 100, "output_tokens": 10}}})
        emit({"type": "assistant", "session_id": "s-1", "message": {
            "id": f"msg_{n}", "role": "assistant", "model": "fake-model",
            "content": [{"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": command}}],
            "usage": {"input_tokens": 100, "output_tokens": 10}}})
        print("this line is not JSON {", flush=True)
        result = {"type": "tool_result", "tool_use_id": cid, "content": [{"type": "text", "text": out}]}
        emit({"type": "user", "session_id": "s-1", "message": {"role": "user", "content": [result]}})
    emit({"type": "assistant", "session_id": "s-1", "message": {"id": "msg_9", "role": "assistant",
          "content": [{"type": "text", "text": "Finished."}]}})
    emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": "Finished.",
          "session_id": "s-1", "total_cost_usd": 0.0125,
          "usage": {"input_tokens": 250, "output_tokens": 30, "cache_read_input_tokens": 7}})
elif FORMAT == "kimi":
    for cid, command, out in calls:
        function = {"name": "Shell", "arguments": json.dumps({"command": command})}
        emit({"role": "assistant", "content": "Running it.", "tool_calls": [
            {"type": "function", "id": cid, "function": function}]})
        print("this line is not JSON {", flush=True)
        emit({"role": "tool", "tool_call_id": cid, "content": out})
    emit({"role": "assistant", "content": "Finished."})
    emit({"role": "meta", "type": "session.resume_hint", "session_id": "session_01", "content": "To resume ..."})
else:  # codex
    emit({"type": "thread.started", "thread_id": "thread-1"})
    emit({"type": "turn.started"})
    for cid, command, out in calls:
        emit({"type": "item.completed", "item": {"id": "r" + cid, "type": "reasoning", "text": "think " + cid}})
        item = {"id": cid, "type": "command_execution", "command": command, "aggregated_output": "",
                "exit_code": None, "status": "in_progress"}
        emit({"type": "item.started", "item": item})
        print("this line is not JSON {", flush=True)
        emit({"type": "item.completed", "item": {**item, "aggregated_output": out, "exit_code": 0,
                                                  "status": "completed"}})
    emit({"type": "item.completed", "item": {"id": "m1", "type": "agent_message", "text": "Finished."}})
    emit({"type": "turn.completed", "usage": {"input_tokens": 250, "cached_input_tokens": 7, "output_tokens": 30}})
emit({"type": "some.future.event", "detail": 1})
"""

ADAPTERS: dict[str, dict[str, Any]] = {
    "claude-code": {
        "format": "claude",
        "home": "CLAUDE_CONFIG_DIR",
        "options": ["effort=high"],
        "expected": [
            ["--print", "--output-format", "stream-json", "--verbose"],
            ["--effort", "high"],
            ["--permission-mode", "bypassPermissions"],
            ["--no-session-persistence", "--no-chrome", "--bare", "--strict-mcp-config"],
        ],
        "tool": "Bash",
        "transcript": "claude-stream-json",
        "usage": (250, 30),
        "cost": 0.0125,
    },
    "codex": {
        "format": "codex",
        "home": "CODEX_HOME",
        "options": ["effort=low", "view_image=true"],
        "expected": [
            ["--ask-for-approval", "never", "--config", "model_reasoning_effort=low", "exec", "--ephemeral", "--json"],
            ["--sandbox", "danger-full-access", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules"],
            ["--color", "never", "-c", "tools.view_image=true"],
        ],
        "tool": "shell",
        "transcript": "codex-json",
        "usage": (250, 30),
        "cost": None,
    },
    "kimi-code": {
        "format": "kimi",
        "home": "KIMI_CODE_HOME",
        "options": [],
        "expected": [["--output-format", "stream-json", "--prompt"]],
        "tool": "Shell",
        "transcript": "kimi-stream-json",
        "usage": (None, None),  # its stream-json reports no usage
        "cost": None,
    },
    "qoder": {
        "format": "qoder",
        "home": "QODER_CONFIG_DIR",
        "options": ["effort=medium"],
        "expected": [
            ["--print", "--output-format", "stream-json"],
            ["--reasoning-effort", "medium", "--permission-mode", "bypass_permissions"],
        ],
        "tool": "Bash",
        "transcript": "qoder-stream-json",
        "usage": (250, 30),
        "cost": 0.0125,
    },
}


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="evt-", dir="/tmp"))  # short: Unix socket paths are length-limited
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _fake_cli(root: Path, adapter: str) -> Path:
    spec = ADAPTERS[adapter]
    fake = root / "bin" / f"fake-{adapter}"
    fake.parent.mkdir(exist_ok=True)
    source = (
        FAKE_CLI.replace("__PYTHON__", sys.executable)
        .replace("__FORMAT__", repr(spec["format"]))
        .replace("__EXPECTED__", repr(spec["expected"]))
        .replace("__HOME_VARIABLE__", repr(spec["home"]))
        .replace("__PYTHONPATH__", repr(os.environ.get("PYTHONPATH", "")))
    )
    fake.write_text(source, encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake


def _evoledger(*args: str) -> Result:
    """``evoledger ARGS`` (the real command group, in this process: its Agent is a real process all the same)."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_run_with_the_fake_cli_records_its_transcript_and_exports_its_tool_calls(
    root: Path, adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ADAPTERS[adapter]
    scripts = Path(sys.executable).parent  # evoledger-session, on the Agent's PATH
    monkeypatch.setenv("PATH", os.pathsep.join([str(scripts), os.environ.get("PATH", "")]))
    monkeypatch.chdir(root)
    fake = _fake_cli(root, adapter)
    options = [f"--agent-option={pair}" for pair in [f"executable={fake}", *spec["options"]]]
    ran = _evoledger(
        "run", "toy-counter", "--agent", adapter, *options, "--agent-model", "fake-model",
        "--episode-budget", "4", "--validation-episodes", "0", "--assessment-episodes", "1",
        "--finish-grace", "0.5", "--agent-isolation", "local", "--record-to", "r", "--json",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["reason"] == "finished"
    seen = json.loads((root / "r" / "workspace" / "analysis" / "fake-cli.json").read_text())
    assert seen["argv"][seen["argv"].index("--model") + 1] == "fake-model"
    assert not Path(seen["home"]).exists()  # the Run's own configuration folder is gone with the Agent
    assert not str(seen["home"]).startswith(str(root / "r"))  # and never lived in the run directory

    with Ledger.open(root / "r") as book:
        (exited,) = [r.event for r in book.events(kinds=["agent-exited"])]
        (recorded,) = [r.event for r in book.events(kinds=["agent-transcript"])]
        assert isinstance(exited, AgentExited)
        assert isinstance(recorded, AgentTranscript)
        assert recorded.format == spec["transcript"]
        assert recorded.tool_calls == 2
        assert recorded.malformed_lines == 3  # two lines that are not JSON, one of an unknown shape
        assert (recorded.input_tokens, recorded.output_tokens) == spec["usage"]
        assert recorded.cost_usd == spec["cost"]
        raw = book.objects.get(exited.stdout_digest or "")
        assert b"this line is not JSON {" in raw  # the raw stream is kept too
        document = json.loads(book.objects.get(recorded.transcript_digest))
        assert [bad["text"] for bad in document["malformed"]][:1] == ["this line is not JSON {"]
        times = [m["at"] for m in document["messages"]]  # when each line arrived, in order
        assert None not in times
        assert times == sorted(times)

    verified = _evoledger("ledger", "verify", "r", "--json")  # the audit accepts the new Event where it stands
    assert verified.exit_code == 0, verified.output

    exported = _evoledger("export", "r", "--out", "out", "--config", "messages")
    assert exported.exit_code == 0, exported.output
    (row,) = pq.read_table(root / "out" / "messages" / "train-00000-of-00001.parquet").to_pylist()
    assert row["transcript_format"] == spec["transcript"]
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (*spec["usage"], spec["cost"])
    messages = row["messages"]
    assert messages[0]["role"] == "user"
    assert messages[0]["content"].startswith("#")
    calls = [m for m in messages if m["tool_calls"]]
    assert [c["tool_calls"][0]["function"]["name"] for c in calls] == [spec["tool"]] * 2
    commands = [json.loads(c["tool_calls"][0]["function"]["arguments"])["command"] for c in calls]
    assert commands[0] == "evoledger-session submit program --episodes 0:2"
    assert commands[1].startswith("evoledger-session finish submission-")
    for call in calls:  # every call is answered by its tool result, right after it
        call_id = call["tool_calls"][0]["id"]
        (reply,) = [m for m in messages if m["role"] == "tool" and m["tool_call_id"] == call_id]
        assert messages.index(reply) == messages.index(call) + 1
    submit_reply = json.loads(messages[messages.index(calls[0]) + 1]["content"].split("\n[exit code")[0])
    assert submit_reply["submission_id"] == "submission-000001"  # the session's real answer
    assert messages[-1] == {**messages[-1], "role": "assistant", "content": "Finished."}
    if spec["format"] in ("claude", "qoder", "codex"):
        assert any(m["reasoning_content"] for m in messages)
