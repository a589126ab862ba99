"""A coding-agent CLI's recorded transcript (``agent-transcript`` Events) as chat messages for the ``messages`` config.

The transcript Object is the JSON document the Host wrote when the Agent exited (its layout is described in
``kernel.agents.transcript_model``). A run directory is untrusted input, so the document is read defensively: a
message that is not of the expected shape is left out, text fields must be strings, and an unreadable or evicted
Object gives no messages (the ``messages`` row then falls back to the Session's requests for that attempt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evoledger.ledger.errors import EvoLedgerError
from evoledger.ledger.events import AgentTranscript
from evoledger.ledger.store import Ledger

__all__ = ["TranscriptMessages", "transcript_messages"]


@dataclass(frozen=True, slots=True)
class TranscriptMessages:
    """One attempt's messages in chat format, and the usage its CLI reported."""

    format: str
    messages: list[dict[str, Any]]
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _chat(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        return None
    role = message.get("role")
    base: dict[str, Any] = {
        "role": role,
        "content": message["content"],
        "name": None,
        "tool_call_id": None,
        "tool_calls": [],
        "reasoning_content": _str(message.get("reasoning")) or None,
    }
    if role == "assistant":
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and all(isinstance(call.get(k), str) for k in ("id", "name", "arguments")):
                function = {"name": call["name"], "arguments": call["arguments"]}
                base["tool_calls"].append({"id": call["id"], "type": "function", "function": function})
        return base
    if role == "tool":
        base["name"], base["tool_call_id"] = _str(message.get("name")), _str(message.get("tool_call_id"))
        return base
    if role == "user":
        return base
    return None  # notes (role "system": the CLI's errors, dropped output) are not part of the conversation


def transcript_messages(ledger: Ledger, event: AgentTranscript) -> TranscriptMessages | None:
    """The chat messages of the transcript ``event`` names; ``None`` when its Object cannot be read."""
    try:
        document = json.loads(ledger.objects.get(event.transcript_digest))
    except (EvoLedgerError, ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        return None
    messages = [chat for chat in map(_chat, document["messages"]) if chat is not None]
    return TranscriptMessages(
        format=event.format,
        messages=messages,
        input_tokens=event.input_tokens,
        output_tokens=event.output_tokens,
        cost_usd=event.cost_usd,
    )
