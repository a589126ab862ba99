"""The worker's side of one Policy child: start it, ask it to act, time it, and tear it down.

Every wait for the Policy is bounded (``act`` / ``make_policy`` timeouts, the Episode's Policy
budget) and only that waiting is counted as Policy time. While waiting, the child's stdout/stderr
pipe is drained into a bounded tail buffer. Anything the child sends is parsed defensively: it can
report only Policy failure codes (never ``ok`` or ``infra_fault``), and a malformed frame is a
``protocol_error``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, Final

import orjson
from evoledger.kernel.authoring import FAILURE_CODES
from evoledger.kernel.execution.action_wire import MAX_ACTION_BYTES, decode_action
from evoledger.kernel.execution.capture import TailBuffer, bound_text
from evoledger.kernel.execution.channel import ChannelClosed, ChannelError, ChannelTimeout
from evoledger.kernel.execution.messages import (
    CHILD_ACTION,
    CHILD_FAILURE,
    TO_CHILD_OBSERVATION,
    TO_CHILD_START,
)
from evoledger.kernel.execution.pipe_channel import PipeChannel
from evoledger.kernel.execution.tasks import PolicyLimits
from evoledger.kernel.execution.zygote import SpareChild, Zygote
from evoledger.ledger.errors import EncodingError, EvoLedgerError

__all__ = ["PolicyFailed", "PolicyProcess", "describe_wait_status"]

_MAX_ACTION_FRAME: Final = MAX_ACTION_BYTES + 1
_MAX_MESSAGE_CHARS: Final = 2000
_SENT_AHEAD_BYTES: Final = 16 * 1024
"""At most this first observation travels with the start message: it waits in the pipe (64 KiB) until ``make_policy``
returned, so sending it does not wait for a slow Policy. (A pipe Linux made smaller, for a user holding very many, makes
the send wait for the child's reads, within the ``make_policy`` timeout and counted as Policy time.)"""


class PolicyFailed(EvoLedgerError):
    """The Policy failed the Episode with ``code`` (one of the Policy failure codes)."""

    def __init__(self, code: str, message: str, trace: str | None = None, *, died: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.trace = trace
        self.died = died


def _describe_error(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, EncodingError) else f"{type(exc).__name__}: {exc}"


def describe_wait_status(status: int) -> str:
    """A wait status in words: ``exited with status 3`` / ``killed by signal SIGSEGV``."""
    if status < 0:
        return "ended with an unknown status"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return f"was killed by signal {name}"
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)}"
    return f"ended with wait status {status}"


