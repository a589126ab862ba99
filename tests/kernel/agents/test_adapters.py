"""Each adapter's exact argv / env / stdin construction, and the registry of agents by name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from evoledger.kernel.agents import (
    AGENTS,
    AgentCommand,
    AgentTask,
    BuiltinAgent,
    ClaudeCodeAgent,
    CodexAgent,
    CodingAgent,
    CommandAgent,
    KimiCodeAgent,
    QoderAgent,
    agent_names,
    make_agent,
)
from evoledger.ledger.errors import ConfigError, InputError, UnknownNameError

WS = Path("/runs/r1/workspace")
TEXT = "# evoledger task\nImprove the Policy.\n"


def _task(**kwargs: object) -> AgentTask:
    return AgentTask(task_text=TEXT, workspace=WS, **kwargs)  # type: ignore[arg-type]


def test_codex_argv() -> None:
    command = CodexAgent().command(_task(model="gpt-5-codex", extra_args=("--json",)))
    assert command == AgentCommand(
        argv=(
            "codex",
            "exec",
            "--sandbox",
            "workspace-write",
            "--skip-git-repo-check",
            "--cd",
            str(WS),
            "--model",
            "gpt-5-codex",
            "--json",
            TEXT,
        )
    )
    assert command.env == {}
    assert command.stdin is None


def test_codex_without_model_and_custom_executable() -> None:
    command = CodexAgent(executable="/opt/codex").command(_task())
    assert command.argv == (
        "/opt/codex",
        "exec",
        "--sandbox",
        "workspace-write",
        "--skip-git-repo-check",
        "--cd",
        str(WS),
        TEXT,
    )
    assert {"OPENAI_API_KEY", "CODEX_API_KEY", "HTTPS_PROXY"} <= CodexAgent().env_allowlist
    assert "ANTHROPIC_API_KEY" not in CodexAgent().env_allowlist


def test_claude_code_argv() -> None:
    command = ClaudeCodeAgent().command(_task(model="claude-sonnet-4-5", extra_args=("--max-turns", "50")))
    assert command.argv == (
        "claude",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash,Read,Edit,Write,Glob,Grep",
        "--output-format",
        "text",
        "--model",
        "claude-sonnet-4-5",
        "--max-turns",
        "50",
        "-p",
        TEXT,
    )
    assert command.env == {}
    assert command.stdin is None
    assert {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} <= ClaudeCodeAgent().env_allowlist
    assert "OPENAI_API_KEY" not in ClaudeCodeAgent().env_allowlist


def test_kimi_code_sends_the_task_on_stdin() -> None:
    command = KimiCodeAgent().command(_task(model="kimi-k2"))
    assert command.argv == ("kimi", "--print", "--model", "kimi-k2")
    assert command.stdin == TEXT.encode()
    assert command.env == {}
    assert {"KIMI_API_KEY", "MOONSHOT_API_KEY"} <= KimiCodeAgent().env_allowlist


def test_qoder_argv_puts_the_prompt_right_after_p() -> None:
    command = QoderAgent().command(_task(model="performance"))
    assert command.argv == ("qodercli", "--yolo", "--model", "performance", "-p", TEXT)
    assert command.stdin is None
    assert "QODER_PERSONAL_ACCESS_TOKEN" in QoderAgent().env_allowlist


def test_command_adapter_passes_stdin_and_task_file(tmp_path: Path) -> None:
    agent = CommandAgent.from_spec("command:python 'my agent.py' --fast", env_allowlist=["MY_KEY"])
    command = agent.command(_task(task_file=tmp_path / "task.md", extra_args=("-v",)))
    assert command.argv == ("python", "my agent.py", "--fast", "-v")
    assert command.env == {"EVOLEDGER_TASK_FILE": str(tmp_path / "task.md")}
    assert command.stdin == TEXT.encode()
    assert agent.env_allowlist == frozenset({"MY_KEY"})


def test_command_adapter_errors() -> None:
    with pytest.raises(ConfigError, match="task_file is None"):
        CommandAgent(argv=("x",)).command(_task())
    with pytest.raises(ConfigError, match="names no program"):
        CommandAgent.from_spec("command:   ")
    with pytest.raises(ConfigError, match="quoting"):
        CommandAgent.from_spec("command:python 'unclosed")
    with pytest.raises(ConfigError, match="must start with"):
        CommandAgent.from_spec("python agent.py")
    with pytest.raises(ConfigError, match="sequence of words"):
        CommandAgent(argv="python agent.py")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs a program"):
        CommandAgent(argv=())


def test_builtin_agent_runs_its_module_with_the_seed() -> None:
    agent = BuiltinAgent(name="hill-climb", module="evoledger.kernel.agents.builtin.hill_climb", seed=11)
    command = agent.command(_task())
    assert command.argv == (sys.executable, "-u", "-m", "evoledger.kernel.agents.builtin.hill_climb")
    assert command.env == {"EVOLEDGER_AGENT_SEED": "11"}
    assert agent.env_allowlist == frozenset({"PYTHONPATH"})  # it imports the same evoledger as the Host
    with pytest.raises(ConfigError, match="non-negative integer"):
        BuiltinAgent(name="x", module="m", seed=-1)


def test_task_and_command_validation() -> None:
    with pytest.raises(ConfigError, match="empty"):
        AgentTask(task_text="  ", workspace=WS)
    with pytest.raises(ConfigError, match="positive number"):
        _task(timeout=0)
    with pytest.raises(ConfigError, match="positive number"):
        _task(timeout=float("nan"))
    with pytest.raises(ConfigError, match="non-empty name"):
        _task(model="")
    with pytest.raises(ConfigError, match=r"shlex\.split"):
        _task(extra_args="--fast")
    with pytest.raises(ConfigError, match="needs a program"):
        AgentCommand(argv=())
    assert _task(extra_args=["-a", "b"]).extra_args == ("-a", "b")


# ---------------------------------------------------------------------------------------------- registry


def test_registry_names_and_factories() -> None:
    assert {"baseline", "claude-code", "codex", "hill-climb", "kimi-code", "qoder"} <= set(agent_names())
    for name in AGENTS:
        agent = make_agent(name)
        assert isinstance(agent, CodingAgent)
        assert agent.name == name
    assert isinstance(make_agent("codex"), CodexAgent)
    hill = make_agent("hill-climb", {"seed": 5})
    assert isinstance(hill, BuiltinAgent)
    assert hill.seed == 5
    assert hill.module == "evoledger.kernel.agents.builtin.hill_climb"
    assert make_agent("baseline").command(_task()).argv[-1] == "evoledger.kernel.agents.builtin.baseline"
    assert make_agent("claude-code", {"executable": "/usr/local/bin/claude"}).command(_task()).argv[0] == (
        "/usr/local/bin/claude"
    )


def test_registry_command_and_import_strings() -> None:
    agent = make_agent("command:bash run.sh", {"env_allowlist": ["TOKEN"]})
    assert isinstance(agent, CommandAgent)
    assert agent.argv == ("bash", "run.sh")
    assert agent.env_allowlist == frozenset({"TOKEN"})
    by_import = make_agent("evoledger.kernel.agents.adapters:QoderAgent")
    assert isinstance(by_import, QoderAgent)


def test_registry_errors() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'codex'") as info:
        make_agent("codx")
    assert info.value.suggestion == "codex"
    with pytest.raises(ConfigError, match="invalid options"):
        make_agent("codex", {"no_such_option": 1})
    with pytest.raises(ConfigError, match="only the option 'env_allowlist'"):
        make_agent("command:true", {"seed": 1})
    with pytest.raises(ConfigError, match="not a CodingAgent"):
        make_agent("evoledger.kernel.agents.registry:agent_names")
    with pytest.raises(InputError, match="cannot import"):
        make_agent("no_such_module_xyz:factory")
