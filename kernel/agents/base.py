"""What an Agent is to the Host: a process described by an :class:`AgentCommand` built from an :class:`AgentTask`.

An Agent (a real coding-agent CLI or a built-in offline agent) is always a separate process started in the Run's
workspace. It touches the Environment only through the ``evoledger-session`` command. The Host never imports
an Agent's code: it asks a :class:`CodingAgent` adapter how to launch it and hands the result to the
:class:`~evoledger.kernel.agents.supervisor.AgentSupervisor`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from evoledger.kernel.agents.homes import AgentHome
from evoledger.ledger.errors import ConfigError

__all__ = ["AgentCommand", "AgentTask", "CodingAgent"]


@dataclass(frozen=True, slots=True)
class AgentTask:
    """Everything an adapter needs to build a launch command.

    ``task_text`` is the rendered task (see :func:`~evoledger.kernel.agents.task_text.render_task_text`);
    ``workspace`` the Run's workspace (the Agent's cwd); ``model`` an optional model name for the CLI;
    ``extra_args`` appended verbatim to the CLI's argv; ``timeout`` the wall-clock limit in seconds (``None``: no
    limit); ``task_file`` where the supervisor writes the task text before the launch (``None``: into its log
    directory).
    """

    task_text: str
    workspace: Path
    model: str | None = None
    extra_args: tuple[str, ...] = ()
    timeout: float | None = None
    task_file: Path | None = None

    def __post_init__(self) -> None:
        if not self.task_text.strip():
            raise ConfigError("the Agent task text is empty; render it with render_task_text(facts)")
        if self.timeout is not None and not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ConfigError(f"Agent timeout must be a positive number of seconds or None, got {self.timeout!r}")
        if self.model is not None and not self.model.strip():
            raise ConfigError("Agent model must be a non-empty name or None, got an empty string")
        if isinstance(self.extra_args, (str, bytes)):
            raise ConfigError(
                f"extra_args must be a sequence of separate arguments, got the string {self.extra_args!r}; "
                "split it with shlex.split() first"
            )
        object.__setattr__(self, "extra_args", tuple(self.extra_args))


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """How to start one Agent process: argv, extra environment variables and optional stdin bytes.

    ``env`` is added on top of the supervisor's minimal allow-listed environment; it never carries secrets
    (secrets reach the process only through the adapter's ``env_allowlist``). ``home`` is the CLI's own
    configuration folder (its variable is in ``env``), prepared before the launch and removed after it
    (``kernel.agents.homes``). ``transcript`` names the format of what the CLI prints on stdout
    (``kernel.agents.transcripts``), ``None`` for plain text.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | None = None
    home: AgentHome | None = None
    transcript: str | None = None

    def __post_init__(self) -> None:
        if not self.argv or not self.argv[0]:
            raise ConfigError(f"an Agent command needs a program to run, got argv {self.argv!r}")
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "env", dict(self.env))


@runtime_checkable
class CodingAgent(Protocol):
    """An adapter that knows how to launch one kind of Agent non-interactively."""

    @property
    def name(self) -> str:
        """The registry name, e.g. ``"codex"``."""
        ...

    @property
    def env_allowlist(self) -> frozenset[str]:
        """Names of parent environment variables the Agent may inherit (e.g. its API key variables)."""
        ...

    def command(self, task: AgentTask) -> AgentCommand:
        """The command that runs ``task`` to completion without a human in the loop."""
        ...