class PolicyProcess:
    """One Episode's Policy child, seen from the worker."""

    def __init__(self, child: SpareChild, limits: PolicyLimits) -> None:
        self.pid = child.pid
        self.limits = limits
        self.log = TailBuffer(limits.log_bytes)
        self.seconds = 0.0
        """Wall time spent waiting for the Policy so far."""
        self.act_seconds = 0.0
        """The part of :attr:`seconds` spent in ``act`` calls (counted against the Episode budget)."""
        self._log_fd = child.log_fd
        self._channel = PipeChannel(child.read_fd, child.write_fd, timed=True, max_frame=_MAX_ACTION_FRAME)
        self._channel.watch(self._log_fd, self._drain_log)
        self._closed = False
        self._deadline = 0.0
        self._sent_ahead: bytes | None = None
        self._act_timeout_reason = f"the act timeout of {limits.act_timeout_seconds:g} s"

    def _drain_log(self) -> bool:
        return self.log.drain(self._log_fd)

    def start(
        self, program_dir: Path, policy_seed: int, first_observation: bytes | None = None, *, ahead: bool = False
    ) -> None:
        """Tell the child which Program to load, its seed and its limits.

        A small ``first_observation`` (wire bytes) is sent right behind, so that the child starts its first ``act``
        as soon as ``make_policy`` returned, without waiting a round trip for it; the first :meth:`act` then only
        waits for the action (its time counts from the ready message, when the child starts acting).

        ``ahead``: the Episode has not begun (the worker still runs the one before): the child loads the Program on
        the zygote's spare CPU and then joins the worker's; :meth:`begin` is called when the Episode begins."""
        limits = self.limits
        config: dict[str, object] = {
            "program_dir": str(program_dir),
            "policy_seed": policy_seed,
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.effective_cpu_seconds,
            "traceback_chars": limits.traceback_chars,
        }
        if ahead:
            config["ahead"] = True
        self._deadline = time.perf_counter() + limits.make_policy_timeout_seconds
        then = None
        if first_observation is not None and len(first_observation) <= _SENT_AHEAD_BYTES:
            then = TO_CHILD_OBSERVATION + first_observation
        # One write: a child whose make_policy fails at once may end right after reading its start, and a second
        # write would then find it gone and blame it for that (not for its failure).
        self._send(TO_CHILD_START + orjson.dumps(config), limits.make_policy_timeout_seconds, "its start", "", then)
        if then is not None:
            self._sent_ahead = first_observation

    def begin(self) -> None:
        """The Episode of a child started ``ahead`` begins: ``make_policy`` gets at least its whole timeout from now
        (never less than a child started now would have, however long the Episode before lasted or stopped it).

        The first observation is not sent ahead here: the child may have ended meanwhile (a failure it reported while
        loading), and a write that found it gone would blame it for that instead."""
        self._deadline = max(self._deadline, time.perf_counter() + self.limits.make_policy_timeout_seconds)

    def _send(self, frame: bytes, timeout: float, what: str, timeout_reason: str, then: bytes | None = None) -> None:
        began = time.perf_counter()
        try:
            self._channel.send(frame, timeout, then=then)
        except ChannelTimeout:
            raise PolicyFailed("timeout", f"the Policy process did not accept {what} within {timeout_reason}") from None
        except ChannelClosed:
            raise PolicyFailed("protocol_error", f"the Policy process ended before {what}", died=True) from None
        finally:
            self.seconds += time.perf_counter() - began

    def _receive(self, deadline: float, waiting_for: str, timeout_reason: str) -> bytes:
        began = time.perf_counter()
        try:
            return self._channel.receive(max(0.0, deadline - began))
        except ChannelTimeout:
            raise PolicyFailed("timeout", f"{waiting_for} did not return within {timeout_reason}") from None
        except ChannelClosed:
            raise PolicyFailed(
                "protocol_error", f"the Policy process ended during {waiting_for} without replying", died=True
            ) from None
        except ChannelError as exc:
            raise PolicyFailed("protocol_error", f"the Policy process broke the channel protocol: {exc}") from None
        finally:
            self.seconds += time.perf_counter() - began

    def _failure(self, frame: bytes) -> PolicyFailed:
        try:
            report = orjson.loads(frame[1:])
            code = report["code"]
            message = report["message"]
            trace = report.get("traceback")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            return PolicyFailed("protocol_error", "the Policy process sent a malformed failure report")
        if code not in FAILURE_CODES or not isinstance(message, str) or not isinstance(trace, str | None):
            return PolicyFailed(
                "protocol_error", f"the Policy process sent an invalid failure report (code {code!r:.40})"
            )
        trace = None if trace is None else bound_text(trace, self.limits.traceback_chars)
        return PolicyFailed(code, bound_text(message, _MAX_MESSAGE_CHARS), trace)

    def wait_ready(self) -> None:
        """Wait until ``make_policy`` returned (the timeout runs from :meth:`start`); raises PolicyFailed."""
        timeout = self.limits.make_policy_timeout_seconds
        frame = self._receive(self._deadline, "loading policy.py and make_policy(context)", f"{timeout:g} s")
        if frame[:1] == b"R":
            return
        if frame and frame[0] == CHILD_FAILURE:
            raise self._failure(frame)
        raise PolicyFailed("protocol_error", f"the Policy process sent message kind {frame[:1]!r} instead of ready")

    def act(self, observation_wire: bytes) -> Any:
        """Send one observation (wire bytes) and return the decoded action; raises PolicyFailed."""
        limits = self.limits
        budget_left = limits.episode_policy_seconds - self.act_seconds
        if budget_left <= 0:
            raise PolicyFailed(
                "timeout", f"the Episode's Policy time budget of {limits.episode_policy_seconds:g} s is used up"
            )
        if limits.act_timeout_seconds <= budget_left:
            timeout, reason = limits.act_timeout_seconds, self._act_timeout_reason
        else:
            timeout = budget_left
            reason = (
                f"the Episode's remaining Policy time budget ({budget_left:.3f} of {limits.episode_policy_seconds:g} s)"
            )
        # What _send and _receive do, in one frame and with three clock readings (this runs at every step).
        channel = self._channel
        sending = True
        began = time.perf_counter()
        try:
            if self._sent_ahead is observation_wire:  # already sent with the start message
                self._sent_ahead = None
            else:
                channel.send(TO_CHILD_OBSERVATION + observation_wire, timeout)
            sending = False
            frame = channel.receive(max(0.0, began + timeout - time.perf_counter()))
        except ChannelTimeout:
            if sending:
                raise PolicyFailed(
                    "timeout", f"the Policy process did not accept the observation within {reason}"
                ) from None
            raise PolicyFailed("timeout", f"act(observation) did not return within {reason}") from None
        except ChannelClosed:
            if sending:
                raise PolicyFailed(
                    "protocol_error", "the Policy process ended before the observation", died=True
                ) from None
            raise PolicyFailed(
                "protocol_error", "the Policy process ended during act(observation) without replying", died=True
            ) from None
        except ChannelError as exc:
            raise PolicyFailed("protocol_error", f"the Policy process broke the channel protocol: {exc}") from None
        finally:
            elapsed = time.perf_counter() - began
            self.seconds += elapsed
            self.act_seconds += elapsed
        kind = frame[0] if frame else -1
        if kind == CHILD_ACTION:
            try:
                return decode_action(memoryview(frame)[1:])
            except Exception as exc:  # whatever the Policy process sent, failing to decode it is the Policy's fault
                raise PolicyFailed(
                    "protocol_error", f"the Policy process sent an undecodable action: {_describe_error(exc)}"
                ) from None
        if kind == CHILD_FAILURE:
            raise self._failure(frame)
        raise PolicyFailed("protocol_error", f"the Policy process sent message kind {frame[:1]!r} instead of an action")

    def close(self, zygote: Zygote, *, want_status: bool) -> int | None:
        """Kill the child, collect the rest of its output, free its descriptors; its wait status if asked for.

        Raises :class:`~.zygote.ZygoteBroken` (after freeing everything) if the zygote is gone or stuck: the Policy
        stopped or killed it."""
        if self._closed:
            return None
        self._closed = True
        zygote.kill_child(self.pid)
        try:
            zygote.check_alive()
            status = zygote.wait_status(self.pid) if want_status else None
            if not want_status:
                zygote.release(self.pid)
        finally:
            self.log.drain(self._log_fd)
            self._channel.unwatch(self._log_fd)
            self._channel.close()
            os.close(self._log_fd)
        return status
