"""This process's connection to Ray, shared by its :class:`~.ray_executor.RayExecutor` objects, and the private local
Ray instance a command starts when it is given no ``--ray-address``.

* :func:`start_local` starts a private local instance (no dashboard, no logs on stdout, its files in a fresh
  ``/tmp/evoledger-ray-*`` folder) with the reaper (:mod:`~.ray_reaper`) that ends what is left of it and removes
  that folder when this process ends, even killed; :func:`stop_local` stops it. A sweep starts one for all its Runs.
* :func:`connect` / :func:`disconnect`: executors of one process share the connection the first one made (the last
  to close stops it, and the private instance it started); Ray initialised by the caller (tests, a sweep) is used as
  it is and left running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from evoledger.kernel.execution.ray_reaper import FOLDER_PREFIX, start_reaper, stop_reaper
from evoledger.ledger.errors import InfraError

__all__ = ["LocalRay", "connect", "disconnect", "start_local", "stop_local"]

_QUIET: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
_lock = threading.Lock()
_users = 0
"""Open RayExecutors of this process that share the Ray connection one of them made (the last one closes it)."""
_local: LocalRay | None = None
"""The private local instance that connection started, if it did."""


@dataclass(frozen=True, slots=True)
class LocalRay:
    """A private local Ray instance this process started: its address, its folder and its reaper."""

    address: str
    folder: str
    reaper: subprocess.Popen[bytes]


def start_local(ray: Any, cpus: int) -> LocalRay:
    """Start a private local Ray instance of ``cpus`` CPUs and connect this process to it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir="/tmp")  # socket paths must stay short
    reaper = start_reaper(folder)  # ends the instance's processes and files even if this process is killed
    try:
        context = ray.init(num_cpus=cpus, include_dashboard=False, _temp_dir=folder, **_QUIET)
    except BaseException:
        stop_local(ray, LocalRay("", folder, reaper))
        raise
    return LocalRay(str(context.address_info["gcs_address"]), folder, reaper)


def stop_local(ray: Any, local: LocalRay) -> None:
    """Disconnect and stop the instance; its reaper ends any straggler; remove its folder."""
    with contextlib.suppress(Exception):
        ray.shutdown()
    stop_reaper(local.reaper)
    shutil.rmtree(local.folder, ignore_errors=True)


def connect(ray: Any, address: str | None, cpus: int) -> bool:
    """Connect to ``address`` (None: a private local instance of ``cpus`` CPUs), or share the connection another
    executor of this process made; whether the caller must :func:`disconnect` (False: Ray was initialised by the
    caller's caller, theirs to stop)."""
    global _users, _local
    with _lock:
        if ray.is_initialized():
            if _users == 0:
                return False
            _users += 1
            return True
        if address is None:
            _local = start_local(ray, cpus)
        else:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            try:
                ray.init(address=address, **_QUIET)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise InfraError(f"cannot connect to the Ray cluster at --ray-address {address}: {exc}") from None
        _users = 1
        return True


def disconnect(ray: Any) -> None:
    """One user fewer; the last one disconnects (and stops the private instance the connection started)."""
    global _users, _local
    with _lock:
        _users -= 1
        if _users > 0:
            return
        if _local is not None:
            stop_local(ray, _local)
            _local = None
        else:
            with contextlib.suppress(Exception):
                ray.shutdown()
