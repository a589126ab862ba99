"""A coding-agent CLI's transcript as ledger data: its stdout parsed into messages, tool calls, results and usage.

The CLI adapters (``kernel.agents.adapters``) make each CLI print a machine-readable transcript on stdout and name
its format in ``AgentCommand.transcript``. When the Agent has exited, the Host stores the (capped) stdout as an
Object as before (``agent-exited``), parses it here into the normalised transcript of
``kernel.agents.transcript_model``, stores that as a host Object and records an ``agent-transcript`` Event naming it
with its counts and usage. Exports (the ``messages`` config) read it from there.

Parsing never fails a Run: a line that is not JSON, not an object, or of no known shape is counted and kept raw (the
first :data:`~evoledger.kernel.agents.transcript_model.KEPT_MALFORMED_LINES`, cut), and the rest is parsed as usual.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from evoledger.kernel.agents.transcript_formats import feed_chat_line, feed_claude_line, feed_codex_line
from evoledger.kernel.agents.transcript_model import TranscriptBuilder
from evoledger.ledger.events import AgentTranscript
from evoledger.ledger.objects import ObjectStore

__all__ = ["TRANSCRIPT_FORMATS", "parse_transcript", "transcript_event"]

TRANSCRIPT_FORMATS: Final[Mapping[str, Callable[[TranscriptBuilder, dict[str, Any]], bool]]] = {
    "claude-stream-json": feed_claude_line,
    "codex-json": feed_codex_line,
    "kimi-stream-json": feed_chat_line,
    "qoder-stream-json": feed_claude_line,
}
"""Every transcript format an adapter may name, with the parser of one of its lines."""

_DROPPED_NOTE: Final = b"[evoledger: "


def _timestamp(record: Mapping[str, Any]) -> float | None:
    value = record.get("timestamp")
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) / 1000.0 if value > 1e11 else float(value)  # milliseconds or seconds
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def parse_transcript(format_name: str, data: bytes) -> dict[str, Any]:
    """The normalised transcript of ``data`` (a CLI's stdout) in ``format_name`` (a key of :data:`TRANSCRIPT_FORMATS`).

    >>> parse_transcript("kimi-stream-json", b'{"role": "assistant", "content": "hi"}\\n')["messages"][0]["content"]
    'hi'
    """
    feed = TRANSCRIPT_FORMATS[format_name]
    builder = TranscriptBuilder(format_name)
    for raw in data.splitlines():
        builder.line += 1
        line = raw.strip()
        if not line:
            continue
        if line.startswith(_DROPPED_NOTE):  # the capped log's note: the middle of the output was not kept
            builder.note(line.decode("utf-8", errors="replace"))
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            builder.bad_line(raw.decode("utf-8", errors="replace"), malformed=True)
            continue
        if not isinstance(record, dict):
            builder.bad_line(raw.decode("utf-8", errors="replace"), malformed=True)
            continue
        builder.at = _timestamp(record)
        try:
            known = feed(builder, record)
        except (AttributeError, TypeError, ValueError):  # a known shape with fields of unexpected types
            known = False
        if not known:
            builder.bad_line(raw.decode("utf-8", errors="replace"), malformed=False)
    return builder.document()


def transcript_event(
    format_name: str | None, stdout: bytes | None, objects: ObjectStore, *, pid: int, attempt: int
) -> AgentTranscript | None:
    """Parse ``stdout`` (``format_name`` from the adapter's command), store the transcript as an Object and return the
    ``agent-transcript`` Event to append; ``None`` when the Agent prints no transcript or the format is unknown."""
    if format_name is None or format_name not in TRANSCRIPT_FORMATS or stdout is None:
        return None
    document = parse_transcript(format_name, stdout)
    digest = objects.put(json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    usage = document["usage"]
    cost = usage.get("cost_usd")
    return AgentTranscript(
        pid=pid,
        attempt=attempt,
        format=format_name,
        transcript_digest=digest,
        messages=len(document["messages"]),
        tool_calls=sum(len(m.get("tool_calls", ())) for m in document["messages"]),
        malformed_lines=document["malformed_lines"] + document["unrecognised_lines"],
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cost_usd=float(cost) if isinstance(cost, int | float) and math.isfinite(cost) and cost >= 0 else None,
    )
