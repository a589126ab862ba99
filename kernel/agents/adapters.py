"""First-party adapters: how to run each coding-agent CLI non-interactively in the Run's workspace.

Each adapter is a pure function of an :class:`AgentTask`: it builds argv, extra environment variables and
optional stdin, and names the parent environment variables the CLI may inherit (its credentials, proxies).
The supervisor does the launching. The four coding-agent CLIs are invoked as EvoPolicyGym 0.3 invokes them (flag for
flag; each flag checked against the tool's public documentation where it exists, noted per adapter), print a
machine-readable transcript on stdout (its format is ``AgentCommand.transcript``, parsed by
``kernel.agents.transcripts``) and get their own configuration folder per Run (``kernel.agents.homes``).
Their options (``--agent-option key=value``): ``executable`` (a path or name for the binary), ``effort``
(reasoning effort, where the CLI has one), ``view_image`` (Codex) and ``home`` (use this configuration folder instead
of a fresh one); ``task.model`` and ``task.extra_args`` come from ``--agent-model`` / ``--agent-arg``, so a flag that a
newer CLI version renamed can be fixed from the Run configuration without a code change.

Each adapter also says what its Agent needs under ``--agent-isolation bwrap`` (``kernel.agents.sandbox``):
``needs_network`` (a coding-agent CLI must reach its API; built-in and ``command:`` Agents get no network) and
``state_paths``, its own configuration and session folders (``~/...`` or ``$VARIABLE``), kept writable when they exist.

The task text always begins with a Markdown heading, never with ``-``, so it is safe as a trailing positional
argument.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from evoledger.kernel.agents.base import AgentCommand, AgentTask
from evoledger.kernel.agents.homes import isolated_home
from evoledger.ledger.errors import ConfigError

__all__ = [
    "AGENT_SEED_ENV",
    "COMMAND_PREFIX",
    "NETWORK_ENV_VARS",
    "TASK_FILE_ENV",
    "BuiltinAgent",
    "ClaudeCodeAgent",
    "CodexAgent",
    "CommandAgent",
    "KimiCodeAgent",
    "QoderAgent",
]

COMMAND_PREFIX = "command:"
"""``command:<shell-words>`` names the generic command adapter in a registry lookup."""

TASK_FILE_ENV = "EVOLEDGER_TASK_FILE"
"""The variable through which the generic command adapter passes the path of the task text file."""

AGENT_SEED_ENV = "EVOLEDGER_AGENT_SEED"
"""The variable that seeds a built-in agent's random generator."""

NETWORK_ENV_VARS: frozenset[str] = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"}
)
"""Proxy and CA variables a networked CLI needs to reach its API from behind a proxy; never secrets."""


def _model_args(flag: str, task: AgentTask) -> tuple[str, ...]:
    return (flag, task.model) if task.model is not None else ()


def _effort_args(flag: str, effort: str | None) -> tuple[str, ...]:
    return (flag, effort) if effort is not None else ()


def _check_options(name: str, executable: str, effort: str | None, home: str | None) -> None:
    if not executable or not executable.strip():
        raise ConfigError(f"agent {name!r}: executable must name a program or a path, got {executable!r}")
    if effort is not None and (not effort.strip() or effort.startswith("-")):
        raise ConfigError(f"agent {name!r}: effort must be a level such as low, medium or high, got {effort!r}")
    if home is not None and not home.strip():
        raise ConfigError(f"agent {name!r}: home must be a folder path, got an empty string")


