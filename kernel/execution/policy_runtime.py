"""The Policy child: load the Program, build its context, serve ``act`` over the channel.

This code runs in a process forked (by the zygote, :mod:`evoledger.kernel.execution.zygote`) for
exactly one Episode. Right after the fork it detaches: a new session and process group (so a timeout
can kill everything the Policy started), stdin from ``/dev/null``, stdout and stderr into the capture
pipe (so ``print()`` can never corrupt the channel), the channel moved to fd 3, and every other
inherited descriptor closed. It then waits for the start message, applies the resource limits
(``RLIMIT_AS``, ``RLIMIT_CPU``, no core files), seeds the process-global ``random`` and
``numpy.random`` generators and the context's spaces from the Policy seed (so Programs that use them
replay exactly), imports ``policy.py`` and calls ``make_policy(context)``. A start marked ``ahead`` comes while the
worker still runs the Episode before: the child then loads on the CPUs it was set up on (the zygote's spare ones), and
joins the worker's CPU before it says it is ready.

Failure codes the child reports itself: ``exception`` (anything raised by the Program, including
``SystemExit``), ``memory`` (``MemoryError``), ``invalid_action`` (``act`` returned a value that is not on
the action allow-list of :mod:`~evoledger.kernel.execution.action_wire`, e.g. ``np.longdouble`` or an
arbitrary object: decided here, before anything reaches the worker), ``protocol_error`` (no
``make_policy``, or it returned an object without a callable ``act``). Dying without a reply
(``os._exit``, a crash) is classified by the worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import random
import resource
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Final, NoReturn

import numpy as np
import orjson
from evoledger.kernel.execution.action_wire import InvalidActionValue, decode_action, encode_action
from evoledger.kernel.execution.capture import bound_text
from evoledger.kernel.execution.channel import ChannelClosed
from evoledger.kernel.execution.context import PolicyContext
from evoledger.kernel.execution.messages import TO_CHILD_OBSERVATION, TO_CHILD_START
from evoledger.kernel.execution.pipe_channel import PipeChannel
from evoledger.kernel.execution.values import decode_wire, encode_wire

if TYPE_CHECKING:
    from evoledger.kernel.execution.abi.child import ChildAbi

__all__ = ["CHANNEL_READ_FD", "CHANNEL_WRITE_FD", "PolicyTemplate", "become_policy_process", "warm_up_zygote"]

CHANNEL_READ_FD: Final = 3
"""Where a Policy child reads the worker's messages (its end of one pipe of :mod:`~.pipe_channel`)."""
CHANNEL_WRITE_FD: Final = 4
"""Where a Policy child writes its replies (its end of the other pipe)."""
_THIS_FILE: Final = __file__
_RUNTIME_FILES: Final = (_THIS_FILE, str(Path(__file__).parent / "abi" / "child.py"))  # + --policy-abi's act wrapper
_MAX_FD_FALLBACK: Final = 65536


class PolicyTemplate:
    """What every Policy child starts from: the Benchmark's public description (held by the zygote)."""

    __slots__ = ("action_space", "environment_parameters", "metadata", "observation_space", "policy_abi")

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        metadata: Mapping[str, Any],
        environment_parameters: Mapping[str, Any],
        policy_abi: ChildAbi | None = None,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.metadata = metadata
        self.environment_parameters = environment_parameters
        self.policy_abi = policy_abi
        """``--policy-abi`` other than the default (:mod:`~.abi`): its context and conversions; None: the kernel's."""


