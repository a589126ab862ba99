"""Program snapshots: stable ids, every refusal, change detection, byte-identical materialisation."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.errors import ConfigError, IntegrityError, SchemaError, SnapshotError
from evoledger.ledger.events import from_stored, to_pending
from evoledger.ledger.records import GENESIS_HASH, StoredEvent
from evoledger.ledger.snapshots import (
    PROGRAM_FORMAT,
    ProgramSnapshot,
    SnapshotLimits,
    materialize_program,
    parse_manifest,
    snapshot_program,
)
from hypothesis import given, settings
from hypothesis import strategies as st


class MemoryObjects:
    """A dict-backed Object sink and source."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        digest = digest_of(data)
        self.blobs[digest] = data
        return digest

    def get(self, digest: str) -> bytes:
        return self.blobs[digest]


def write_tree(root: Path, files: dict[str, bytes], executable: frozenset[str] = frozenset()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o755 if rel in executable else 0o644)
    return root


def read_tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[path.relative_to(root).as_posix()] = (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
    return out


PROGRAM = {"policy.py": b"def make_policy(context):\n    return None\n", "lib/helpers.py": b"X = 1\n"}


# ---------------------------------------------------------------------------------------------------------
# Capture


def test_snapshot_records_files_and_a_manifest_whose_digest_is_the_id(tmp_path: Path) -> None:
    objects = MemoryObjects()
    root = write_tree(tmp_path / "prog", PROGRAM, executable=frozenset({"lib/helpers.py"}))
    snap = snapshot_program(root, objects)
    assert list(snap.files) == ["lib/helpers.py", "policy.py"]
    assert snap.files["policy.py"] == digest_of(PROGRAM["policy.py"])
    assert snap.digest == digest_of(snap.manifest_bytes)
    assert objects.get(snap.digest) == snap.manifest_bytes
    assert snap.total_bytes == sum(len(b) for b in PROGRAM.values())
    assert snap.file_count == 2
    manifest = parse_manifest(snap.manifest_bytes)
    assert manifest.format == PROGRAM_FORMAT
    assert manifest.entry_point == "policy.py"
    assert manifest.files["lib/helpers.py"].executable is True
    assert manifest.files["policy.py"].executable is False
    assert manifest.files["policy.py"].size == len(PROGRAM["policy.py"])
    assert snap.manifest_bytes == canonical_json(
        {
            "entry_point": "policy.py",
            "files": {
                "lib/helpers.py": {"digest": digest_of(b"X = 1\n"), "executable": True, "size": 6},
                "policy.py": {"digest": digest_of(PROGRAM["policy.py"]), "executable": False, "size": 42},
            },
            "format": "evoledger.program/1",
        }
    )


def test_snapshot_event_round_trips(tmp_path: Path) -> None:
    snap = snapshot_program(write_tree(tmp_path / "p", PROGRAM), MemoryObjects())
    event = snap.to_event("submission")
    assert event.program_digest == snap.digest
    assert event.files == dict(snap.files)
    assert event.file_count == 2
    pending = to_pending(event)
    row = StoredEvent(1, pending.kind, 1, pending.visibility, pending.payload, GENESIS_HASH, "", "")
    assert from_stored(row) == event


def test_digest_ignores_mtimes_and_creation_order(tmp_path: Path) -> None:
    files = {"policy.py": b"a", "z/b.txt": b"b", "a/c.txt": b"c", "m.txt": b""}
    first = write_tree(tmp_path / "one", files)
    second = write_tree(tmp_path / "two", dict(reversed(list(files.items()))))
    for i, path in enumerate(sorted(second.rglob("*"))):
        os.utime(path, ns=(10**9 * i, 10**9 * (1000 - i)))
    (second / "empty-dir").mkdir()
    assert snapshot_program(first, MemoryObjects()).digest == snapshot_program(second, MemoryObjects()).digest


def test_digest_changes_with_content_name_or_executable_bit(tmp_path: Path) -> None:
    base = snapshot_program(write_tree(tmp_path / "a", PROGRAM), MemoryObjects()).digest
    changed = snapshot_program(write_tree(tmp_path / "b", {**PROGRAM, "policy.py": b"x"}), MemoryObjects())
    renamed = snapshot_program(
        write_tree(tmp_path / "c", {"policy.py": PROGRAM["policy.py"], "lib/helper.py": b"X = 1\n"}),
        MemoryObjects(),
    )
    executable = snapshot_program(
        write_tree(tmp_path / "d", PROGRAM, executable=frozenset({"policy.py"})), MemoryObjects()
    )
    assert len({base, changed.digest, renamed.digest, executable.digest}) == 4


def test_caches_and_vcs_files_are_skipped(tmp_path: Path) -> None:
    clean = snapshot_program(write_tree(tmp_path / "clean", PROGRAM), MemoryObjects())
    noisy = write_tree(tmp_path / "noisy", PROGRAM)
    write_tree(
        noisy,
        {
            "__pycache__/policy.cpython-311.pyc": b"\x00",
            "lib/__pycache__/helpers.pyc": b"\x00",
            ".git/HEAD": b"ref",
            "stale.pyc": b"\x00",
            ".DS_Store": b"\x00",
            "lib/.DS_Store": b"\x00",
        },
    )
    (noisy / ".git" / "link").symlink_to("/etc/passwd")  # ignored together with .git/
    assert snapshot_program(noisy, MemoryObjects()).digest == clean.digest


def test_custom_entry_point(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"agent/main.py": b"pass\n"})
    snap = snapshot_program(root, MemoryObjects(), entry_point="agent/main.py")
    assert parse_manifest(snap.manifest_bytes).entry_point == "agent/main.py"


