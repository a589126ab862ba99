"""The ``messages`` config: each Run as a chat-format trajectory for post-training coding Agents.

One row per Run. The conversation is:

1. ``user``: the task text the Agent was given, followed by the initial Program's files;
2. per Agent action, in log order, an ``assistant`` message with one tool call and the ``tool`` reply:

   * ``submit`` -- arguments ``{"command": "evoledger-session submit program --episodes 0:5",
     "program_diff": "<unified diff against the previous submission>"}``; the reply is the
     ``feedback.json`` document exactly as the Agent's mirror showed it when the Feedback was published
     (a refused request gets the Host's ``{"error": {...}}`` instead);
   * ``finish`` -- arguments ``{"command": "evoledger-session finish submission-000002 ..."}``; the
     reply is the Host's answer;

3. a resumed Agent (a second ``agent-started``) gets its task text as a new ``user`` message.

An attempt whose coding-agent CLI printed a transcript (an ``agent-transcript`` Event: Codex, Claude Code, Kimi
Code, Qoder) is exported as that transcript instead: the ``user`` message is the task text exactly as the CLI got it,
followed by the CLI's own messages, every tool call it made (shell commands, file edits, ``evoledger-session``
included) with its arguments, and each tool's result (``exporters.agent_transcripts``); its reasoning, when the CLI
prints it, is ``reasoning_content``. The row's ``transcript_format`` names the format and ``input_tokens``,
``output_tokens``, ``cost_usd`` carry the usage the CLI reported.

Tool-call arguments are JSON text so the Arrow schema is the same for every row. ``reward`` is the
selected Candidate's Assessment score, or (as configured) its Validation score or the best public
Feedback score; ``reward_source`` says which.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pyarrow as pa
from evoledger.exporters.agent_transcripts import TranscriptMessages, transcript_messages
from evoledger.exporters.options import RewardSource
from evoledger.exporters.program_text import ProgramText, program_diff
from evoledger.exporters.runs import RunFacts, stored_events
from evoledger.exporters.schema import messages_schema
from evoledger.exporters.selectors import format_episode_selector
from evoledger.exporters.submissions import program_of
from evoledger.ledger.errors import ObjectEvictedError
from evoledger.ledger.events import (
    AgentStarted,
    AgentTranscript,
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    FinishRejected,
    InfraFault,
    SubmissionAccepted,
    SubmissionRejected,
    from_stored,
)
from evoledger.ledger.store import Ledger
from evoledger.projections import mirror
from evoledger.projections.mirror_files import render_file

__all__ = ["SESSION_COMMAND", "conversation", "message_batch", "reward_of"]

SESSION_COMMAND = "evoledger-session"
_KINDS = (
    "agent-started",
    "agent-transcript",
    "submission-accepted",
    "submission-rejected",
    "episode-finished",
    "infra-fault",
    "feedback-published",
    "finish-accepted",
    "finish-rejected",
)


def _message(role: str, content: str, *, name: str | None = None, tool_call_id: str | None = None) -> dict[str, Any]:
    return {"role": role, "content": content, "name": name, "tool_call_id": tool_call_id, "tool_calls": []}


def _call(call_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    message = _message("assistant", "")
    message["tool_calls"] = [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": text}}]
    return message


def _reply(call_id: str, tool: str, value: Any) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return _message("tool", text, name=tool, tool_call_id=call_id)


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _program_listing(program: ProgramText) -> str:
    if not program.files:
        return ""
    parts = ["## Initial Program (`program/`)"]
    for path in sorted(program.files):
        file = program.files[path]
        if file.text is None:
            parts.append(f"### `{path}`\n\n(binary file, {file.size} bytes)")
            continue
        fence = _fence(file.text)
        parts.append(f"### `{path}`\n\n{fence}\n{file.text.rstrip(chr(10))}\n{fence}")
    return "\n\n".join(parts)


def _task_text(ledger: Ledger, digest: str | None) -> str:
    if digest is None:
        return ""
    try:
        return ledger.objects.get(digest).decode("utf-8", errors="replace")
    except ObjectEvictedError:
        return ""


def _submit_command(program: str, selector: str) -> str:
    return f"{SESSION_COMMAND} submit {shlex.quote(program)} --episodes {shlex.quote(selector)}"


class _Conversation:
    """Builds one Run's messages while its Events are replayed in log order."""

    def __init__(self, ledger: Ledger, facts: RunFacts, transcripts: dict[int, TranscriptMessages]) -> None:
        self.ledger, self.facts = ledger, facts
        self.transcripts = transcripts
        self.transcribed = False  # the current attempt's messages come from its CLI's transcript
        self.messages: list[dict[str, Any]] = []
        self.previous = program_of(ledger, facts, facts.initial_program)
        self.pending: mirror.MirrorState | None = None
        self.pending_id: str | None = None
        self.started = False
        self.calls = 0

    def opening(self, task_digest: str | None) -> None:
        listing = "" if self.transcribed else _program_listing(self.previous)
        text = _task_text(self.ledger, task_digest)
        self.messages.append(_message("user", "\n\n".join(part for part in (text.rstrip("\n"), listing) if part)))
        self.started = True

    def unanswered(self) -> None:
        if self.pending_id is not None:
            note = {"submission_id": self.pending_id, "feedback": None, "note": "no Feedback was published"}
            self.messages.append(_reply(f"call-{self.pending_id}", "submit", note))
        self.pending, self.pending_id = None, None

    def apply(self, event: EventBase) -> None:
        if isinstance(event, AgentTranscript):
            found = self.transcripts.get(event.attempt)
            if self.transcribed and found is not None:
                self.messages.extend(found.messages)
            return
        if isinstance(event, AgentStarted):
            self.transcribed = event.attempt in self.transcripts
            if self.transcribed:
                self.unanswered()
            if not self.started:
                self.opening(event.task_digest)
            elif event.task_digest is not None:
                self.unanswered()
                self.messages.append(_message("user", _task_text(self.ledger, event.task_digest).rstrip("\n")))
            return
        if not self.started:
            self.opening(None)
        if self.transcribed:  # the transcript has these calls; only the Program is followed (for later diffs)
            if isinstance(event, SubmissionAccepted):
                self.previous = program_of(self.ledger, self.facts, event.program_digest)
            return
        if isinstance(event, SubmissionAccepted):
            self.submitted(event)
        elif isinstance(event, EpisodeFinished | InfraFault) and self.pending is not None:
            if event.submission_id == self.pending_id:
                self.pending = mirror.apply(self.pending, event)
        elif (
            isinstance(event, FeedbackPublished) and self.pending is not None and event.submission_id == self.pending_id
        ):
            self.published(event)
        elif isinstance(event, SubmissionRejected):
            self.unanswered()
            self.calls += 1
            call_id = f"call-rejected-{self.calls}"
            request = dict(event.request)
            program, episodes = request.get("program"), request.get("episodes")
            if isinstance(program, str) and isinstance(episodes, str):
                arguments: dict[str, Any] = {"command": _submit_command(program, episodes)}
            else:
                arguments = {"command": f"{SESSION_COMMAND} submit", "request": request}
            self.messages.append(_call(call_id, "submit", arguments))
            error = {"error": {"code": event.code, "message": event.message, "retryable": event.retryable}}
            self.messages.append(_reply(call_id, "submit", error))
        elif isinstance(event, FinishAccepted | FinishRejected):
            self.finished(event)

    def submitted(self, event: SubmissionAccepted) -> None:
        self.unanswered()
        program = program_of(self.ledger, self.facts, event.program_digest)
        selector = format_episode_selector(event.episodes)
        arguments = {
            "command": _submit_command("program", selector),
            "program_diff": program_diff(self.previous, program),
        }
        self.messages.append(_call(f"call-{event.submission_id}", "submit", arguments))
        self.previous = program
        self.pending = mirror.apply(mirror.MirrorState(), event)
        self.pending_id = event.submission_id

    def published(self, event: FeedbackPublished) -> None:
        state = mirror.apply(self.pending or mirror.MirrorState(), event)
        source = state.files.get(f"{event.submission_id}/feedback.json")
        content = render_file(source, self.ledger.objects).decode("utf-8") if source is not None else ""
        self.messages.append(_reply(f"call-{event.submission_id}", "submit", content))
        self.pending, self.pending_id = None, None

    def finished(self, event: FinishAccepted | FinishRejected) -> None:
        self.unanswered()
        self.calls += 1
        call_id = f"call-finish-{self.calls}"
        if isinstance(event, FinishAccepted):
            command = " ".join([SESSION_COMMAND, "finish", *event.candidates])
            reply: dict[str, Any] = {
                "finished": True,
                "candidates": list(event.candidates),
                "budget_left": event.budget_left,
            }
        else:
            command = f"{SESSION_COMMAND} finish"
            reply = {"error": {"code": event.code, "message": event.message, "retryable": event.retryable}}
        self.messages.append(_call(call_id, "finish", {"command": command}))
        self.messages.append(_reply(call_id, "finish", reply))


