"""Parsing each CLI's transcript format: messages, tool calls and results, usage, and lines that never crash a Run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.agents.log_capture import TIMES_SUFFIX, CappedLog
from evoledger.kernel.agents.transcript_model import KEPT_MALFORMED_LINES, MALFORMED_TEXT_CHARS
from evoledger.kernel.agents.transcripts import TRANSCRIPT_FORMATS, parse_transcript
from hypothesis import given, settings
from hypothesis import strategies as st


def _lines(*records: Any) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


def test_claude_lines_of_one_message_merge_and_usage_prefers_the_result_totals() -> None:
    data = _lines(
        {"type": "system", "subtype": "init", "session_id": "s", "model": "m"},
        {"type": "assistant", "message": {"id": "a", "content": [{"type": "text", "text": "Let me look."}],
                                          "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "assistant", "message": {"id": "a", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "program/policy.py"}}],
            "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
                                                  "content": "def make_policy...", "is_error": True}]}},
        {"type": "assistant", "message": {"id": "b", "content": "plain text",
                                          "usage": {"input_tokens": 7, "output_tokens": 2}}},
    )  # fmt: skip
    document = parse_transcript("claude-stream-json", data)
    assert (document["session_id"], document["model"]) == ("s", "m")
    first, reply, last = document["messages"]
    assert first["content"] == "Let me look."
    assert first["tool_calls"] == [{"id": "t1", "name": "Read", "arguments": '{"file_path": "program/policy.py"}'}]
    assert (first["line"], reply["line"], last["line"]) == (2, 4, 5)
    assert reply == {**reply, "role": "tool", "tool_call_id": "t1", "name": "Read", "is_error": True}
    assert last["content"] == "plain text"
    assert document["usage"] == {"input_tokens": 12, "output_tokens": 3, "cached_input_tokens": None, "cost_usd": None}
    closing = {"type": "result", "total_cost_usd": 0.5, "usage": {"input_tokens": 99, "output_tokens": 9}}
    totals = parse_transcript("claude-stream-json", data + _lines(closing))
    assert totals["usage"] == {"input_tokens": 99, "output_tokens": 9, "cached_input_tokens": None, "cost_usd": 0.5}
    assert totals["result"] == {"total_cost_usd": 0.5, "usage": {"input_tokens": 99, "output_tokens": 9}}


def test_codex_items_become_calls_and_results() -> None:
    data = _lines(
        {"type": "thread.started", "thread_id": "th"},
        {"type": "item.completed", "item": {"id": "c", "type": "command_execution", "command": "false",
                                            "aggregated_output": "", "exit_code": 1, "status": "failed"}},
        {"type": "item.completed", "item": {"id": "f", "type": "file_change", "status": "completed",
                                            "changes": [{"path": "program/policy.py", "kind": "update"}]}},
        {"type": "item.completed", "item": {"id": "x", "type": "mcp_tool_call", "server": "s", "tool": "t",
                                            "arguments": {"q": 1}, "result": None, "error": {"message": "no"}}},
        {"type": "turn.failed", "error": {"message": "rate limited"}},
        {"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 4, "cached_input_tokens": 1}},
        {"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 4}},
    )  # fmt: skip
    document = parse_transcript("codex-json", data)
    roles = [(m["role"], m.get("name") or (m.get("tool_calls") or [{}])[0].get("name")) for m in document["messages"]]
    assert roles == [
        ("assistant", "shell"), ("tool", "shell"), ("assistant", "apply_patch"), ("tool", "apply_patch"),
        ("assistant", "s.t"), ("tool", "s.t"), ("system", None),
    ]  # fmt: skip
    assert document["messages"][1] == {**document["messages"][1], "content": "[exit code 1]", "is_error": True}
    assert document["messages"][5]["is_error"] is True
    assert document["messages"][6]["content"] == "turn.failed: rate limited"
    assert document["usage"] == {"input_tokens": 6, "output_tokens": 8, "cached_input_tokens": 1, "cost_usd": None}
    assert document["session_id"] == "th"


def test_kimi_chat_lines_keep_their_calls_and_thinking() -> None:
    data = _lines(
        {"role": "assistant", "content": [{"type": "think", "think": "hmm"}, {"type": "text", "text": "ok"}],
         "tool_calls": [{"type": "function", "id": "k", "function": {"name": "Shell", "arguments": "{\"a\": 1}"}}]},
        {"role": "tool", "tool_call_id": "k", "content": [{"type": "text", "text": "done"}]},
        {"role": "meta", "type": "session.resume_hint", "session_id": "session_1"},
    )  # fmt: skip
    document = parse_transcript("kimi-stream-json", data)
    call, result = document["messages"]
    assert (call["content"], call["reasoning"], call["tool_calls"][0]["arguments"]) == ("ok", "hmm", '{"a": 1}')
    assert (result["name"], result["content"]) == ("Shell", "done")
    assert document["session_id"] == "session_1"


def test_bad_lines_are_counted_kept_raw_and_cut_and_the_rest_still_parses() -> None:
    noise = [b"not json {", b"[1, 2]", b'"a string"', b"\xff\xfe garbage", b"{" * 5000 + b"}" * 5000]
    unknown = {"type": "assistant", "message": {"id": 1, "content": 5}}  # a known kind with unusable fields
    good = {"role": "assistant", "content": "still here"}
    long = b"x" * (MALFORMED_TEXT_CHARS * 3)
    data = _lines(*noise, unknown, good, long, b"[evoledger: 10 bytes (1 newlines) of this output were dropped here]")
    for format_name in TRANSCRIPT_FORMATS:
        document = parse_transcript(format_name, data)
        claude_shaped = format_name in ("claude-stream-json", "qoder-stream-json")
        assert document["malformed_lines"] == len(noise) + 1  # the long line too
        assert document["unrecognised_lines"] == (0 if claude_shaped else 1)  # Claude's reads content 5 as text
        assert document["messages"][-2]["content"] == "still here"
        assert document["messages"][-1]["role"] == "system"  # the note that output was dropped
        assert all(len(bad["text"]) <= MALFORMED_TEXT_CHARS for bad in document["malformed"])
        assert document["malformed"][0] == {"line": 1, "text": "not json {", "malformed": True}
    many = parse_transcript("codex-json", b"nope\n" * (KEPT_MALFORMED_LINES + 50))
    assert many["malformed_lines"] == KEPT_MALFORMED_LINES + 50
    assert len(many["malformed"]) == KEPT_MALFORMED_LINES


@settings(max_examples=60, deadline=None)
@given(
    format_name=st.sampled_from(sorted(TRANSCRIPT_FORMATS)),
    records=st.lists(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(
                        ["type", "role", "message", "content", "item", "tool_calls", "usage", "id", "text"]
                    ),
                    inner,
                    max_size=4,
                )
            ),
            max_leaves=12,
        ),
        max_size=6,
    ),
)
def test_any_json_lines_parse_without_error(format_name: str, records: list[Any]) -> None:
    document = parse_transcript(format_name, _lines(*records))
    json.dumps(document)  # the stored document is always plain JSON
    assert document["lines"] == len(records)


@pytest.mark.parametrize("field", ["timestamp"])
def test_a_line_timestamp_is_kept_on_its_message(field: str) -> None:
    data = _lines({"role": "assistant", "content": "a", field: "2026-01-02T03:04:05Z"})
    (message,) = parse_transcript("kimi-stream-json", data)["messages"]
    assert message["at"] == 1767323045.0


def test_each_message_gets_the_time_its_line_arrived_even_past_a_dropped_middle(tmp_path: Path) -> None:
    ticks = iter(range(1000, 2000))
    log = CappedLog(head_bytes=100, tail_bytes=100, arrivals=True, clock=lambda: float(next(ticks)))
    lines = [json.dumps({"role": "assistant", "content": f"m{n:02d}"}).encode() + b"\n" for n in range(12)]
    for line in lines:  # one chunk per line: line n arrives at 1000 + n
        log.feed(line)
    (tmp_path / "stdout.log").write_bytes(log.render())
    (tmp_path / f"stdout.log{TIMES_SUFFIX}").write_text(json.dumps(log.timing()))
    document = parse_transcript(
        "kimi-stream-json", (tmp_path / "stdout.log").read_bytes(), stdout_path=tmp_path / "stdout.log"
    )
    timed = {m["content"]: m["at"] for m in document["messages"] if m["role"] == "assistant"}
    assert {"m00", "m11"} <= set(timed)  # from the head and from the tail
    assert "m05" not in timed  # the middle was dropped
    assert all(timed[f"m{n:02d}"] == 1000 + n for n in range(12) if f"m{n:02d}" in timed)
    assert [m for m in document["messages"] if m["role"] == "system"]  # and the note says so
    (tmp_path / f"stdout.log{TIMES_SUFFIX}").write_text("[not a timing")  # unreadable: no times, no error
    again = parse_transcript("kimi-stream-json", log.render(), stdout_path=tmp_path / "stdout.log")
    assert {m["at"] for m in again["messages"]} == {None}


def test_codex_items_of_the_earlier_json_shape_are_read_too() -> None:
    data = _lines({"type": "item.completed", "item": {"id": "i", "item_type": "assistant_message", "text": "hello"}})
    (message,) = parse_transcript("codex-json", data)["messages"]
    assert message["content"] == "hello"
