"""Agent process facts (host-only): an Agent process was started, it exited, and the transcript it printed."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from evoledger.ledger.events.base import Code, Count, EventBase, FiniteFloat, FrozenList, Name, ObjectDigest, Positive
from evoledger.ledger.records import Visibility
from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["AgentExited", "AgentStarted", "AgentTranscript"]


class AgentStarted(EventBase):
    """Records the launch of an Agent process: which Agent, its command line, pid and attempt number."""

    kind: Literal["agent-started"] = "agent-started"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    agent: Name
    command: FrozenList[str]
    pid: Positive
    attempt: Positive = 1
    task_digest: ObjectDigest | None = None
    """The task text the Agent was given (an Object), so exports can replay the conversation."""
    skills_digest: ObjectDigest | None = None
    """The Agent Skills placed in its workspace (an Object: the guides' version and text); ``None``: none."""

    @model_validator(mode="after")
    def _check_command(self) -> Self:
        if not self.command:
            raise PydanticCustomError("empty_command", "the Agent command line is empty")
        return self


class AgentExited(EventBase):
    """Records how an Agent process ended: exit code or signal, captured output Objects, duration, reason."""

    kind: Literal["agent-exited"] = "agent-exited"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    pid: Positive
    attempt: Positive = 1
    exit_code: int | None = None
    signal: Positive | None = None
    stdout_digest: ObjectDigest | None = None
    stderr_digest: ObjectDigest | None = None
    duration_ms: Count
    reason: Code
    """Why the process ended, e.g. ``exited``, ``timeout``, ``killed``, ``host_shutdown``."""

    @model_validator(mode="after")
    def _check_status(self) -> Self:
        if self.exit_code is not None and self.signal is not None:
            raise PydanticCustomError(
                "exit_and_signal",
                "a process ends by exit code or by signal, not both (got {code} and {sig})",
                {"code": self.exit_code, "sig": self.signal},
            )
        return self


class AgentTranscript(EventBase):
    """Records the transcript a coding-agent CLI printed (its messages, tool calls and results), parsed and stored.

    ``transcript_digest`` names the normalised transcript (a JSON Object: ``kernel.agents.transcript_model``); the
    raw output stays the ``stdout_digest`` of the ``agent-exited`` Event just before. ``malformed_lines`` counts the
    lines that were not JSON or of no known shape (kept raw in the transcript). Usage figures are the CLI's own,
    ``None`` when it reports none.
    """

    kind: Literal["agent-transcript"] = "agent-transcript"
    version: Literal[1] = 1
    visibility: ClassVar[Visibility] = "host"

    pid: Positive
    attempt: Positive = 1
    format: Name
    transcript_digest: ObjectDigest
    messages: Count
    tool_calls: Count
    malformed_lines: Count = 0
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cost_usd: FiniteFloat | None = Field(default=None, ge=0)