def _transcripts(ledger: Ledger, facts: RunFacts) -> dict[int, TranscriptMessages]:
    """Each attempt's readable CLI transcript, by attempt number."""
    found: dict[int, TranscriptMessages] = {}
    for row in stored_events(ledger, facts.event_count, ("agent-transcript",)):
        event = from_stored(row)
        if isinstance(event, AgentTranscript) and (read := transcript_messages(ledger, event)) is not None:
            found[event.attempt] = read
    return found


def conversation(
    ledger: Ledger, facts: RunFacts, transcripts: dict[int, TranscriptMessages] | None = None
) -> list[dict[str, Any]]:
    """The Run's chat messages (see the module docstring)."""
    builder = _Conversation(ledger, facts, _transcripts(ledger, facts) if transcripts is None else transcripts)
    for row in stored_events(ledger, facts.event_count, _KINDS):
        builder.apply(from_stored(row))
    if not builder.started:
        builder.opening(None)
    builder.unanswered()
    return builder.messages


def _total(figures: list[Any]) -> Any:
    """The sum of the reported figures; ``None`` when none was reported."""
    reported = [figure for figure in figures if figure is not None]
    return sum(reported) if reported else None


def reward_of(facts: RunFacts, source: RewardSource) -> float | None:
    """The Run's final reward from ``source`` (``None`` when the Run never produced it)."""
    if source == "assessment":
        return facts.assessment_score()
    if source == "validation":
        return facts.validation_score(facts.selected) if facts.selected is not None else None
    return facts.best_public_score()


def message_batch(ledger: Ledger, facts: RunFacts, *, reward: RewardSource) -> pa.RecordBatch:
    """The Run's one ``messages`` row."""
    transcripts = _transcripts(ledger, facts)
    row = {
        "run_id": facts.run_id,
        "benchmark": facts.benchmark_id,
        "messages": conversation(ledger, facts, transcripts),
        "reward": reward_of(facts, reward),
        "reward_source": reward,
        "selected_submission_id": facts.selected,
        "submissions": len(facts.submissions),
        "run_end_reason": facts.ended.reason if facts.ended is not None else None,
        "transcript_format": next((t.format for t in transcripts.values()), None),
        "input_tokens": _total([t.input_tokens for t in transcripts.values()]),
        "output_tokens": _total([t.output_tokens for t in transcripts.values()]),
        "cost_usd": _total([t.cost_usd for t in transcripts.values()]),
    }
    return pa.RecordBatch.from_pylist([row], schema=messages_schema())
