"""The ``--agent-isolation`` option of ``resume`` (``run`` derives its own from :class:`RunConfig`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import click
from evoledger.kernel.agents.sandbox import AGENT_ISOLATIONS
from evoledger.kernel.run.config import RunConfig

__all__ = ["AGENT_ISOLATION_HELP", "agent_isolation_option"]

AGENT_ISOLATION_HELP: Final = (
    f"{RunConfig.model_fields['agent_isolation'].description} resume never takes it from the record."
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
