"""Agent-owned garbage under ``workspace/feedback/``: deep folders, names past PATH_MAX, special files, links.

Every case uses real files. The mirror walk must report such entries and remove them (the folder is the
Host's), never raise, recurse without bound or follow a link.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.projections.mirror import InlineFile, JsonFile, MirrorState, ObjectFile
from evoledger.projections.mirror_files import Difference, diff_mirror, sync_mirror
from evoledger.projections.mirror_walk import remove_entry
from immutables import Map

DEPTH = 1200
LONG = "n" * 255  # the longest name Linux allows


class Blobs:
    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def get(self, digest: str) -> bytes:
        return self.blobs[digest]


@pytest.fixture(autouse=True)
def _clean(tmp_path: Path) -> Iterator[None]:
    """Remove what a failed test left (pytest's own clean-up recurses and cannot remove 1,200 levels)."""
    yield
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in os.listdir(fd):
            remove_entry(fd, name, fd)
    finally:
        os.close(fd)


def _state() -> tuple[MirrorState, Blobs]:
    blob = b"artifact bytes\n"
    files: dict[str, InlineFile | ObjectFile | JsonFile] = {
        "latest.json": JsonFile(document=canonical_json({"a": 1})),
        "submission-000001/feedback.json": JsonFile(document=canonical_json({"b": 2})),
        "submission-000001/artifacts/plot.txt": ObjectFile(digest_of(blob)),
        "notes/readme.txt": InlineFile(b"hello\n"),
    }
    return MirrorState(files=Map(files)), Blobs({digest_of(blob): blob})


def _nest(parent: Path, depth: int, name: str, leaf: str | None = "leaf.txt") -> None:
    """``parent/name/name/.../leaf`` ``depth`` folders deep, made relative to folder descriptors (no path limit)."""
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        if leaf is not None:
            os.close(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _synced(tmp_path: Path) -> tuple[MirrorState, Blobs, Path]:
    state, objects = _state()
    target = tmp_path / "feedback"
    sync_mirror(state, target, objects)
    assert diff_mirror(state, target, objects) == []
    return state, objects, target


def _listing(target: Path) -> list[str]:
    return sorted(os.listdir(target))


def test_a_folder_nested_1200_deep_is_reported_and_removed(tmp_path: Path) -> None:
    state, objects, target = _synced(tmp_path)
    _nest(target, DEPTH, "d")
    _nest(target / "submission-000001", DEPTH, "d")  # inside a folder the mirror owns, too
    differences = diff_mirror(state, target, objects)
    assert {d.problem for d in differences} == {"extra"}
    assert any(d.path.startswith("d/") for d in differences)
    assert any(d.path.startswith("submission-000001/d/") for d in differences)
    report = sync_mirror(state, target, objects)
    assert report.garbage  # what was odd is reported
    assert _listing(target) == ["latest.json", "notes", "submission-000001"]
    assert sorted(os.listdir(target / "submission-000001")) == ["artifacts", "feedback.json"]
    assert diff_mirror(state, target, objects) == []


def test_names_of_255_bytes_nested_past_path_max_are_reported_and_removed(tmp_path: Path) -> None:
    state, objects, target = _synced(tmp_path)
    _nest(target, 24, LONG)  # 24 * 256 bytes: far beyond PATH_MAX (4096)
    _nest(target / "notes", 24, LONG)
    differences = diff_mirror(state, target, objects)
    assert differences
    assert {d.problem for d in differences} == {"extra"}
    sync_mirror(state, target, objects)
    assert _listing(target) == ["latest.json", "notes", "submission-000001"]
    assert diff_mirror(state, target, objects) == []


def test_a_deep_folder_where_a_mirror_file_belongs_is_replaced_by_an_incremental_sync(tmp_path: Path) -> None:
    state, objects, target = _synced(tmp_path)
    (target / "notes" / "readme.txt").unlink()
    (target / "notes" / "readme.txt").mkdir()
    _nest(target / "notes" / "readme.txt", DEPTH, LONG[:100])
    assert diff_mirror(state, target, objects) == [Difference("notes/readme.txt", "changed")]
    newer = MirrorState(files=state.files.set("notes/readme.txt", InlineFile(b"new\n")))
    sync_mirror(newer, target, objects, previous=state)
    assert (target / "notes" / "readme.txt").read_bytes() == b"new\n"
    assert diff_mirror(newer, target, objects) == []


def test_special_files_and_links_are_garbage_never_followed_or_opened(tmp_path: Path) -> None:
    state, objects, target = _synced(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the mirror's")
    os.mkfifo(target / "fifo")
    os.mkfifo(target / "submission-000001" / "artifacts" / "pipe")
    (target / "notes" / "readme.txt").unlink()
    os.mkfifo(target / "notes" / "readme.txt")  # a fifo where a mirror file belongs: never blocks
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(target / "sock"))
    (target / "link").symlink_to(outside, target_is_directory=True)
    began = time.monotonic()
    assert diff_mirror(state, target, objects) == [
        Difference("fifo", "extra"),
        Difference("link", "extra"),
        Difference("notes/readme.txt", "changed"),
        Difference("sock", "extra"),
        Difference("submission-000001/artifacts/pipe", "extra"),
    ]
    report = sync_mirror(state, target, objects)
    sock.close()
    assert time.monotonic() - began < 10
    assert {path for path, _why in report.garbage} >= {"fifo", "link", "sock", "submission-000001/artifacts/pipe"}
    assert (outside / "keep.txt").read_text() == "not the mirror's"
    assert diff_mirror(state, target, objects) == []


def test_an_unreadable_folder_is_garbage(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every folder")
    state, objects, target = _synced(tmp_path)
    locked = target / "locked"
    (locked / "inner").mkdir(parents=True)
    locked.chmod(0o000)
    try:
        assert Difference("locked", "extra") in diff_mirror(state, target, objects)
        sync_mirror(state, target, objects)
    finally:
        if locked.exists():
            locked.chmod(0o755)
    assert diff_mirror(state, target, objects) == []


def test_very_many_entries_are_bounded_and_removed(tmp_path: Path) -> None:
    state, objects, target = _synced(tmp_path)
    crowd = target / "crowd"
    crowd.mkdir()
    for i in range(3000):
        (crowd / f"f{i}").touch()
    differences = diff_mirror(state, target, objects, max_entries=500)
    assert len(differences) <= 520
    assert Difference("crowd", "extra") in differences or Difference(".", "extra") in differences
    sync_mirror(state, target, objects, max_entries=500)
    assert not crowd.exists()
    assert diff_mirror(state, target, objects) == []


@pytest.mark.parametrize("where", [".", "submission-000001", "submission-000001/artifacts"])
def test_a_mirror_folder_past_the_entry_bound_is_emptied_and_rewritten(tmp_path: Path, where: str) -> None:
    state, objects, target = _synced(tmp_path)
    folder = target / where
    for i in range(1500):
        (folder / f"junk{i}").touch()
    assert any(d.problem == "extra" for d in diff_mirror(state, target, objects, max_entries=500))
    report = sync_mirror(state, target, objects, max_entries=500)
    assert any("bound" in why for _path, why in report.garbage)
    assert diff_mirror(state, target, objects) == []
    assert len(report.written) <= len(state.files)