@dataclass(frozen=True, slots=True)
class CodexAgent:
    """OpenAI Codex CLI: ``codex --ask-for-approval never [--config model_reasoning_effort=E] exec --ephemeral --json
    [--model M] --sandbox danger-full-access --skip-git-repo-check --ignore-user-config --ignore-rules --color never
    [-c tools.view_image=true] PROMPT``, EvoPolicyGym 0.3's invocation.

    Source: developers.openai.com/codex/noninteractive and the ``codex`` / ``codex exec`` flag reference.
    ``--ask-for-approval never`` and ``--config key=value`` are global options (before ``exec``); ``exec`` runs one
    task without the TUI; ``--json`` prints its events as JSON Lines on stdout (the transcript, format
    ``codex-json``); ``--ephemeral`` keeps no session files; ``--ignore-user-config`` / ``--ignore-rules`` leave the
    user's ``config.toml`` and rules out; ``--sandbox danger-full-access`` turns Codex's own sandbox off (evoledger
    isolates the Agent itself, ``--agent-isolation``; Codex's sandbox would also refuse the session socket in some
    versions). ``CODEX_HOME`` is a fresh folder per Run holding a copy of the user's ``auth.json``. Stdin is
    ``/dev/null`` because ``exec`` appends piped stdin to the prompt.
    """

    executable: str = "codex"
    effort: str | None = None
    view_image: bool = False
    home: str | None = None
    name: str = "codex"
    env_allowlist: frozenset[str] = field(
        default=frozenset({"OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"}) | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$CODEX_HOME",)
    home_variable: ClassVar[str] = "CODEX_HOME"
    transcript: ClassVar[str] = "codex-json"
    auth: ClassVar[str] = (
        "set OPENAI_API_KEY or CODEX_API_KEY, or log in once with `codex login` (its auth.json is copied into the "
        "Run's own CODEX_HOME)"
    )

    def __post_init__(self) -> None:
        _check_options(self.name, self.executable, self.effort, self.home)

    def command(self, task: AgentTask) -> AgentCommand:
        home = isolated_home(self.home_variable, self.name, task.workspace, self.home)
        home = replace(home, seed_from=("$CODEX_HOME", "~/.codex"), seed_files=("auth.json",))
        argv = (
            self.executable,
            "--ask-for-approval",
            "never",
            *(("--config", f"model_reasoning_effort={self.effort}") if self.effort is not None else ()),
            "exec",
            "--ephemeral",
            "--json",
            *_model_args("--model", task),
            "--sandbox",
            "danger-full-access",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "--ignore-rules",
            "--color",
            "never",
            *(("-c", "tools.view_image=true") if self.view_image else ()),
            *task.extra_args,
            task.task_text,
        )
        env = {self.home_variable: str(home.path)}
        return AgentCommand(argv=argv, env=env, home=home, transcript=self.transcript)


@dataclass(frozen=True, slots=True)
class ClaudeCodeAgent:
    """Anthropic Claude Code: ``claude --print --output-format stream-json --verbose [--model M] [--effort E]
    --permission-mode bypassPermissions --no-session-persistence --no-chrome --bare --strict-mcp-config PROMPT``,
    EvoPolicyGym 0.3's invocation.

    Source: code.claude.com/docs/en/cli-reference. ``--print`` answers one prompt and exits; ``--output-format
    stream-json`` (which needs ``--verbose`` with ``--print``) prints every message as one JSON line (the transcript,
    format ``claude-stream-json``); ``--permission-mode bypassPermissions`` runs tools without asking (Claude Code
    refuses it as root outside a sandbox); ``--no-session-persistence`` saves no session; ``--bare`` skips hooks,
    plugins, memory and ``CLAUDE.md`` discovery and reads no OAuth login (authentication is ``ANTHROPIC_API_KEY``);
    ``--strict-mcp-config`` with no ``--mcp-config`` loads no MCP server. ``CLAUDE_CONFIG_DIR`` is a fresh folder per
    Run.
    """

    executable: str = "claude"
    effort: str | None = None
    home: str | None = None
    name: str = "claude-code"
    env_allowlist: frozenset[str] = field(
        default=frozenset(
            {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN"}
        )
        | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$CLAUDE_CONFIG_DIR",)
    home_variable: ClassVar[str] = "CLAUDE_CONFIG_DIR"
    transcript: ClassVar[str] = "claude-stream-json"
    auth: ClassVar[str] = (
        "set ANTHROPIC_API_KEY (with --bare, Claude Code reads no OAuth login, keychain or CLAUDE_CODE_OAUTH_TOKEN)"
    )

    def __post_init__(self) -> None:
        _check_options(self.name, self.executable, self.effort, self.home)

    def command(self, task: AgentTask) -> AgentCommand:
        home = isolated_home(self.home_variable, self.name, task.workspace, self.home)
        argv = (
            self.executable,
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            *_model_args("--model", task),
            *_effort_args("--effort", self.effort),
            "--permission-mode",
            "bypassPermissions",
            "--no-session-persistence",
            "--no-chrome",
            "--bare",
            "--strict-mcp-config",
            *task.extra_args,
            task.task_text,
        )
        env = {self.home_variable: str(home.path)}
        return AgentCommand(argv=argv, env=env, home=home, transcript=self.transcript)


@dataclass(frozen=True, slots=True)
class KimiCodeAgent:
    """Moonshot AI's Kimi Code CLI: ``kimi [--model M] --output-format stream-json --prompt PROMPT``, EvoPolicyGym
    0.3's invocation.

    Source: moonshotai.github.io/kimi-code/en/guides/print.html ("Using in Scripts and CI") and
    .../configuration/env-vars.html. ``-p``/``--prompt`` runs one prompt without the terminal UI and exits;
    ``--output-format stream-json`` prints each message as one JSON line in the chat format (``role``, ``content``,
    ``tool_calls``; the transcript, format ``kimi-stream-json``). ``KIMI_CODE_HOME`` is a fresh folder per Run with a
    copy of the user's ``config.toml`` and ``credentials`` (Kimi reads API keys from its config file, not from the
    environment).
    """

    executable: str = "kimi"
    home: str | None = None
    name: str = "kimi-code"
    env_allowlist: frozenset[str] = field(
        default=frozenset({"KIMI_API_KEY", "KIMI_BASE_URL", "KIMI_MODEL_NAME", "MOONSHOT_API_KEY"}) | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$KIMI_CODE_HOME",)
    home_variable: ClassVar[str] = "KIMI_CODE_HOME"
    transcript: ClassVar[str] = "kimi-stream-json"
    auth: ClassVar[str] = (
        "log in once with `kimi login` or add a provider to ~/.kimi-code/config.toml (config.toml and credentials/ "
        "are copied into the Run's own KIMI_CODE_HOME)"
    )

    def __post_init__(self) -> None:
        _check_options(self.name, self.executable, None, self.home)

    def command(self, task: AgentTask) -> AgentCommand:
        home = isolated_home(self.home_variable, self.name, task.workspace, self.home)
        home = replace(home, seed_from=("$KIMI_CODE_HOME", "~/.kimi-code"), seed_files=("config.toml", "credentials"))
        argv = (
            self.executable,
            *_model_args("--model", task),
            "--output-format",
            "stream-json",
            *task.extra_args,
            "--prompt",
            task.task_text,
        )
        env = {self.home_variable: str(home.path)}
        return AgentCommand(argv=argv, env=env, home=home, transcript=self.transcript)


@dataclass(frozen=True, slots=True)
class QoderAgent:
    """Qoder CLI: ``qodercli --print --output-format stream-json [--model M] [--reasoning-effort E]
    --permission-mode bypass_permissions PROMPT``, EvoPolicyGym 0.3's invocation.

    Source: docs.qoder.com/en/cli/permissions (``--permission-mode bypass_permissions``, alias ``yolo``) and Qoder's
    print-mode flags (``-p``/``--print``, ``--output-format text|json|stream-json``, ``--model``).
    ``--reasoning-effort`` is taken from EvoPolicyGym's invocation; Qoder's public pages do not list it.
    ``QODER_CONFIG_DIR`` is a fresh folder per Run; authentication is ``QODER_PERSONAL_ACCESS_TOKEN``.
    """

    executable: str = "qodercli"
    effort: str | None = None
    home: str | None = None
    name: str = "qoder"
    env_allowlist: frozenset[str] = field(default=frozenset({"QODER_PERSONAL_ACCESS_TOKEN"}) | NETWORK_ENV_VARS)
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$QODER_CONFIG_DIR",)
    home_variable: ClassVar[str] = "QODER_CONFIG_DIR"
    transcript: ClassVar[str] = "qoder-stream-json"
    auth: ClassVar[str] = "set QODER_PERSONAL_ACCESS_TOKEN (a personal access token from your Qoder account)"

    def __post_init__(self) -> None:
        _check_options(self.name, self.executable, self.effort, self.home)

    def command(self, task: AgentTask) -> AgentCommand:
        home = isolated_home(self.home_variable, self.name, task.workspace, self.home)
        argv = (
            self.executable,
            "--print",
            "--output-format",
            "stream-json",
            *_model_args("--model", task),
            *_effort_args("--reasoning-effort", self.effort),
            "--permission-mode",
            "bypass_permissions",
            *task.extra_args,
            task.task_text,
        )
        env = {self.home_variable: str(home.path)}
        return AgentCommand(argv=argv, env=env, home=home, transcript=self.transcript)


@dataclass(frozen=True, slots=True)
class CommandAgent:
    """Any program: ``command:<shell-words>``. The task text arrives on stdin and in the file ``$EVOLEDGER_TASK_FILE``.

    ``argv`` is used as given (no shell). ``env_allowlist`` names the parent variables the program may inherit;
    by default none beyond the supervisor's minimal set. ``task.model`` is ignored (pass flags in argv instead).
    """

    argv: tuple[str, ...]
    env_allowlist: frozenset[str] = frozenset()
    name: str = "command"
    needs_network: bool = False
    state_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.argv, str):
            raise ConfigError(f"CommandAgent argv must be a sequence of words, got the string {self.argv!r}")
        object.__setattr__(self, "argv", tuple(self.argv))
        if not self.argv or not self.argv[0]:
            raise ConfigError("the command adapter needs a program to run: use 'command:<program> [args...]'")
        object.__setattr__(self, "env_allowlist", frozenset(self.env_allowlist))

    @classmethod
    def from_spec(cls, spec: str, env_allowlist: Iterable[str] = ()) -> CommandAgent:
        """Parse ``command:<shell-words>`` (POSIX shell quoting)."""
        if not spec.startswith(COMMAND_PREFIX):
            raise ConfigError(f"a command agent spec must start with {COMMAND_PREFIX!r}, got {spec!r}")
        words = spec[len(COMMAND_PREFIX) :]
        try:
            argv = tuple(shlex.split(words))
        except ValueError as exc:
            raise ConfigError(
                f"cannot split the agent command {words!r} into words: {exc}; check its quoting"
            ) from None
        if not argv:
            raise ConfigError(f"agent spec {spec!r} names no program; write e.g. 'command:python my_agent.py'")
        return cls(argv=argv, env_allowlist=frozenset(env_allowlist))

    def command(self, task: AgentTask) -> AgentCommand:
        if task.task_file is None:
            raise ConfigError(
                "the command adapter passes the task through a file, but task.task_file is None; "
                "start the Agent through AgentSupervisor (which writes it) or set AgentTask.task_file"
            )
        argv = (*self.argv, *task.extra_args)
        return AgentCommand(
            argv=argv,
            env={TASK_FILE_ENV: str(task.task_file)},
            stdin=task.task_text.encode("utf-8"),
        )


@dataclass(frozen=True, slots=True)
class BuiltinAgent:
    """An offline agent shipped with evoledger, run as ``python -u -m <module>`` like any other Agent process.

    It needs no network and no credentials; ``seed`` reaches it as ``$EVOLEDGER_AGENT_SEED``. It inherits
    ``PYTHONPATH`` so that it (and the ``evoledger-session`` it runs) imports the same evoledger as the Host.
    """

    name: str
    module: str
    seed: int = 0
    python: str = field(default=sys.executable)
    env_allowlist: frozenset[str] = frozenset({"PYTHONPATH"})
    needs_network: bool = False
    state_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"a built-in agent seed must be a non-negative integer, got {self.seed!r}")

    def command(self, task: AgentTask) -> AgentCommand:
        argv = (self.python, "-u", "-m", self.module, *task.extra_args)
        return AgentCommand(argv=argv, env={AGENT_SEED_ENV: str(self.seed)})
