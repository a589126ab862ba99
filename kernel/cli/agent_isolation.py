"""The ``--agent-isolation`` option of ``run`` and ``resume``: whether the Agent runs in a bubblewrap sandbox."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import click
from evoledger.kernel.agents.sandbox import AGENT_ISOLATIONS

__all__ = ["AGENT_ISOLATION_HELP", "agent_isolation_option"]

AGENT_ISOLATION_HELP: Final = (
    "How the Agent is isolated: bwrap (a bubblewrap sandbox: the workspace read-write and the session socket, the "
    "rest of the run directory, the Host's processes and your evoledger keys out of sight; no network unless the "
    "Agent is a coding-agent CLI that needs its API), local (a plain process), auto (bwrap where it is installed and "
    "works, else local). resume never takes it from the record."
)

_F = TypeVar("_F", bound=Callable[..., object])


def agent_isolation_option(function: _F) -> _F:
    """Add ``--agent-isolation [local|bwrap|auto]`` (default ``auto``) to a command."""
    option = click.option(
        "--agent-isolation",
        type=click.Choice(list(AGENT_ISOLATIONS)),
        default="auto",
        show_default=True,
        help=AGENT_ISOLATION_HELP,
    )
    return option(function)
