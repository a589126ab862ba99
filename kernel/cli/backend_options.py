"""``--backend local|ray`` and ``--ray-address``: where a command runs its Episodes (``kernel.execution.backend``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click
from evoledger.kernel.execution.backend import BACKENDS, ExecutionBackend, require_ray

__all__ = ["backend_options", "chosen_backend"]

_F = TypeVar("_F", bound=Callable[..., object])


def backend_options(function: _F) -> _F:
    """Add ``--backend`` and ``--ray-address`` to a command (turn them into a backend with :func:`chosen_backend`)."""
    backend = click.option(
        "--backend",
        type=click.Choice(list(BACKENDS)),
        default="local",
        show_default=True,
        help="Where Episodes run: local worker processes, or Ray actors (pip install 'evoledger[ray]'). "
        "Trajectories are identical; only the Host writes the record.",
    )
    address = click.option(
        "--ray-address",
        metavar="auto|ray://HOST:PORT",
        default=None,
        help="With --backend ray: the Ray cluster to use (auto: the one this machine belongs to). "
        "Default: a private local Ray instance, started and stopped by this command.",
    )
    return backend(address(function))


def chosen_backend(backend: str, ray_address: str | None) -> ExecutionBackend:
    """The backend the options name; a ConfigError (with the install hint when Ray is missing) if it cannot work."""
    chosen = ExecutionBackend(backend, ray_address)  # type: ignore[arg-type]  # click.Choice checked the name
    if chosen.name == "ray":
        require_ray()
    return chosen
