"""A recorded CLI transcript read back for the ``messages`` config: untrusted bytes never crash the export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from evoledger.exporters import export_dataset
from evoledger.exporters.agent_transcripts import transcript_messages
from evoledger.ledger.events import AgentTranscript
from evoledger.ledger.store import Ledger


def _event(digest: str) -> AgentTranscript:
    return AgentTranscript(pid=1, format="claude-stream-json", transcript_digest=digest, messages=0, tool_calls=0)


def test_well_formed_messages_become_chat_messages_and_the_rest_is_left_out(tmp_path: Path) -> None:
    document: dict[str, Any] = {
        "messages": [
            {"role": "assistant", "content": "hi", "reasoning": "why", "line": 1, "at": 5.0,
             "tool_calls": [{"id": "t", "name": "Bash", "arguments": "{}"}, {"id": 3, "name": "x", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "t", "name": "Bash", "content": "ok", "is_error": False},
            {"role": "system", "content": "turn.failed: rate limited"},
            {"role": "tool", "content": 7},
            "not a message",
            {"role": "user", "content": "go on"},
        ]
    }  # fmt: skip
    with Ledger.create(tmp_path / "r") as book:
        good = book.objects.put(json.dumps(document).encode())
        nested = book.objects.put(b"[" * 100_000 + b"]" * 100_000)
        not_json = book.objects.put(b"\xff not json")
        wrong_shape = book.objects.put(b'{"messages": 3}')
        read = transcript_messages(book, _event(good))
        assert read is not None
        assert [m["role"] for m in read.messages] == ["assistant", "tool", "user"]
        call = read.messages[0]
        assert call["tool_calls"] == [{"id": "t", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}]
        assert call["reasoning_content"] == "why"
        assert read.messages[1] == {**read.messages[1], "tool_call_id": "t", "name": "Bash", "content": "ok"}
        for broken in (nested, not_json, wrong_shape, "sha256:" + "0" * 64):
            assert transcript_messages(book, _event(broken)) is None


def test_a_run_without_a_transcript_keeps_the_sessions_conversation(recorded_run: Path, tmp_path: Path) -> None:
    export_dataset([recorded_run], tmp_path / "out", configs=["messages"])
    (row,) = pq.read_table(tmp_path / "out" / "messages" / "train-00000-of-00001.parquet").to_pylist()
    assert (row["transcript_format"], row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (None,) * 4
    calls = [m["tool_calls"][0]["function"]["name"] for m in row["messages"] if m["tool_calls"]]
    assert calls[0] == "submit"
    assert calls[-1] == "finish"
    assert {m["reasoning_content"] for m in row["messages"]} == {None}
