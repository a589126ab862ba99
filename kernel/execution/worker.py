"""The pre-warmed worker process: the Environment side of Episodes.

Started once per executor slot with a fresh interpreter (``python -m evoledger.kernel.execution.worker_start
--fd N [--cpu C] [--spare-cpus C,...]``, which runs :func:`serve`), never by forking the caller. Start-up, in this
order:

1. pin itself to CPU ``C`` (its Policy children inherit the pin, so every per-step exchange stays on one CPU);
2. with numpy, gymnasium and the Policy runtime imported, fork the zygote (:mod:`~.zygote`) — before it
   knows anything about the Benchmark or any Episode;
3. read the BenchmarkRef from the coordinator (and whether an import string may be imported), resolve it,
   send the zygote the public template (spaces, metadata, environment parameters), and have the first Policy
   child forked;
4. say hello, then serve tasks one at a time until told to quit or the coordinator goes away.

With ``--bwrap PATH`` (``--isolation bwrap``) step 2 is skipped: the zygote runs inside a bubblewrap sandbox instead
(started by :mod:`~.worker_start` before this module's imports, and sent the template once the Benchmark is
resolved; later ones by :meth:`Zygote.launch`), which sees only a worker-private folder of
per-Episode Program copies (``--programs``, made and removed by the coordinator, so a killed worker leaves
nothing behind); a sandbox that a Policy broke is replaced between Episodes.

Only the coordinator writes any ledger; a worker only returns outcomes.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import gymnasium  # noqa: F401  (pre-imported so every Policy child starts with it loaded)
import numpy  # noqa: F401
import orjson
from evoledger.kernel.execution.abi.plan import child_abi_for
from evoledger.kernel.execution.channel import ChannelClosed, ChannelError, FrameChannel
from evoledger.kernel.execution.episode_runner import EpisodeRunner
from evoledger.kernel.execution.messages import (
    COORDINATOR_MAX_FRAME,
    TO_WORKER_BENCHMARK,
    TO_WORKER_QUIT,
    TO_WORKER_TASK,
    WORKER_ACCEPTED,
    WORKER_ERROR,
    WORKER_HELLO,
    outcome_to_frame,
    task_from_json,
)
from evoledger.kernel.execution.tasks import EpisodeTask
from evoledger.kernel.execution.worker_start import parse_arguments
from evoledger.kernel.execution.zygote import Zygote
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

__all__ = ["main", "serve"]


class _Sandboxes:
    """Launches sandboxed zygotes for one worker, all seeing the same private folder of Program copies.

    ``first`` is a sandbox started before this worker's imports (:mod:`~.worker_start`); it is used first.
    """

    def __init__(self, bwrap: str, cpu: int | None, programs: Path, first: Zygote | None = None) -> None:
        self.bwrap = bwrap
        self.cpu = cpu
        self.programs = programs
        self.current: Zygote | None = first

    def launcher(self, template: tuple[object, ...]) -> Callable[[], Zygote]:
        unused = [self.current] if self.current is not None else []

        def launch() -> Zygote:
            zygote = unused.pop() if unused else Zygote.launch(self.bwrap, self.programs, self.cpu)
            self.current = zygote
            zygote.send_template(*template)
            return zygote

        return launch

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
        shutil.rmtree(self.programs, ignore_errors=True)


def _start(channel: FrameChannel, zygote: Zygote | None, sandboxes: _Sandboxes | None) -> EpisodeRunner | None:
    """Resolve the Benchmark and prepare the first Policy child; on failure tell the coordinator why."""
    try:
        frame = channel.receive()
        if frame[:1] != TO_WORKER_BENCHMARK:
            raise ValueError(f"expected the benchmark message first, got kind {frame[:1]!r}")
        message = orjson.loads(frame[1:])
        ref = BenchmarkRef.model_validate(message["ref"])
        benchmark = resolve_benchmark(ref, allow_import=message["allow_import"] is True)
        spec = benchmark.spec
        template = (benchmark.observation_space, benchmark.action_space, spec.metadata, spec.environment_parameters)
        abi = child_abi_for(message.get("policy_abi"), ref.name, benchmark)  # --policy-abi; None: the default
        if sandboxes is not None:
            launch = sandboxes.launcher((*template, abi))
            runner = EpisodeRunner(benchmark, launch(), relaunch=launch, programs=sandboxes.programs)
        else:
            assert zygote is not None  # main passes exactly one of the two
            zygote.send_template(*template, abi)
            runner = EpisodeRunner(benchmark, zygote)
        runner.warm_up()
        # What is alive now lives as long as the worker: spare the collector from walking it again and again
        # while Episodes come and go (a full collection of it took milliseconds, at random steps). Frozen without a
        # collection first: that one walk cost 10-40 ms before the first Episode, to free some twenty objects.
        gc.freeze()
    except ChannelClosed:
        return None
    except Exception as exc:
        # The coordinator may be gone already: it started this worker before checking what the user gave, and the
        # same mistake (an unknown Benchmark, a wrong setting) is its own message to the user. Then end quietly.
        with contextlib.suppress(ChannelClosed):
            channel.send(bytes((WORKER_ERROR,)) + orjson.dumps({"error": type(exc).__name__, "message": str(exc)}))
        return None
    try:
        channel.send(bytes((WORKER_HELLO,)) + orjson.dumps({"pid": os.getpid()}))
    except ChannelClosed:
        return None
    return runner


def _parsed(frame: bytes) -> tuple[bytes, tuple[int, EpisodeTask] | None]:
    """A coordinator's message with, for a task, its id and task."""
    return frame, task_from_json(frame[1:]) if frame[:1] == TO_WORKER_TASK else None