# ---------------------------------------------------------------------------------------------------------
# Refusals


def _refused(root: Path, match: str, **kwargs: object) -> SnapshotError:
    with pytest.raises(SnapshotError, match=match) as caught:
        snapshot_program(root, MemoryObjects(), **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_refuses_symlink_to_inside(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    (root / "alias.py").symlink_to("policy.py")
    error = _refused(root, "'alias.py'.*symbolic link")
    assert "copy" in str(error)


def test_refuses_symlink_to_outside_and_dangling(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    (root / "lib" / "secret").symlink_to("/etc/hostname")
    _refused(root, "'lib/secret'.*symbolic link")
    (root / "lib" / "secret").unlink()
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    _refused(root, "'dangling'.*symbolic link")


def test_refuses_symlinked_directory(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    (root / "more").symlink_to(root / "lib", target_is_directory=True)
    _refused(root, "'more'.*symbolic link")


def test_refuses_fifo(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    os.mkfifo(root / "pipe")
    _refused(root, "'pipe'.*fifo")


def test_refuses_socket(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(root / "s"))
        except OSError as exc:  # path too long for AF_UNIX on this machine
            pytest.skip(f"cannot bind a unix socket here: {exc}")
        _refused(root, "'s'.*socket")


def test_refuses_device_file(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    try:
        os.mknod(root / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating device files needs privileges")
    _refused(root, "'null'.*device file")


def test_refuses_non_utf8_file_name(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    try:
        fd = os.open(os.fsencode(root) + b"/bad-\xff.py", os.O_CREAT | os.O_WRONLY, 0o644)
    except OSError as exc:
        pytest.skip(f"this file system refuses non-UTF-8 names: {exc}")
    os.close(fd)
    _refused(root, r"bad-\\xff\.py.*not valid UTF-8.*rename")


def test_refuses_backslash_in_name(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {**PROGRAM, "a\\b.py": b""})
    _refused(root, "backslash")


def test_refuses_missing_entry_point(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"other.py": b""})
    _refused(root, "has no policy.py: a Program is a folder whose policy.py defines make_policy.*create it")


@pytest.mark.parametrize("entry", ["/etc/passwd", "../policy.py", "a/./b.py", ""])
def test_refuses_bad_entry_point_paths(tmp_path: Path, entry: str) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    _refused(root, "not a valid Program path", entry_point=entry)


def test_refuses_a_directory_as_entry_point(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    _refused(root, "has no lib", entry_point="lib")


def test_refuses_missing_directory(tmp_path: Path) -> None:
    _refused(tmp_path / "absent", "not a directory")
    (tmp_path / "file").write_bytes(b"")
    _refused(tmp_path / "file", "not a directory")


def test_refuses_too_many_files(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {**PROGRAM, "a.txt": b"", "b.txt": b""})
    _refused(root, "more than 3 files.*max_files", limits=SnapshotLimits(max_files=3))
    assert snapshot_program(root, MemoryObjects(), limits=SnapshotLimits(max_files=4)).file_count == 4


def test_refuses_too_large_file(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {**PROGRAM, "big.bin": b"x" * 101})
    _refused(root, "'big.bin'.*101 bytes.*max_file_bytes", limits=SnapshotLimits(max_file_bytes=100))
    snapshot_program(root, MemoryObjects(), limits=SnapshotLimits(max_file_bytes=101))


def test_refuses_too_large_total(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"policy.py": b"x" * 60, "b.bin": b"y" * 60})
    _refused(root, "exceeds 100 bytes in total.*max_total_bytes", limits=SnapshotLimits(max_total_bytes=100))


@pytest.mark.parametrize("field", ["max_files", "max_file_bytes", "max_total_bytes"])
def test_limits_must_be_positive(field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        SnapshotLimits(**{field: 0})


def test_sink_returning_junk_is_an_integrity_error(tmp_path: Path) -> None:
    class Broken:
        def put(self, data: bytes) -> str:
            return "not-a-digest"

    with pytest.raises(IntegrityError, match=r"not-a-digest"):
        snapshot_program(write_tree(tmp_path / "p", PROGRAM), Broken())


# ---------------------------------------------------------------------------------------------------------
# Changes during capture (simulated deterministically by the sink)


class MeddlingObjects(MemoryObjects):
    """Runs ``action`` once, during the ``put`` call number ``at``."""

    def __init__(self, action: object, at: int = 1) -> None:
        super().__init__()
        self.action = action
        self.at = at
        self.calls = 0

    def put(self, data: bytes) -> str:
        self.calls += 1
        if self.calls == self.at:
            self.action()  # type: ignore[operator]
        return super().put(data)


@pytest.mark.parametrize("at", [1, 2])
def test_detects_a_file_growing_during_capture(tmp_path: Path, at: int) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    sink = MeddlingObjects(lambda: (root / "lib" / "helpers.py").write_bytes(b"X = 2222\n"), at=at)
    with pytest.raises(SnapshotError, match=r"'lib/helpers.py'.*changed during capture.*retry"):
        snapshot_program(root, sink)


def test_detects_same_size_rewrite_by_mtime(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    target = root / "policy.py"
    original = target.stat().st_mtime_ns

    def rewrite() -> None:
        target.write_bytes(PROGRAM["policy.py"].upper())
        os.utime(target, ns=(original + 10**9, original + 10**9))

    with pytest.raises(SnapshotError, match=r"'policy.py'.*changed during capture"):
        snapshot_program(root, MeddlingObjects(rewrite))


def test_detects_a_file_added_during_capture(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    sink = MeddlingObjects(lambda: (root / "new.py").write_bytes(b""))
    with pytest.raises(SnapshotError, match=r"'new.py'.*changed during capture"):
        snapshot_program(root, sink)


def test_detects_a_file_removed_before_it_is_read(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    sink = MeddlingObjects(lambda: (root / "policy.py").unlink())  # lib/helpers.py is stored first
    with pytest.raises(SnapshotError, match=r"'policy.py'.*changed during capture"):
        snapshot_program(root, sink)


def test_detects_a_file_replaced_by_a_symlink_before_it_is_read(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)

    def swap() -> None:
        (root / "policy.py").unlink()
        (root / "policy.py").symlink_to("lib/helpers.py")

    with pytest.raises(SnapshotError, match=r"'policy.py'.*changed during capture"):
        snapshot_program(root, MeddlingObjects(swap))


# ---------------------------------------------------------------------------------------------------------
# Materialisation


def test_materialize_round_trips_bytes_and_executable_bits(tmp_path: Path) -> None:
    objects = MemoryObjects()
    files = {**PROGRAM, "data/blob.bin": bytes(range(256)), "run.sh": b"#!/bin/sh\n"}
    snap = snapshot_program(write_tree(tmp_path / "src", files, frozenset({"run.sh"})), objects)
    manifest = materialize_program(snap.digest, objects, tmp_path / "out" / "program")
    assert manifest.to_bytes() == snap.manifest_bytes
    assert read_tree(tmp_path / "out" / "program") == read_tree(tmp_path / "src")
    assert stat.S_IMODE((tmp_path / "out" / "program" / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "program" / "policy.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out" / "program").stat().st_mode) == 0o755
    assert snapshot_program(tmp_path / "out" / "program", MemoryObjects()).digest == snap.digest
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["program"]  # no staging left over


def test_materialize_into_an_existing_empty_directory(tmp_path: Path) -> None:
    objects = MemoryObjects()
    snap = snapshot_program(write_tree(tmp_path / "src", PROGRAM), objects)
    (tmp_path / "dst").mkdir()
    materialize_program(snap.digest, objects, tmp_path / "dst")
    assert read_tree(tmp_path / "dst") == read_tree(tmp_path / "src")


def test_materialize_refuses_non_empty_target_unless_overwrite(tmp_path: Path) -> None:
    objects = MemoryObjects()
    snap = snapshot_program(write_tree(tmp_path / "src", PROGRAM), objects)
    dst = write_tree(tmp_path / "dst", {"old.py": b"old"})
    with pytest.raises(SnapshotError, match=r"not empty.*overwrite=True"):
        materialize_program(snap.digest, objects, dst)
    assert read_tree(dst) == {"old.py": (b"old", False)}
    materialize_program(snap.digest, objects, dst, overwrite=True)
    assert read_tree(dst) == read_tree(tmp_path / "src")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst", "src"]


def test_materialize_refuses_file_and_symlink_targets(tmp_path: Path) -> None:
    objects = MemoryObjects()
    snap = snapshot_program(write_tree(tmp_path / "src", PROGRAM), objects)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(SnapshotError, match=r"not a directory"):
        materialize_program(snap.digest, objects, tmp_path / "file")
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    with pytest.raises(SnapshotError, match=r"symbolic link"):
        materialize_program(snap.digest, objects, tmp_path / "link", overwrite=True)


def test_materialize_detects_damaged_objects_and_leaves_no_trace(tmp_path: Path) -> None:
    objects = MemoryObjects()
    snap = snapshot_program(write_tree(tmp_path / "src", PROGRAM), objects)
    objects.blobs[snap.files["policy.py"]] = b"tampered"
    with pytest.raises(IntegrityError, match=r"'policy.py'.*do not hash"):
        materialize_program(snap.digest, objects, tmp_path / "out" / "p")
    assert list((tmp_path / "out").iterdir()) == []
    objects.blobs[snap.digest] = b"{}"
    with pytest.raises(IntegrityError, match=r"manifest"):
        materialize_program(snap.digest, objects, tmp_path / "out" / "p")


def test_materialize_refuses_a_non_manifest_object(tmp_path: Path) -> None:
    objects = MemoryObjects()
    digest = objects.put(b'{"hello":"world"}')
    with pytest.raises(SchemaError, match=r"invalid Program manifest"):
        materialize_program(digest, objects, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------
# Manifest parsing

_GOOD = {"digest": digest_of(b""), "size": 0, "executable": False}


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"{not json", "not a Program manifest"),
        (b'{"format": "evoledger.program/1"}', "not in canonical JSON form"),
        (canonical_json({"format": "evoledger.program/2", "entry_point": "p.py", "files": {"p.py": _GOOD}}), "format"),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "p.py", "files": {"q.py": _GOOD}}),
            "not among the files",
        ),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "p.py", "files": {"p.py": _GOOD, "../x": _GOOD}}),
            r"'\.\.'",
        ),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "p.py", "files": {"p.py": _GOOD, "/abs": _GOOD}}),
            "absolute",
        ),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "a", "files": {"a": _GOOD, "a/b": _GOOD}}),
            "both a file and the directory",
        ),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "p.py", "files": {"p.py": _GOOD}, "extra": 1}),
            "Extra inputs",
        ),
        (
            canonical_json({"format": PROGRAM_FORMAT, "entry_point": "p.py", "files": {"p.py": {**_GOOD, "size": -1}}}),
            "greater than or equal",
        ),
    ],
)
def test_parse_manifest_rejects(data: bytes, match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        parse_manifest(data)


# ---------------------------------------------------------------------------------------------------------
# Property: any small tree materialises byte for byte and re-snapshots to the same id

_names = st.sampled_from(["a", "b.py", "c.txt", "dir", "é.md", "x-y_z"])
_trees = st.dictionaries(
    st.lists(_names, min_size=1, max_size=3).map("/".join),
    st.tuples(st.binary(max_size=64), st.booleans()),
    max_size=6,
).filter(lambda tree: not any(other.startswith(path + "/") for path in tree for other in tree))


@settings(max_examples=40, deadline=None)
@given(_trees, st.binary(max_size=32))
def test_materialize_is_byte_identical_for_any_tree(tree: dict[str, tuple[bytes, bool]], policy: bytes) -> None:
    files = {path: data for path, (data, _) in tree.items() if path != "policy.py"}
    files["policy.py"] = policy
    executable = frozenset(path for path, (_, x) in tree.items() if x and path in files)
    with tempfile.TemporaryDirectory() as tmp:
        src = write_tree(Path(tmp) / "src", files, executable)
        objects = MemoryObjects()
        snap = snapshot_program(src, objects)
        assert set(snap.files) == set(files)
        materialize_program(snap.digest, objects, Path(tmp) / "out")
        assert read_tree(Path(tmp) / "out") == read_tree(src)
        assert snapshot_program(Path(tmp) / "out", MemoryObjects()).digest == snap.digest


# ---------------------------------------------------------------------------------------------------------
# Hostile Program folders: file times, links swapped in for folders


def _captured_in_thread(root: Path, seconds: float, **kwargs: object) -> object:
    """The snapshot (or the error) of ``root``; fails if capture takes longer than ``seconds``."""
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(_capture(root, **kwargs)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"capture of {root} still running after {seconds} s"
    return out[0]


def _capture(root: Path, **kwargs: object) -> object:
    try:
        return snapshot_program(root, MemoryObjects(), **kwargs)  # type: ignore[arg-type]
    except SnapshotError as exc:
        return exc


def test_a_modification_time_in_the_future_never_delays_capture(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    tomorrow = time.time_ns() + 86_400 * 10**9
    os.utime(root / "policy.py", ns=(tomorrow, tomorrow))
    began = time.monotonic()
    snap = _captured_in_thread(root, 10.0, settle_seconds=0.1)
    assert time.monotonic() - began < 10
    assert isinstance(snap, ProgramSnapshot)
    assert snap.digest == snapshot_program(write_tree(tmp_path / "q", PROGRAM), MemoryObjects()).digest


def test_settling_never_sleeps_longer_than_the_window(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    for rel in PROGRAM:
        os.utime(root / rel, ns=(2**62, 2**62))  # the year 2116
    slept: list[float] = []
    base = time.time_ns()
    snap = snapshot_program(
        root,
        MemoryObjects(),
        settle_seconds=0.1,
        clock=lambda: base + int(sum(slept) * 1e9),
        sleep=slept.append,
    )
    assert snap.file_count == 2
    assert all(s <= 0.1 for s in slept)
    assert sum(slept) <= 2.0


def test_a_program_folder_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"policy.py": b"OUTSIDE = True\n"})
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "program").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SnapshotError, match="symbolic link"):
        snapshot_program(tmp_path / "ws" / "program", MemoryObjects())


