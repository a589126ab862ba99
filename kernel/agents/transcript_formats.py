"""Parsers of the coding-agent CLIs' machine-readable output into a chat transcript (``kernel.agents.transcripts``).

Three shapes, one JSON object per line:

* Claude Code's ``--output-format stream-json`` (``claude-stream-json``; Qoder's ``qoder-stream-json`` is read the
  same way): ``{"type": "system"|"assistant"|"user"|"result", ...}``; an assistant ``message.content`` holds
  ``text``, ``thinking`` and ``tool_use`` blocks, a user one ``tool_result`` blocks; ``result`` carries the
  totals (``usage``, ``total_cost_usd``).
* Kimi Code's ``--output-format stream-json`` (``kimi-stream-json``): chat messages as they are
  (``{"role": "assistant", "content": ..., "tool_calls": [...]}``, ``{"role": "tool", ...}``, ``role: meta``).
* Codex's ``exec --json`` (``codex-json``): events ``thread.started``, ``turn.completed`` (with ``usage``),
  ``item.completed`` whose ``item.type`` is ``agent_message``, ``reasoning``, ``command_execution``,
  ``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list`` or ``error``.

A line of another shape is never an error: every parser falls back to the chat shape when a line has a ``role``, and
otherwise keeps the line as unrecognised (counted, and the first ones kept raw).
"""

from __future__ import annotations

import json
from typing import Any

from evoledger.kernel.agents.transcript_model import TranscriptBuilder

__all__ = ["feed_chat_line", "feed_claude_line", "feed_codex_line"]


def _text(value: Any) -> str:
    """Content as text: a string, or the text of a list of parts (``text`` / ``content`` fields), else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and isinstance(part.get("content"), str):
                parts.append(part["content"])
            elif isinstance(part, dict) and part.get("type") == "image":
                parts.append("[image]")
            else:
                parts.append(json.dumps(part, sort_keys=True, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _arguments(value: Any) -> str:
    """Tool-call arguments as JSON text (a string is taken as already being JSON text)."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, sort_keys=True, ensure_ascii=False)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def feed_claude_line(builder: TranscriptBuilder, record: dict[str, Any]) -> bool:
    """Claude Code / Qoder stream-json; ``False`` if the line is of no known shape."""
    kind = record.get("type")
    if kind == "system":
        builder.session(record.get("session_id"), record.get("model"))
        return True
    message = record.get("message")
    if kind == "assistant" and isinstance(message, dict):
        builder.session(record.get("session_id"), message.get("model"))
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": _text(content)}]
        texts, thoughts, calls = [], [], []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(_text(block.get("text")))
            elif block.get("type") in ("thinking", "redacted_thinking"):
                thoughts.append(_text(block.get("thinking")))
            elif block.get("type") in ("tool_use", "server_tool_use"):
                calls.append((str(block.get("id", "")), str(block.get("name", "")), _arguments(block.get("input"))))
        builder.assistant("".join(texts), calls, "".join(thoughts), source_id=message.get("id"))
        builder.message_usage(message.get("id"), message.get("usage"))
        return True
    if kind == "user" and isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            builder.user(content)
            return True
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                builder.tool_result(
                    str(block.get("tool_use_id", "")), _text(block.get("content")), bool(block.get("is_error"))
                )
            elif isinstance(block, dict) and block.get("type") == "text":
                builder.user(_text(block.get("text")))
        return True
    if kind == "result":
        usage = _dict(record.get("usage"))
        cost = record.get("total_cost_usd", record.get("cost_usd"))
        builder.totals(
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cached_input_tokens=_int(usage.get("cache_read_input_tokens")),
            cost_usd=cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        )
        builder.result(record)
        return True
    if "role" in record:
        return feed_chat_line(builder, record)
    return False