class _Inbox:
    """The coordinator's messages, one of which may have been read ahead: the task queued behind the running one."""

    def __init__(self, channel: FrameChannel) -> None:
        self._channel = channel
        self._held: tuple[bytes, tuple[int, EpisodeTask] | None] | None = None

    def next(self) -> tuple[bytes, tuple[int, EpisodeTask] | None]:
        """The next message (waiting for it) and, for a task, its id and task (parsed once)."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        return _parsed(self._channel.receive())

    def upcoming(self) -> EpisodeTask | None:
        """The task queued behind the running one if it has arrived (read ahead, never waiting), else None."""
        if self._held is None:
            try:
                frame = self._channel.receive(0.0)
            except ChannelError:  # not (wholly) here yet; a closed or broken channel is found again by next()
                return None
            self._held = _parsed(frame)
        parsed = self._held[1]
        return None if parsed is None else parsed[1]


def _serve(channel: FrameChannel, runner: EpisodeRunner) -> None:
    inbox = _Inbox(channel)
    while True:
        try:
            frame, parsed = inbox.next()
        except ChannelClosed:
            return
        kind = frame[:1]
        if kind == TO_WORKER_QUIT:
            return
        if parsed is None:
            raise ValueError(f"unexpected message kind {kind!r} from the coordinator")
        task_id, task = parsed
        try:
            channel.send(bytes((WORKER_ACCEPTED,)))  # a death before this frame means the task never started
        except ChannelClosed:
            return
        outcome = runner.run(task, inbox.upcoming)
        try:
            channel.send(outcome_to_frame(outcome, task_id))
        except ChannelClosed:
            return
        if runner.retired:  # the coordinator replaces this worker
            return
        runner.prefork()  # the next Episode's child is forked while the coordinator handles this outcome


def main(argv: Sequence[str] | None = None) -> None:
    """Worker entry point (see the module docstring); :mod:`~.worker_start` is the faster one the executor runs."""
    serve(parse_arguments(argv))


def serve(args: argparse.Namespace, first_sandbox: Zygote | None = None) -> None:
    """Run the worker with its parsed arguments; ``first_sandbox``: a sandboxed zygote already started for it."""
    spare = {int(c) for c in args.spare_cpus.split(",") if c} & os.sched_getaffinity(0)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    sandboxes = None
    if args.bwrap is not None:
        programs = args.programs or Path(tempfile.mkdtemp(prefix="evoledger-programs-"))
        sandboxes = _Sandboxes(args.bwrap, args.cpu, programs, first_sandbox)
    # The zygote forks, and each child sets up and (killed) ends, on CPUs no worker runs on, when there are some (else
    # on the worker's). Not on the worker's as well: a socket's wake-up pulls the zygote onto the sender's CPU, so it
    # forked there while the worker waited (measured: most of a fork per Episode).
    zygote_cpus = spare if args.cpu is not None and spare else None
    zygote = None if sandboxes is not None else Zygote.fork(args.cpu, close_in_zygote=(args.fd,), cpus=zygote_cpus)
    channel = FrameChannel(socket.socket(fileno=args.fd), max_frame=COORDINATOR_MAX_FRAME)
    try:
        runner = _start(channel, zygote, sandboxes)
        if runner is not None:
            _serve(channel, runner)
    finally:
        if zygote is not None:
            zygote.close()
        if sandboxes is not None:
            sandboxes.close()
        channel.close()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)  # everything is closed: skip tearing down numpy, gymnasium and pydantic (the coordinator waits)


if __name__ == "__main__":
    main()
