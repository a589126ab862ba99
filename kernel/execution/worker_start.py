"""The worker process's entry point: ``python -m evoledger.kernel.execution.worker_start --fd N [--cpu C] ...``.

It imports almost nothing before it starts work that can run alongside its own imports: with ``--bwrap`` it starts
the first sandboxed zygote (a fresh interpreter that imports numpy and gymnasium) *before* importing
:mod:`~.worker` (which imports the same, then resolves the Benchmark), so the two start-ups overlap instead of
following each other. The sandbox is started before the worker pins itself to its CPU, so that its start-up is not
confined to that CPU (its Policy children pin themselves). Then :func:`~.worker.serve` runs the worker.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
from collections.abc import Sequence
from pathlib import Path

from evoledger.kernel.execution.isolation import start_sandbox

__all__ = ["main", "parse_arguments"]


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The worker's command line."""
    parser = argparse.ArgumentParser(prog="evoledger-worker", description="an evoledger execution worker")
    parser.add_argument("--fd", type=int, required=True, help="the socket shared with the coordinator")
    parser.add_argument("--cpu", type=int, default=None, help="pin the worker and its Policy children to this CPU")
    parser.add_argument("--spare-cpus", default="", help="CPUs no worker uses, where the zygote may fork ahead")
    parser.add_argument("--bwrap", default=None, help="run Policies in bubblewrap sandboxes started with this binary")
    parser.add_argument("--programs", type=Path, default=None, help="with --bwrap: an empty folder for Program copies")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Start the first sandbox (with ``--bwrap``), then import and run the worker."""
    args = parse_arguments(argv)
    first = None
    if args.bwrap is not None:
        args.programs = args.programs or Path(tempfile.mkdtemp(prefix="evoledger-programs-"))
        first = start_sandbox(args.bwrap, args.programs, args.cpu)
    # Imported only now, while the sandbox starts: numpy, gymnasium, the Benchmarks and the Policy runtime. They live
    # as long as the worker, so the cyclic collector has nothing to find among them: paused meanwhile.
    gc.disable()
    from evoledger.kernel.execution.worker import serve
    from evoledger.kernel.execution.zygote import Zygote

    gc.enable()

    serve(args, None if first is None else Zygote(first[0].pid, first[1], first[0]))


if __name__ == "__main__":
    main()
