"""The sandboxed zygote's entry point: ``python -m evoledger.kernel.execution.sandbox_main --fd N [--cpu C]``.

Run by bubblewrap (see :mod:`~.isolation`) as pid 1 of the sandbox's pid namespace, with no capabilities. It makes
itself non-dumpable (no process of the sandbox may trace it, read its memory or open its descriptors), ignores
SIGINT, pre-imports what every Policy child should start with, and serves the worker (:mod:`~.zygote`).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Final

import gymnasium  # noqa: F401  (pre-imported so every Policy child starts with it loaded)
import numpy  # noqa: F401
from evoledger.kernel.execution.zygote import serve_sandboxed

__all__ = ["main"]

_PR_SET_DUMPABLE: Final = 4


def _not_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the worker over descriptor ``--fd`` until it goes away; exits 0, or 70 on an unexpected failure."""
    parser = argparse.ArgumentParser(prog="evoledger-zygote", description="an evoledger sandboxed zygote")
    parser.add_argument("--fd", type=int, required=True, help="the socket shared with the worker")
    parser.add_argument("--cpu", type=int, default=None, help="pin Policy children to this CPU")
    args = parser.parse_args(argv)
    code = 0
    try:
        _not_dumpable()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        serve_sandboxed(socket.socket(fileno=args.fd), args.cpu)
    except (BrokenPipeError, ConnectionResetError):
        pass
    except BaseException as exc:
        code = 70
        with contextlib.suppress(Exception):
            print(f"evoledger sandboxed zygote failed: {exc!r}", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
