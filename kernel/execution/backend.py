"""Where Episodes run: the ``local`` backend (:class:`LocalExecutor`) or ``ray`` (:class:`RayExecutor`, a Ray cluster).

:class:`ExecutionBackend` is the choice (``--backend``, ``--ray-address``); :func:`open_executor` builds the executor
it names. The choice is not a fact of the Run and is never recorded: both backends give byte-identical trajectories,
so a Run may be resumed or replayed on either. Ray is imported only when the ``ray`` backend is opened.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

from evoledger.kernel.execution.abi import DEFAULT_POLICY_ABI
from evoledger.ledger.errors import ConfigError, MissingExtraError

if TYPE_CHECKING:
    from evoledger.kernel.execution.executor import Executor
    from evoledger.kernel.registry import BenchmarkRef

__all__ = ["BACKENDS", "Backend", "ExecutionBackend", "open_executor", "require_ray", "shared_backend"]

Backend = Literal["local", "ray"]
BACKENDS: Final[tuple[str, ...]] = get_args(Backend)


def require_ray() -> None:
    """Raise the one-line install hint unless Ray can be imported (without importing it: that takes seconds)."""
    if importlib.util.find_spec("ray") is None:
        raise MissingExtraError("--backend ray", "ray", "ray")


@dataclass(frozen=True, slots=True)
class ExecutionBackend:
    """``name``: ``local`` or ``ray``. ``ray_address`` (``ray`` only): ``auto`` (the cluster this machine belongs
    to), ``ray://HOST:PORT`` (Ray Client) or ``HOST:PORT``; None starts a private local Ray instance and stops it
    when the executor closes."""

    name: Backend = "local"
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.name!r}")
        address = self.ray_address
        if address is None:
            return
        if self.name != "ray":
            raise ConfigError(f"--ray-address {address!r} needs --backend ray (the backend is {self.name!r})")
        if not isinstance(address, str) or not address.strip() or any(c.isspace() for c in address):
            raise ConfigError(f"--ray-address must be auto, ray://HOST:PORT or HOST:PORT, got {address!r}")


def open_executor(
    backend: ExecutionBackend | None,
    benchmark: BenchmarkRef,
    *,
    workers: int = 1,
    isolation: str = "local",
    allow_import: bool = True,
    wait_until_ready: bool = True,
    policy_abi: str = DEFAULT_POLICY_ABI,
) -> Executor:
    """The executor of ``backend`` (None: local) with these settings; use it as a context manager."""
    if backend is None or backend.name == "local":
        from evoledger.kernel.execution.executor import LocalExecutor

        return LocalExecutor(
            benchmark,
            workers=workers,
            isolation=isolation,
            allow_import=allow_import,
            wait_until_ready=wait_until_ready,
            policy_abi=policy_abi,
        )
    require_ray()
    from evoledger.kernel.execution.ray_executor import RayExecutor

    return RayExecutor(
        benchmark,
        workers=workers,
        isolation=isolation,
        allow_import=allow_import,
        wait_until_ready=wait_until_ready,
        policy_abi=policy_abi,
        address=backend.ray_address,
    )


@contextlib.contextmanager
def shared_backend(backend: ExecutionBackend | None, *, cpus: int) -> Iterator[ExecutionBackend | None]:
    """The backend other processes (a sweep's Runs) should be given: for ``ray`` without an address, one private local
    Ray instance started here for all of them (``cpus`` CPUs; stopped and its files removed on exit) and its address,
    so that they share it instead of each starting its own; otherwise ``backend`` itself."""
    if backend is None or backend.name != "ray" or backend.ray_address is not None:
        yield backend
        return
    require_ray()
    from evoledger.kernel.execution.ray_connection import start_local, stop_local

    ray = importlib.import_module("ray")
    local = start_local(ray, cpus)
    try:
        yield ExecutionBackend("ray", local.address)
    finally:
        stop_local(ray, local)
