"""The parent of a placed cell's process on its node, between the Ray task and the Run.

A Ray worker that exits (its raylet gone, say, when the sweep that started the private Ray instance is killed
outright) sends ``SIGKILL`` to its direct child processes: a Run started by the task itself would die without
stopping its Agent, which kept running. So the task (:func:`~.ray_placement.host_cell`) starts this shepherd, and
the shepherd starts the Run: Ray's ``SIGKILL`` ends the shepherd alone, and the Run gets ``SIGTERM`` from the kernel
(``PR_SET_PDEATHSIG``), stopping as ``evoledger run`` stops on ``SIGTERM`` (its Agent stopped, the Run resumable).
The shepherd passes ``SIGTERM`` and ``SIGINT`` on to the Run, writes the Run's process id to the file descriptor it is
given, and ends as the Run ends: by the same signal, or with the same exit code. It runs as a plain script (the
standard library only): it starts in milliseconds.

Usage: ``python -I -S run_shepherd.py FD ARGV...``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from types import FrameType
from typing import Final

__all__: list[str] = []

_PR_SET_PDEATHSIG: Final = 1
_CANNOT_START: Final = 127


def _die_with_shepherd() -> None:  # in the Run, between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def _main(argv: list[str]) -> None:
    report, command = int(argv[0]), argv[1:]
    try:
        run = subprocess.Popen(command, preexec_fn=_die_with_shepherd)
    except OSError as exc:
        print(f"cannot start {command[0] if command else '(nothing)'}: {exc}", file=sys.stderr, flush=True)
        sys.exit(_CANNOT_START)

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            run.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    with contextlib.suppress(OSError), os.fdopen(report, "w") as out:
        out.write(f"{run.pid}\n")
    code = run.wait()
    if code < 0:  # ended by a signal: so does the shepherd
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        sys.exit(128 - code)  # a signal whose default is to be ignored
    sys.exit(code)


if __name__ == "__main__":
    _main(sys.argv[1:])