class _PolicyFailure(Exception):
    """Internal: end the child with a failure report."""

    def __init__(self, code: str, message: str, trace: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.trace = trace


def _detach(read_fd: int, write_fd: int, log_fd: int) -> None:
    """Own process group; stdio onto the capture pipe; the channel on fds 3 and 4; nothing else inherited."""
    os.setsid()
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = soft if soft != resource.RLIM_INFINITY else _MAX_FD_FALLBACK
    # First above every fd they will take, so that placing one never overwrites another still to be placed.
    above = CHANNEL_WRITE_FD + 1
    read_fd, write_fd, log_fd = (fcntl.fcntl(fd, fcntl.F_DUPFD, above) for fd in (read_fd, write_fd, log_fd))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.dup2(read_fd, CHANNEL_READ_FD)
    os.dup2(write_fd, CHANNEL_WRITE_FD)
    os.closerange(CHANNEL_WRITE_FD + 1, max(top, CHANNEL_WRITE_FD + 2))
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(line_buffering=False)


def _flush_stdio() -> None:
    """Flush what the Policy printed (after every ``act``: a try costs nothing when nothing is raised)."""
    try:  # noqa: SIM105 (suppress() costs a context manager per call; this runs after every act)
        sys.stdout.flush()
    except Exception:  # a Policy may have replaced or closed its streams
        pass
    try:  # noqa: SIM105
        sys.stderr.flush()
    except Exception:
        pass


def _policy_traceback(exc: BaseException, limit: int) -> str | None:
    """The traceback of ``exc`` without this module's frames, bounded; None if it cannot be formatted."""
    try:
        tb: TracebackType | None = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in _RUNTIME_FILES:
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        return bound_text(text, limit)
    except Exception:  # formatting itself can fail under memory pressure
        return None


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable exception>"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _failure_from(exc: BaseException, trace_limit: int) -> _PolicyFailure:
    if isinstance(exc, _PolicyFailure):
        return exc
    if isinstance(exc, InvalidActionValue):  # --policy-abi: its conversion refused what act returned (abi/child.py)
        return _PolicyFailure("invalid_action", bound_text(_action_refusal(exc), 2000))
    code = "memory" if isinstance(exc, MemoryError) else "exception"
    return _PolicyFailure(code, bound_text(_describe(exc), 2000), _policy_traceback(exc, trace_limit))


def _lower_limit(kind: int, soft: int, hard: int) -> None:
    """Set a resource limit, never above what the worker itself was already allowed (the caller's ulimit)."""
    _current_soft, current_hard = resource.getrlimit(kind)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(kind, (soft, hard))


def _apply_limits(memory_bytes: int | None, cpu_seconds: int) -> None:
    _lower_limit(resource.RLIMIT_CORE, 0, 0)
    # SIGXCPU at the soft limit (the worker reports it as a timeout), SIGKILL one second later.
    _lower_limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    if memory_bytes is not None:
        _lower_limit(resource.RLIMIT_AS, memory_bytes, memory_bytes)


def warm_up_zygote(template: PolicyTemplate, rounds: int = 20) -> None:
    """In the zygote, before it freezes and forks: run the per-step code paths a few times.

    Python specializes bytecode in place as it runs; code first run in a Policy child is rewritten there, and each
    rewritten page is copied (copy-on-write) in every child. Run here once, it is already specialized when forked.
    Nothing of an Episode is involved: a zero observation of the space's shape, the action ``0``."""
    if template.policy_abi is not None:  # --policy-abi: its module imported here once, not in every child
        template.policy_abi.prepare()
    for round_ in range(rounds):
        _rehearse_steps(template)
        _flush_stdio()
        _warm_up(template, rehearse=round_ < 2)


def _rehearse_steps(template: PolicyTemplate) -> None:
    """Run the per-step code paths once: a zero observation of the space's shape, the action ``0``."""
    space = template.observation_space
    shape, dtype = getattr(space, "shape", None), getattr(space, "dtype", None)
    try:
        sample: Any = np.zeros(shape, dtype=dtype) if shape is not None and dtype is not None else 0
        encode_wire(sample)
    except Exception:  # an exotic space: warm up with an int
        sample = 0
    with contextlib.suppress(Exception):
        decode_wire(encode_wire(sample))
        decode_action(encode_action(0))
        orjson.loads(orjson.dumps({"policy_seed": 0}))


_REHEARSAL_ENTRY: Final = Path(__file__).parent / "rehearsal" / "policy.py"


def _warm_up(template: PolicyTemplate, *, rehearse: bool) -> None:
    """Make the first numpy generator once, so that the memory it touches is this process's own before an Episode's
    clock runs; seeding at the start resets every generator touched here.

    ``rehearse`` (the zygote, twice, before it forks any child): also rehearse seeding and loading a Program, so that
    the bytecode those paths run is already specialized in every child. A child itself does not rehearse: measured
    (``bench/execution_bench.py --baseline``), rehearsing in each child cost more CPU before its start (1.34x per
    trivial Episode) than it saved after it, and did not raise steps/s."""
    random.seed(0)
    np.random.seed(0)
    np.random.default_rng(0)
    if not rehearse:
        return
    _seed_everything(template, 0)
    dont_write_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:  # loaded as an Episode's Program is (a compiled copy may exist: compiling is rehearsed on its own too)
        compile(_REHEARSAL_ENTRY.read_bytes(), str(_REHEARSAL_ENTRY), "exec")
        _execute_policy_file(_REHEARSAL_ENTRY).make_policy(None).act(0)
    except Exception:  # a rehearsal that fails changes nothing: the Episode's own load does the real work
        pass
    finally:
        sys.modules.pop("policy", None)
        sys.dont_write_bytecode = dont_write_bytecode


def _seed_everything(template: PolicyTemplate, policy_seed: int) -> None:
    random.seed(policy_seed)
    np.random.seed(policy_seed % 2**32)
    for offset, space in enumerate((template.observation_space, template.action_space)):
        seed_method = getattr(space, "seed", None)
        if callable(seed_method):
            with contextlib.suppress(Exception):  # an exotic Space that cannot be seeded stays unseeded
                seed_method((policy_seed + offset + 1) % 2**63)


def _execute_policy_file(entry: Path) -> ModuleType:
    """Import ``entry`` as the module ``policy``: the one way a Program (or the rehearsal) is loaded."""
    spec = importlib.util.spec_from_file_location("policy", entry)
    if spec is None or spec.loader is None:
        raise _PolicyFailure("protocol_error", f"cannot load {entry} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["policy"] = module
    spec.loader.exec_module(module)
    return module


def _load_policy(program_dir: Path, context: PolicyContext) -> Any:
    entry = program_dir / "policy.py"
    if not entry.is_file():
        raise _PolicyFailure("protocol_error", f"the Program has no policy.py (looked in {program_dir})")
    os.chdir(program_dir)
    sys.path.insert(0, str(program_dir))
    sys.dont_write_bytecode = True  # never write __pycache__ into the Program directory
    module = _execute_policy_file(entry)
    make_policy = getattr(module, "make_policy", None)
    if not callable(make_policy):
        raise _PolicyFailure("protocol_error", "policy.py does not define a function make_policy(context)")
    policy = make_policy(context)
    if not callable(getattr(policy, "act", None)):
        raise _PolicyFailure(
            "protocol_error",
            f"make_policy(context) returned {type(policy).__name__!s:.80}, which has no callable act(observation)",
        )
    return policy


def _serve(channel: PipeChannel, template: PolicyTemplate, cpu: int | None) -> None:
    setup_cpus = os.sched_getaffinity(0)
    if cpu is not None:
        # Set up (on the zygote's spare CPU, maybe), wait on the worker's: every step is an exchange with the worker,
        # and moving now costs nothing to any Episode, where moving at the start waited for that CPU (measured: ms).
        os.sched_setaffinity(0, {cpu})
    start = channel.receive()
    if start[:1] != TO_CHILD_START:
        return
    config: dict[str, Any] = orjson.loads(start[1:])
    trace_limit = int(config["traceback_chars"])
    policy_seed = int(config["policy_seed"])
    ahead = cpu is not None and config.get("ahead") is True and setup_cpus != {cpu}
    if ahead:  # started while the worker runs the Episode before this one: load where that Episode does not run
        os.sched_setaffinity(0, setup_cpus)
    try:
        _apply_limits(config["memory_bytes"], int(config["cpu_seconds"]))
        _seed_everything(template, policy_seed)
        context = PolicyContext(
            observation_space=template.observation_space,
            action_space=template.action_space,
            metadata=dict(template.metadata),
            environment_parameters=dict(template.environment_parameters),
            policy_seed=policy_seed,
        )
        abi = template.policy_abi
        if abi is not None:  # --policy-abi: that ABI's module and context (abi/child.py)
            context = abi.context(template, policy_seed)
        act = _load_policy(Path(config["program_dir"]), context).act
        if abi is not None:  # --policy-abi: its conversions around act, once; the loop below is the same for all
            act = abi.wrap(act)
    except BaseException as exc:
        _report(channel, _failure_from(exc, trace_limit))
        return
    if ahead and cpu is not None:
        os.sched_setaffinity(0, {cpu})
    _flush_stdio()
    channel.send(b"R")
    while True:
        frame = channel.receive()
        if frame[:1] != TO_CHILD_OBSERVATION:
            return
        try:
            action = act(decode_wire(memoryview(frame)[1:]))
        except BaseException as exc:
            _report(channel, _failure_from(exc, trace_limit))
            return
        try:
            payload = encode_action(action)  # the allow-list is enforced here, in the Policy's own process
        except BaseException as exc:  # InvalidActionValue, or anything the Policy's value raised while encoded
            _report(channel, _PolicyFailure("invalid_action", bound_text(_action_refusal(exc), 2000)))
            return
        _flush_stdio()
        channel.send(b"A" + payload)


def _action_refusal(exc: BaseException) -> str:
    try:
        return str(exc) or type(exc).__name__
    except BaseException:
        return f"act() returned a value that cannot be sent ({type(exc).__name__})"


def _report(channel: PipeChannel, failure: _PolicyFailure) -> None:
    _flush_stdio()
    try:
        payload = orjson.dumps({"code": failure.code, "message": failure.message, "traceback": failure.trace})
    except Exception:  # e.g. a surrogate in the message
        payload = orjson.dumps({"code": failure.code, "message": failure.message.encode("utf-8", "replace").decode()})
    channel.send(b"E" + payload)


def become_policy_process(fds: list[int], template: PolicyTemplate, cpu: int | None) -> NoReturn:
    """Turn a freshly forked process into one Episode's Policy runtime; never returns.

    ``fds``: its ends of the channel (the pipe it reads, the pipe it writes) and of its log pipe."""
    code = 0
    try:
        read_fd, write_fd, log_fd = fds
        _detach(read_fd, write_fd, log_fd)
        _warm_up(template, rehearse=False)
        channel = PipeChannel(CHANNEL_READ_FD, CHANNEL_WRITE_FD, timed=False)
        _serve(channel, template, cpu)
    except ChannelClosed:
        code = 0
    except BaseException:
        code = 70
        with contextlib.suppress(Exception):
            traceback.print_exc()
    _flush_stdio()
    os._exit(code)
