"""First-party adapters: how to run each coding-agent CLI non-interactively in the Run's workspace.

Each adapter is a pure function of an :class:`AgentTask`: it builds argv, extra environment variables and
optional stdin, and names the parent environment variables the CLI may inherit (its credentials, proxies).
The supervisor does the launching. Flags were looked up in each tool's public documentation (noted per adapter);
every CLI adapter accepts ``executable`` (a path or name for the binary) and passes ``task.extra_args`` through, so a
flag that a newer CLI version renamed can be fixed from the Run configuration without a code change.

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
from dataclasses import dataclass, field

from evoledger.kernel.agents.base import AgentCommand, AgentTask
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


@dataclass(frozen=True, slots=True)
class CodexAgent:
    """OpenAI Codex CLI, run as ``codex exec`` (non-interactive mode).

    Source: developers.openai.com/codex/noninteractive ("Non-interactive mode") and the ``codex exec`` flag
    reference: ``codex exec`` runs one task without the TUI, streams progress to stderr and prints the final
    message to stdout; it is read-only by default, ``--sandbox workspace-write`` allows edits inside the working
    directory (network stays off, local IPC such as our Unix socket stays allowed); ``--skip-git-repo-check``
    lets it run outside a Git repository (the workspace is not one); ``--cd`` sets its working root; ``--model``
    picks the model; the prompt is the trailing positional argument. Approval prompts never block in ``exec``.
    Stdin is left empty (``/dev/null``) because ``exec`` appends piped stdin to the prompt.
    """

    executable: str = "codex"
    name: str = "codex"
    env_allowlist: frozenset[str] = field(
        default=frozenset({"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"}) | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$CODEX_HOME", "~/.codex")

    def command(self, task: AgentTask) -> AgentCommand:
        argv = (
            self.executable,
            "exec",
            "--sandbox",
            "workspace-write",
            "--skip-git-repo-check",
            "--cd",
            str(task.workspace),
            *_model_args("--model", task),
            *task.extra_args,
            task.task_text,
        )
        return AgentCommand(argv=argv)


@dataclass(frozen=True, slots=True)
class ClaudeCodeAgent:
    """Anthropic Claude Code, run as ``claude -p`` (print / headless mode).

    Source: docs.anthropic.com/claude/docs/claude-code/cli-usage ("CLI reference") and
    code.claude.com/docs/en/permission-modes: ``-p``/``--print`` answers one prompt and exits;
    ``--permission-mode acceptEdits`` auto-approves file edits; shell commands still need an allow rule, so
    ``--allowedTools`` pre-approves ``Bash`` (to run ``evoledger-session`` and analysis scripts) and the file
    tools. ``bypassPermissions`` / ``--dangerously-skip-permissions`` is deliberately not used: it refuses to run
    as root and also disables the remaining safety checks. ``--allowedTools`` takes several values, so ``-p``
    (a plain switch) is placed right before the prompt to end that list.
    """

    executable: str = "claude"
    name: str = "claude-code"
    allowed_tools: tuple[str, ...] = ("Bash", "Read", "Edit", "Write", "Glob", "Grep")
    env_allowlist: frozenset[str] = field(
        default=frozenset(
            {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN"}
            | {"CLAUDE_CONFIG_DIR"}
        )
        | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$CLAUDE_CONFIG_DIR", "~/.claude", "~/.claude.json")

    def command(self, task: AgentTask) -> AgentCommand:
        argv = (
            self.executable,
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            ",".join(self.allowed_tools),
            "--output-format",
            "text",
            *_model_args("--model", task),
            *task.extra_args,
            "-p",
            task.task_text,
        )
        return AgentCommand(argv=argv)


@dataclass(frozen=True, slots=True)
class KimiCodeAgent:
    """Moonshot AI's Kimi Code CLI (``kimi``), run in print mode.

    Source: moonshotai.github.io/kimi-cli/en/customization/print-mode ("Print Mode") and
    moonshotai.github.io/kimi-cli/en/reference/kimi-command: ``--print`` runs non-interactively, exits when done
    and implicitly auto-approves tool calls; instructions may come from stdin (``echo ... | kimi --print``);
    ``-m``/``--model`` picks the model. The prompt is sent on stdin because the option carrying it changed
    between releases (``-c``/``--command`` in early versions, ``-p``/``--prompt`` later), while stdin works in
    all documented versions.
    """

    executable: str = "kimi"
    name: str = "kimi-code"
    env_allowlist: frozenset[str] = field(
        default=frozenset({"KIMI_API_KEY", "KIMI_BASE_URL", "KIMI_MODEL_NAME", "MOONSHOT_API_KEY"}) | NETWORK_ENV_VARS
    )
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$KIMI_SHARE_DIR", "~/.kimi", "$KIMI_CODE_HOME", "~/.kimi-code")

    def command(self, task: AgentTask) -> AgentCommand:
        argv = (self.executable, "--print", *_model_args("--model", task), *task.extra_args)
        return AgentCommand(argv=argv, stdin=task.task_text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class QoderAgent:
    """Qoder CLI (``qodercli``), run in print mode.

    Source: docs.qoder.com/cli/cli-reference and docs.qoder.com/en/cli/permissions: ``-p``/``--print`` runs
    non-interactively and exits after one response; ``--model`` picks the model. In print mode an action that
    would ask for permission cannot be answered, so shell commands need ``--yolo`` (documented as the alias of
    the ``bypass_permissions`` permission mode). ``-p`` is placed right before the prompt so the prompt is read
    correctly whether ``-p`` is a plain switch (current docs) or takes the prompt as its value.
    """

    executable: str = "qodercli"
    name: str = "qoder"
    env_allowlist: frozenset[str] = field(default=frozenset({"QODER_PERSONAL_ACCESS_TOKEN"}) | NETWORK_ENV_VARS)
    needs_network: bool = True
    state_paths: tuple[str, ...] = ("$QODER_CONFIG_DIR", "~/.qoder")

    def command(self, task: AgentTask) -> AgentCommand:
        argv = (
            self.executable,
            "--yolo",
            *_model_args("--model", task),
            *task.extra_args,
            "-p",
            task.task_text,
        )
        return AgentCommand(argv=argv)


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
