"""diff_mirror's fast JSON comparison agrees byte for byte with what sync_mirror writes, on generated documents."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import EncodingError
from evoledger.projections.mirror import InlineFile, JsonFile, MirrorState, ObjectFile
from evoledger.projections.mirror_files import Difference, diff_mirror, render_file, sync_mirror
from hypothesis import given, settings
from hypothesis import strategies as st
from immutables import Map


class Blobs:
    """An ObjectSource over a dict."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def get(self, digest: str) -> bytes:
        return self.blobs[digest]


_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-4, 9.9e-5, 1e-5, 1e15, 1e16, 1.5e16, 123.0, 0.1, 2.0**63, -(2.0**64)]),
)
_ints = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1]))
_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
_scalars = st.one_of(st.none(), st.booleans(), _ints, _floats, _text)
_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4), max_leaves=20
)


def _state(document: dict[str, Any], content: Any, items: list[Any]) -> tuple[MirrorState, Blobs]:
    blob = canonical_json(content)
    source = JsonFile(
        document=canonical_json(document),
        embeds=(("content", digest_of(blob)),),
        lists=(("history", Map(dict(enumerate(canonical_json(i) for i in items)))),),
    )
    files: dict[str, InlineFile | ObjectFile | JsonFile] = {
        "s/feedback.json": source,
        "raw.bin": InlineFile(b"x"),
        "o.txt": ObjectFile(digest_of(b"o")),
    }
    return MirrorState(files=Map(files)), Blobs({digest_of(blob): blob, digest_of(b"o"): b"o"})


@settings(max_examples=60, deadline=None)  # the edge values have their own parametrized test below
@given(st.dictionaries(_text, _json, max_size=5), _json, st.lists(_json, max_size=3))
def test_a_freshly_synced_mirror_has_no_differences(document: dict[str, Any], content: Any, items: list[Any]) -> None:
    state, objects = _state(document, content, items)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "feedback"
        sync_mirror(state, target, objects)
        assert diff_mirror(state, target, objects) == []
        path = target / "s" / "feedback.json"
        data = path.read_bytes()
        path.write_bytes(data.replace(b"\n", b"\n ", 1))  # one more space: the same JSON, other bytes
        assert diff_mirror(state, target, objects) == [Difference("s/feedback.json", "changed")]


@pytest.mark.parametrize("value", [1e-5, 1e16, 2.5e-7, 10**30, -(2**64), "\u2028\x7f\x1f", {"é": [1.5, None]}])
def test_values_the_fast_renderer_leaves_alone_are_still_compared_exactly(value: Any) -> None:
    state, objects = _state({"v": value}, {"c": value}, [value])
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "feedback"
        sync_mirror(state, target, objects)
        assert diff_mirror(state, target, objects) == []
        written = (target / "s" / "feedback.json").read_bytes()
        assert written == render_file(state.files["s/feedback.json"], objects)
        if isinstance(value, float) and "e" in repr(value):
            assert repr(value).encode() in written  # Python's exponent form, which orjson would not write


def test_a_non_finite_embedded_number_is_an_encoding_error_on_both_paths(tmp_path: Path) -> None:
    blob = b'{"x":1e400}'
    source = JsonFile(document=canonical_json({}), embeds=(("content", digest_of(blob)),))
    objects = Blobs({digest_of(blob): blob})
    state = MirrorState(files=Map({"f.json": source}))
    (tmp_path / "f.json").write_bytes(b"{}\n")
    with pytest.raises(EncodingError):
        render_file(source, objects)
    with pytest.raises(EncodingError):
        diff_mirror(state, tmp_path, objects)
    assert math.isinf(float("1e400"))


def test_files_that_are_not_regular_are_changed_and_strays_are_extra(tmp_path: Path) -> None:
    state, objects = _state({"a": 1}, {"b": 2}, [])
    sync_mirror(state, tmp_path, objects)
    os.remove(tmp_path / "o.txt")
    os.symlink(tmp_path / "raw.bin", tmp_path / "o.txt")  # a link where a file belongs: never followed
    (tmp_path / "raw.bin").unlink()
    (tmp_path / "raw.bin").mkdir()  # a folder where a file belongs
    (tmp_path / "stray.txt").write_text("x")
    assert diff_mirror(state, tmp_path, objects) == [
        Difference("o.txt", "changed"),
        Difference("raw.bin", "changed"),
        Difference("stray.txt", "extra"),
    ]
