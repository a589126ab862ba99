"""Agents by name.

A name is one of the first-party adapters (``codex``, ``claude-code``, ``kimi-code``, ``qoder``), a built-in
offline agent (``baseline``, ``hill-climb``), ``command:<shell-words>`` for any program, or an import string
``"pkg.module:factory"``. Installed packages may add names through the ``evoledger.agents`` entry-point group.
Every registered entry is an import string, resolved only when used.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.agents.adapters import COMMAND_PREFIX, BuiltinAgent, CommandAgent
from evoledger.kernel.agents.base import AgentTask, CodingAgent
from evoledger.kernel.registry import load_object
from evoledger.ledger.errors import ConfigError, UnknownNameError

__all__ = [
    "AGENTS",
    "ENTRY_POINT_GROUP",
    "agent_names",
    "agent_option_names",
    "baseline_agent",
    "check_agent_program",
    "hill_climb_agent",
    "make_agent",
]

ENTRY_POINT_GROUP: Final = "evoledger.agents"

AGENTS: Final[Mapping[str, str]] = {
    "baseline": "evoledger.kernel.agents.registry:baseline_agent",
    "claude-code": "evoledger.kernel.agents.adapters:ClaudeCodeAgent",
    "codex": "evoledger.kernel.agents.adapters:CodexAgent",
    "hill-climb": "evoledger.kernel.agents.registry:hill_climb_agent",
    "kimi-code": "evoledger.kernel.agents.adapters:KimiCodeAgent",
    "qoder": "evoledger.kernel.agents.adapters:QoderAgent",
}
"""The packaged agents: name -> import string of a factory ``factory(**options) -> CodingAgent``."""


def baseline_agent(seed: int = 0) -> BuiltinAgent:
    """The built-in agent that submits the Program unchanged and finishes with it."""
    return BuiltinAgent(name="baseline", module="evoledger.kernel.agents.builtin.baseline", seed=seed)


def hill_climb_agent(seed: int = 0) -> BuiltinAgent:
    """The built-in agent that hill-climbs ``program/params.json``."""
    return BuiltinAgent(name="hill-climb", module="evoledger.kernel.agents.builtin.hill_climb", seed=seed)


def _registered() -> dict[str, str]:
    found = dict(AGENTS)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def agent_names() -> list[str]:
    """Every registered agent name, sorted (``command:<...>`` and import strings are accepted too)."""
    return sorted(_registered())


def make_agent(name: str, options: Mapping[str, Any] | None = None) -> CodingAgent:
    """Build the agent adapter ``name`` with ``options`` (keyword arguments of its factory).

    >>> make_agent("codex").name
    'codex'
    """
    opts = dict(options or {})
    if name.startswith(COMMAND_PREFIX):
        unknown = set(opts) - {"env_allowlist"}
        if unknown:
            raise ConfigError(f"the command adapter accepts only the option 'env_allowlist', got {sorted(unknown)}")
        return CommandAgent.from_spec(name, env_allowlist=opts.get("env_allowlist", ()))
    if ":" in name:
        target = name
    else:
        registered = _registered()
        if name not in registered:
            raise UnknownNameError("agent", name, [*registered, f"{COMMAND_PREFIX}<program> [args...]"])
        target = registered[name]
    factory = load_object(target)
    accepted = agent_option_names(factory)
    refused = sorted(set(opts) - set(accepted)) if accepted is not None else []
    if refused:
        offered = ", ".join(accepted or ()) or "none"
        raise ConfigError(
            f"agent {name!r} takes no option {refused[0]!r} (--agent-option {refused[0]}=...); its options: {offered}"
        )
    try:
        agent = factory(**opts)
    except TypeError as exc:
        raise ConfigError(f"invalid options {opts!r} for agent {name!r}: {exc}") from exc
    if not isinstance(agent, CodingAgent):
        raise ConfigError(f"agent factory {target!r} returned {type(agent).__name__}, which is not a CodingAgent")
    return agent


def agent_option_names(factory: Any) -> tuple[str, ...] | None:
    """The options a first-party adapter class takes (its init fields other than ``name`` and its environment and
    sandbox declarations); ``None`` for any other factory (its keyword arguments are not known in advance)."""
    if not (isinstance(factory, type) and dataclasses.is_dataclass(factory)):
        return None
    internal = {"name", "env_allowlist", "needs_network", "state_paths", "argv", "module", "python"}
    return tuple(f.name for f in dataclasses.fields(factory) if f.init and f.name not in internal)


def check_agent_program(agent: CodingAgent, *, model: str | None = None, extra_args: tuple[str, ...] = ()) -> None:
    """Refuse (:class:`ConfigError`) an Agent whose program is not installed, before a Run is created for it.

    The program is the first word of the command the adapter would launch: a bare name must be found on ``PATH``,
    an absolute path must be an executable file. A relative path is left to the launch (it is relative to the
    Agent's workspace, which does not exist yet).
    """
    here = Path.cwd()  # nothing is written there: the command is only built, never run
    probe = AgentTask(
        task_text="(probe)", workspace=here, model=model, extra_args=extra_args, task_file=here / "task.md"
    )
    program = agent.command(probe).argv[0]
    if "/" in program:
        missing = os.path.isabs(program) and not (os.path.isfile(program) and os.access(program, os.X_OK))
    else:
        missing = shutil.which(program) is None
    if missing:
        where = "is not an executable file" if "/" in program else "is not installed (not found on PATH)"
        raise ConfigError(
            f"cannot start Agent {agent.name!r}: its program {program!r} {where}; install it, or name the program "
            "yourself with --agent 'command:/path/to/program ARGS...'. Nothing was created."
        )