def feed_chat_line(builder: TranscriptBuilder, record: dict[str, Any]) -> bool:
    """Kimi Code stream-json (OpenAI chat messages); ``False`` if the line is of no known shape."""
    role = record.get("role")
    if role == "assistant":
        calls = []
        for call in record.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                calls.append(
                    (str(call.get("id", "")), str(function.get("name", "")), _arguments(function.get("arguments")))
                )
        content = record.get("content")
        thoughts = []
        if isinstance(content, list):
            thoughts = [
                _text(p.get("think", p.get("thinking")))
                for p in content
                if isinstance(p, dict) and p.get("type") in ("think", "thinking")
            ]
            content = [p for p in content if not (isinstance(p, dict) and p.get("type") in ("think", "thinking"))]
        builder.assistant(_text(content), calls, "".join(thoughts))
        return True
    if role == "tool":
        builder.tool_result(str(record.get("tool_call_id", "")), _text(record.get("content")), False)
        return True
    if role == "user":
        builder.user(_text(record.get("content")))
        return True
    if role in ("system", "meta"):
        builder.session(record.get("session_id"), None)
        if role == "system":
            builder.note(_text(record.get("content")))
        return True
    return False


def feed_codex_line(builder: TranscriptBuilder, record: dict[str, Any]) -> bool:
    """Codex ``exec --json`` events; ``False`` if the line is of no known shape."""
    kind = record.get("type")
    if kind == "thread.started":
        builder.session(record.get("thread_id"), None)
        return True
    if kind in ("turn.started", "item.started", "item.updated"):
        return True
    if kind == "turn.completed":
        usage = _dict(record.get("usage"))
        builder.add_usage(
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cached_input_tokens=_int(usage.get("cached_input_tokens")),
        )
        return True
    if kind in ("turn.failed", "error"):
        error = _dict(record.get("error")) or record
        builder.note(f"{kind}: {_text(error.get('message'))}")
        return True
    item = record.get("item")
    if kind != "item.completed" or not isinstance(item, dict):
        return "role" in record and feed_chat_line(builder, record)
    _codex_item(builder, item)
    return True


def _codex_item(builder: TranscriptBuilder, item: dict[str, Any]) -> None:
    kind = item.get("type", item.get("item_type"))  # item_type, assistant_message: the earliest --json shape
    call_id = str(item.get("id", ""))
    if kind in ("agent_message", "assistant_message"):
        builder.assistant(_text(item.get("text")), [], "")
    elif kind == "reasoning":
        builder.assistant("", [], _text(item.get("text")))
    elif kind == "command_execution":
        builder.assistant("", [(call_id, "shell", _arguments({"command": item.get("command")}))], "")
        output = _text(item.get("aggregated_output"))
        code = item.get("exit_code")
        failed = item.get("status") == "failed" or (isinstance(code, int) and code != 0)
        builder.tool_result(call_id, output if code is None else f"{output}\n[exit code {code}]".lstrip("\n"), failed)
    elif kind == "file_change":
        builder.assistant("", [(call_id, "apply_patch", _arguments({"changes": item.get("changes")}))], "")
        builder.tool_result(call_id, str(item.get("status", "")), item.get("status") == "failed")
    elif kind == "mcp_tool_call":
        name = f"{item.get('server', '')}.{item.get('tool', '')}".strip(".")
        builder.assistant("", [(call_id, name, _arguments(item.get("arguments")))], "")
        error = item.get("error")
        builder.tool_result(call_id, _text(error if error else item.get("result")), bool(error))
    elif kind == "web_search":
        builder.assistant("", [(call_id, "web_search", _arguments({"query": item.get("query")}))], "")
        builder.tool_result(call_id, "", False)
    elif kind == "todo_list":
        builder.assistant("", [(call_id, "update_plan", _arguments({"items": item.get("items")}))], "")
        builder.tool_result(call_id, "", False)
    elif kind == "error":
        builder.note(f"error: {_text(item.get('message'))}")
    else:
        builder.note(f"unrecognised item: {_text(item)}")
