"""The reaper of a private local Ray instance: ends what is left of it, and removes its folder, when the process that
started it ends, however it ends.

``ray.init`` starts a local instance whose GCS and raylet end with the process that started it (its driver). Killed
outright (``SIGKILL``), the driver cannot stop the rest: Ray's agents (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``) outlive it by a minute or more (63 s measured here), and the instance's folder stays in
``/tmp``. :func:`start_reaper` starts a small process in its own session (no Ctrl-C reaches it) reading a pipe from
the driver: at the driver's end, orderly or not, the pipe closes and the reaper stops every process but the driver
that holds a file open in the instance's folder (Ray's processes of that instance, and the drivers connected to it,
alone keep their logs there): ``SIGTERM``, then ``SIGKILL`` to those left after a few seconds; then it removes the
folder. It runs as a plain script (the standard library only), not as a module of the package: it starts in
milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

__all__ = ["FOLDER_PREFIX", "reap", "start_reaper", "stop_reaper"]

FOLDER_PREFIX: Final = "evoledger-ray-"
"""The reaper acts on a folder of ``/tmp`` named so (where the private instances keep their files), on no other."""
_ROUNDS: Final = 20
_ROUND_SECONDS: Final = 0.25


def start_reaper(folder: str, term_seconds: float = 5.0) -> subprocess.Popen[bytes]:
    """Start the reaper of the Ray instance whose files are in ``folder``; it acts when this process ends or at
    :func:`stop_reaper`, giving the processes left ``term_seconds`` to end on ``SIGTERM`` (a Run connected to the
    instance stops as on Ctrl-C)."""
    return subprocess.Popen(
        [sys.executable, "-I", "-S", __file__, folder, repr(float(term_seconds))],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_reaper(reaper: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """After ``ray.shutdown()``: let the reaper end any straggler and remove the folder; wait for it."""
    with contextlib.suppress(OSError):
        if reaper.stdin is not None:
            reaper.stdin.close()
    try:
        reaper.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        reaper.kill()
        reaper.wait()


def _holders(folder: str, spared: set[int]) -> set[int]:
    """Every process but ``spared`` with a file open in ``folder``."""
    inside = folder.rstrip("/") + "/"
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in spared:
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{entry}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{entry}/fd/{fd}").startswith(inside):
                        found.add(int(entry))
                        break
    return found


def _signal(pids: set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def reap(folder: str, driver: int, term_seconds: float) -> None:
    """Stop every process but ``driver`` (and this one) holding a file in ``folder``, then remove the folder."""
    path = Path(folder)
    if not path.name.startswith(FOLDER_PREFIX) or path.parent != Path("/tmp"):
        return  # not a private Ray instance's folder: leave it alone
    spared = {driver, os.getpid()}
    _signal(_holders(folder, spared), signal.SIGTERM)
    deadline = time.monotonic() + term_seconds
    while _holders(folder, spared) and time.monotonic() < deadline:
        time.sleep(_ROUND_SECONDS)
    for _ in range(_ROUNDS):  # a few rounds: one may have started another
        holders = _holders(folder, spared)
        if not holders:
            break
        _signal(holders, signal.SIGKILL)
        time.sleep(_ROUND_SECONDS)
    shutil.rmtree(folder, ignore_errors=True)


def _main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    driver = os.getppid()  # never stopped: at an orderly end it is still closing down
    while sys.stdin.buffer.read(65536):  # until the driver closes the pipe or ends
        pass
    reap(argv[0], driver, float(argv[1]))


if __name__ == "__main__":
    _main(sys.argv[1:])