def test_a_folder_on_the_way_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    outside = write_tree(tmp_path / "outside", {"program/policy.py": b"OUTSIDE = True\n"})
    write_tree(tmp_path / "ws" / "sub" / "program", PROGRAM)
    os.rename(tmp_path / "ws" / "sub", tmp_path / "ws" / "real")
    (tmp_path / "ws" / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SnapshotError, match="symbolic link"):
        snapshot_program(tmp_path / "ws" / "sub" / "program", MemoryObjects(), within=tmp_path / "ws")
    assert snapshot_program(tmp_path / "ws" / "real" / "program", MemoryObjects(), within=tmp_path / "ws")
    with pytest.raises(SnapshotError, match="outside"):
        snapshot_program(outside / "program", MemoryObjects(), within=tmp_path / "ws")


@pytest.mark.parametrize("swapped", [".", "lib"])
def test_a_folder_swapped_for_a_symlink_during_capture_is_refused(tmp_path: Path, swapped: str) -> None:
    """``lib/helpers.py`` is stored first; then the Program folder (or ``lib``) becomes a link to a look-alike."""
    root = write_tree(tmp_path / "ws" / "program", PROGRAM)
    look_alike = PROGRAM if swapped == "." else {"helpers.py": PROGRAM["lib/helpers.py"]}
    outside = write_tree(tmp_path / "outside", look_alike)

    def swap() -> None:
        folder = root if swapped == "." else root / swapped
        os.rename(folder, folder.with_name(folder.name + ".real"))
        folder.symlink_to(outside, target_is_directory=True)

    with pytest.raises(SnapshotError, match=r"changed during capture|symbolic link"):
        snapshot_program(root, MeddlingObjects(swap))


def test_a_program_nested_deeper_than_the_bound_is_refused_quickly(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", PROGRAM)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)
    try:
        with pytest.raises(SnapshotError, match="nested deeper"):
            snapshot_program(root, MemoryObjects())
    finally:
        _remove_chain(root, "d")


def _remove_chain(parent: Path, name: str) -> None:
    """Remove ``parent/name/name/...`` level by level (pytest's clean-up recurses and would fail)."""
    top, hold = parent / name, parent / ".hold"
    while top.is_dir():
        if (top / name).is_dir():
            os.rename(top / name, hold)
        for child in top.iterdir():
            child.unlink()
        top.rmdir()
        if hold.is_dir():
            os.rename(hold, top)
