"""The normalised transcript a coding-agent CLI's output is parsed into, and the builder the format parsers feed.

A transcript is a JSON document (stored as a host Object, ``kernel.agents.transcripts``)::

    {"format": "claude-stream-json", "version": 1, "session_id": ..., "model": ...,
     "messages": [{"role": "assistant", "content": "...", "reasoning": "...", "line": 3, "at": null,
                   "tool_calls": [{"id": "...", "name": "Bash", "arguments": "{\\"command\\": ...}"}]},
                  {"role": "tool", "tool_call_id": "...", "name": "Bash", "content": "...", "is_error": false,
                   "line": 4, "at": null}, ...],
     "usage": {"input_tokens": ..., "output_tokens": ..., "cached_input_tokens": ..., "cost_usd": ...},
     "result": {...the CLI's closing record, when it prints one...},
     "lines": 12, "unrecognised_lines": 1, "malformed_lines": 1,
     "malformed": [{"line": 7, "text": "the line as printed (cut)"}]}

``line`` is the 1-based line of the CLI's output the message came from; ``at`` the time the CLI wrote on that line
(seconds since the epoch), when it writes one. Usage is the CLI's own total when it reports one, else the sum of
what it reported per message or turn; any figure it never reports stays ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["KEPT_MALFORMED_LINES", "MALFORMED_TEXT_CHARS", "TranscriptBuilder"]

KEPT_MALFORMED_LINES: Final = 100
"""Malformed or unrecognised lines kept raw in the transcript (all are counted)."""

MALFORMED_TEXT_CHARS: Final = 2000
"""Characters kept of each such line."""

_USAGE_KEYS: Final = ("input_tokens", "output_tokens", "cached_input_tokens", "cost_usd")


class TranscriptBuilder:
    """Collects messages, usage and notes while a CLI's output is read line by line."""

    def __init__(self, format_name: str) -> None:
        self.format = format_name
        self.messages: list[dict[str, Any]] = []
        self.line = 0
        self.at: float | None = None
        self.session_id: str | None = None
        self.model: str | None = None
        self._summed: dict[str, int | float | None] = dict.fromkeys(_USAGE_KEYS)
        self._totals: dict[str, int | float | None] | None = None
        self._seen_usage: set[str] = set()
        self._names: dict[str, str] = {}
        self._result: dict[str, Any] | None = None
        self.unrecognised = 0
        self.malformed = 0
        self.kept: list[dict[str, Any]] = []

    def _append(self, message: dict[str, Any]) -> None:
        message["line"], message["at"] = self.line, self.at
        self.messages.append(message)

    def session(self, session_id: Any, model: Any) -> None:
        if isinstance(session_id, str) and self.session_id is None:
            self.session_id = session_id
        if isinstance(model, str) and self.model is None:
            self.model = model

    def assistant(
        self, content: str, calls: list[tuple[str, str, str]], reasoning: str, *, source_id: Any = None
    ) -> None:
        """An assistant turn; lines of one message (same ``source_id``) are merged into one."""
        tool_calls = [{"id": call_id, "name": name, "arguments": arguments} for call_id, name, arguments in calls]
        for call_id, name, _ in calls:
            self._names[call_id] = name
        last = self.messages[-1] if self.messages else None
        if (
            last is not None
            and last["role"] == "assistant"
            and source_id is not None
            and last.get("source_id") == source_id
        ):
            last["content"] += content
            last["reasoning"] += reasoning
            last["tool_calls"] += tool_calls
            return
        if not content and not calls and not reasoning:
            return
        message = {"role": "assistant", "content": content, "reasoning": reasoning, "tool_calls": tool_calls}
        if source_id is not None:
            message["source_id"] = str(source_id)
        self._append(message)

    def tool_result(self, call_id: str, content: str, is_error: bool) -> None:
        name = self._names.get(call_id)
        self._append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content, "is_error": is_error})

    def user(self, content: str) -> None:
        if content:
            self._append({"role": "user", "content": content})

    def note(self, content: str) -> None:
        """Something the CLI reported that is not part of the conversation (an error, an unknown item)."""
        if content:
            self._append({"role": "system", "content": content})

    def message_usage(self, source_id: Any, usage: Any) -> None:
        """Usage reported on a message: counted once per message id."""
        if not isinstance(usage, Mapping):
            return
        key = str(source_id) if source_id is not None else f"line-{self.line}"
        if key in self._seen_usage:
            return
        self._seen_usage.add(key)
        self.add_usage(
            input_tokens=_count(usage.get("input_tokens")),
            output_tokens=_count(usage.get("output_tokens")),
            cached_input_tokens=_count(usage.get("cache_read_input_tokens")),
        )

    def add_usage(self, **figures: int | float | None) -> None:
        for key, value in figures.items():
            if value is not None:
                self._summed[key] = (self._summed[key] or 0) + value

    def totals(self, **figures: int | float | None) -> None:
        """The CLI's own totals (they win over the sums, figure by figure)."""
        self._totals = dict(figures)

    def result(self, record: Mapping[str, Any]) -> None:
        self._result = {key: value for key, value in record.items() if key != "type"}

    def bad_line(self, text: str, *, malformed: bool) -> None:
        if malformed:
            self.malformed += 1
        else:
            self.unrecognised += 1
        if len(self.kept) < KEPT_MALFORMED_LINES:
            self.kept.append({"line": self.line, "text": text[:MALFORMED_TEXT_CHARS], "malformed": malformed})

    def usage(self) -> dict[str, int | float | None]:
        usage = dict(self._summed)
        for key, value in (self._totals or {}).items():
            if value is not None:
                usage[key] = value
        return usage

    def document(self) -> dict[str, Any]:
        messages = [{k: v for k, v in m.items() if k != "source_id"} for m in self.messages]
        return {
            "format": self.format,
            "version": 1,
            "session_id": self.session_id,
            "model": self.model,
            "messages": messages,
            "usage": self.usage(),
            "result": self._result,
            "lines": self.line,
            "unrecognised_lines": self.unrecognised,
            "malformed_lines": self.malformed,
            "malformed": self.kept,
        }


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
