"""Bounded output capture and bounded text."""

from __future__ import annotations

from evoledger.kernel.execution.capture import TailBuffer, bound_text
from hypothesis import given, settings
from hypothesis import strategies as st


def test_tail_buffer_keeps_the_last_bytes_with_a_marker() -> None:
    tail = TailBuffer(100)
    for i in range(1000):
        tail.write(f"{i:04d}\n".encode())
    value = tail.getvalue()
    assert len(value) <= 100
    assert value.endswith(b"0999\n")
    assert value.startswith(b"[evoledger: ")
    assert b"earlier bytes of output dropped]" in value
    small = TailBuffer(100)
    small.write(b"short")
    assert small.getvalue() == b"short"


def test_bound_text_keeps_head_and_tail() -> None:
    assert bound_text("short", 100) == "short"
    text = "HEAD" + "x" * 10_000 + "TAIL"
    bounded = bound_text(text, 500)
    assert len(bounded) <= 500
    assert bounded.startswith("HEAD")
    assert bounded.endswith("TAIL")
    assert "characters cut" in bounded


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=2000))
def test_bound_text_never_exceeds_its_limit(text: str, limit: int) -> None:
    bounded = bound_text(text, limit)
    assert len(bounded) <= limit
    assert bounded == text or len(text) > limit


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(min_value=60, max_value=500))
def test_tail_buffer_is_bounded_and_keeps_the_newest_bytes(chunks: list[bytes], limit: int) -> None:
    tail = TailBuffer(limit)
    for chunk in chunks:
        tail.write(chunk)
    everything = b"".join(chunks)
    value = tail.getvalue()
    assert len(value) <= limit
    if len(everything) <= limit:
        assert value == everything
    else:
        kept = value.split(b"]\n", 1)[1]
        assert everything.endswith(kept)
        assert len(kept) >= limit - 60
