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
from evoledger.kernel.agents.homes import isolated_home
from evoledger.ledger.errors import ConfigError, InputError, UnknownNameError

WS = Path("/runs/r1/workspace")
TEXT = "# evoledger task\nImprove the Policy.\n"


def _task(**kwargs: object) -> AgentTask:
    fields: dict[str, object] = {"task_text": TEXT, "workspace": WS, **kwargs}
    return AgentTask(**fields)  # type: ignore[arg-type]


def _home(agent: str) -> str:
    home = isolated_home("X", agent, WS).path
    assert home.parent.name.startswith("evoledger-agent-homes-")
    assert home.name.startswith(f"{agent}-")
    return str(home)


def test_codex_argv_is_evopolicygyms_invocation() -> None:
    agent = CodexAgent(effort="high", view_image=True)
    command = agent.command(_task(model="gpt-5-codex", extra_args=("--oss",)))
    assert command.argv == (
        "codex",
        "--ask-for-approval",
        "never",
        "--config",
        "model_reasoning_effort=high",
        "exec",
        "--ephemeral",
        "--json",
        "--model",
        "gpt-5-codex",
        "--sandbox",
        "danger-full-access",
        "--skip-git-repo-check",
        "--ignore-user-config",
        "--ignore-rules",
        "--color",
        "never",
        "-c",
        "tools.view_image=true",
        "--oss",
        TEXT,
    )
    assert command.env == {"CODEX_HOME": _home("codex")}
    assert command.home is not None
    assert command.home.seed_files == ("auth.json",)
    assert command.transcript == "codex-json"
    assert command.stdin is None


def test_codex_without_model_effort_or_images_and_custom_executable() -> None:
    command = CodexAgent(executable="/opt/codex").command(_task())
    assert command.argv[:4] == ("/opt/codex", "--ask-for-approval", "never", "exec")
    assert "--model" not in command.argv
    assert "-c" not in command.argv
    assert "--config" not in command.argv
    assert command.argv[-1] == TEXT
    assert {"OPENAI_API_KEY", "CODEX_API_KEY", "HTTPS_PROXY"} <= CodexAgent().env_allowlist
    assert "ANTHROPIC_API_KEY" not in CodexAgent().env_allowlist


def test_claude_code_argv_is_evopolicygyms_invocation() -> None:
    command = ClaudeCodeAgent(effort="max").command(_task(model="claude-sonnet-4-5", extra_args=("--max-turns", "50")))
    assert command.argv == (
        "claude",
        "--print",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "claude-sonnet-4-5",
        "--effort",
        "max",
        "--permission-mode",
        "bypassPermissions",
        "--no-session-persistence",
        "--no-chrome",
        "--bare",
        "--strict-mcp-config",
        "--max-turns",
        "50",
        TEXT,
    )
    assert command.env == {"CLAUDE_CONFIG_DIR": _home("claude-code")}
    assert command.transcript == "claude-stream-json"
    assert command.stdin is None
    assert {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} <= ClaudeCodeAgent().env_allowlist
    assert "OPENAI_API_KEY" not in ClaudeCodeAgent().env_allowlist


def test_kimi_code_argv_is_evopolicygyms_invocation() -> None:
    command = KimiCodeAgent().command(_task(model="kimi-k2"))
    assert command.argv == ("kimi", "--model", "kimi-k2", "--output-format", "stream-json", "--prompt", TEXT)
    assert command.stdin is None
    assert command.env == {"KIMI_CODE_HOME": _home("kimi-code")}
    assert command.home is not None
    assert command.home.seed_files == ("config.toml", "credentials")
    assert command.transcript == "kimi-stream-json"
    assert {"KIMI_API_KEY", "MOONSHOT_API_KEY"} <= KimiCodeAgent().env_allowlist


def test_qoder_argv_is_evopolicygyms_invocation() -> None:
    command = QoderAgent(effort="high").command(_task(model="performance"))
    assert command.argv == (
        "qodercli",
        "--print",
        "--output-format",
        "stream-json",
        "--model",
        "performance",
        "--reasoning-effort",
        "high",
        "--permission-mode",
        "bypass_permissions",
        TEXT,
    )
    assert command.env == {"QODER_CONFIG_DIR": _home("qoder")}
    assert command.transcript == "qoder-stream-json"
    assert command.stdin is None
    assert "QODER_PERSONAL_ACCESS_TOKEN" in QoderAgent().env_allowlist


def test_a_user_named_home_is_used_as_it_is(tmp_path: Path) -> None:
    command = ClaudeCodeAgent(home=str(tmp_path / "mine")).command(_task())
    assert command.env == {"CLAUDE_CONFIG_DIR": str(tmp_path / "mine")}
    assert command.home is not None
    assert command.home.owned is False
    command.home.prepare({})
    command.home.remove()
    assert (tmp_path / "mine").is_dir()  # never removed


def test_an_isolated_home_gets_only_the_login_files_and_is_removed(tmp_path: Path) -> None:
    user = tmp_path / "user-codex"
    user.mkdir()
    (user / "auth.json").write_text('{"token": "t"}')
    (user / "config.toml").write_text("model = 'personal'")
    home = CodexAgent().command(_task(workspace=tmp_path / "ws")).home
    assert home is not None
    assert home.owned
    home.prepare({"CODEX_HOME": str(user)})
    assert sorted(p.name for p in home.path.iterdir()) == ["auth.json"]
    assert (home.path / "auth.json").stat().st_mode & 0o777 == 0o600
    assert home.path.stat().st_mode & 0o777 == 0o700
    home.prepare({"HOME": str(tmp_path / "nobody")})  # prepared again: a clean folder, nothing to copy
    assert list(home.path.iterdir()) == []
    home.remove()
    assert not home.path.exists()


def test_adapter_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="effort must be a level"):
        CodexAgent(effort="--oops")
    with pytest.raises(ConfigError, match="executable must name a program"):
        QoderAgent(executable=" ")
    with pytest.raises(ConfigError, match="home must be a folder"):
        KimiCodeAgent(home="")


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
    with pytest.raises(
        ConfigError, match=r"takes no option 'no_such_option'.*its options: executable, effort, view_image, home"
    ):
        make_agent("codex", {"no_such_option": 1})
    with pytest.raises(ConfigError, match=r"'kimi-code' takes no option 'effort'.*its options: executable, home"):
        make_agent("kimi-code", {"effort": "high"})
    with pytest.raises(ConfigError, match="invalid options"):
        make_agent("hill-climb", {"no_such_option": 1})
    with pytest.raises(ConfigError, match="only the option 'env_allowlist'"):
        make_agent("command:true", {"seed": 1})
    with pytest.raises(ConfigError, match="not a CodingAgent"):
        make_agent("evoledger.kernel.agents.registry:agent_names")
    with pytest.raises(InputError, match="cannot import"):
        make_agent("no_such_module_xyz:factory")
