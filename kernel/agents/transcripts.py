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

import bisect
import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.agents.log_capture import ARRIVALS_KEPT, TIMES_SUFFIX
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
_TIMES_MAX_BYTES: Final = ARRIVALS_KEPT * 64 + 4096


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


class _Arrivals:
    """When each byte of a capped log arrived, from its ``.times`` file (``CappedLog.timing``)."""

    def __init__(self, timing: Mapping[str, Any]) -> None:
        self.head = int(timing["head_bytes"])
        self.after_note = self.head + int(timing["note_bytes"])
        self.tail_from = int(timing["tail_from"])
        pairs = [(int(end), float(at)) for end, at in timing["arrivals"]]
        self.ends = [end for end, _ in pairs]
        self.times = [at for _, at in pairs]

    def at(self, rendered_end: int) -> float | None:
        """The arrival time of the byte before rendered offset ``rendered_end`` (``None`` inside the note)."""
        if self.head < rendered_end <= self.after_note:
            return None
        offset = rendered_end if rendered_end <= self.head else self.tail_from + rendered_end - self.after_note
        found = bisect.bisect_left(self.ends, offset)
        return self.times[found] if found < len(self.times) else None


def _arrivals(stdout_path: Path | None) -> _Arrivals | None:
    """The arrivals recorded beside ``stdout_path``; ``None`` when there are none or they cannot be read."""
    if stdout_path is None:
        return None
    try:
        with open(stdout_path.with_name(stdout_path.name + TIMES_SUFFIX), "rb") as file:
            data = file.read(_TIMES_MAX_BYTES + 1)
        if len(data) > _TIMES_MAX_BYTES:
            return None
        return _Arrivals(json.loads(data))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def parse_transcript(format_name: str, data: bytes, *, stdout_path: Path | None = None) -> dict[str, Any]:
    """The normalised transcript of ``data`` (a CLI's stdout) in ``format_name`` (a key of :data:`TRANSCRIPT_FORMATS`).

    With ``stdout_path`` (where ``data`` was captured), a message without a time of its own gets the time its line
    arrived, when that was recorded beside it.

    >>> parse_transcript("kimi-stream-json", b'{"role": "assistant", "content": "hi"}\\n')["messages"][0]["content"]
    'hi'
    """
    feed = TRANSCRIPT_FORMATS[format_name]
    builder = TranscriptBuilder(format_name)
    arrivals = _arrivals(stdout_path)
    end = 0
    for raw in data.splitlines(keepends=True):
        end += len(raw)
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
            builder.bad_line(raw.rstrip(b"\r\n").decode("utf-8", errors="replace"), malformed=True)
            continue
        if not isinstance(record, dict):
            builder.bad_line(raw.rstrip(b"\r\n").decode("utf-8", errors="replace"), malformed=True)
            continue
        builder.at = _timestamp(record)
        if builder.at is None and arrivals is not None:
            builder.at = arrivals.at(end)
        try:
            known = feed(builder, record)
        except (AttributeError, TypeError, ValueError):  # a known shape with fields of unexpected types
            known = False
        if not known:
            builder.bad_line(raw.rstrip(b"\r\n").decode("utf-8", errors="replace"), malformed=False)
    return builder.document()


def transcript_event(
    format_name: str | None,
    stdout: bytes | None,
    objects: ObjectStore,
    *,
    pid: int,
    attempt: int,
    stdout_path: Path | None = None,
) -> AgentTranscript | None:
    """Parse ``stdout`` (``format_name`` from the adapter's command; captured at ``stdout_path``), store the transcript
    as an Object and return the ``agent-transcript`` Event to append; ``None`` when the Agent prints no transcript or
    the format is unknown."""
    if format_name is None or format_name not in TRANSCRIPT_FORMATS or stdout is None:
        return None
    document = parse_transcript(format_name, stdout, stdout_path=stdout_path)
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
