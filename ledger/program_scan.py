"""Reading a Program folder safely: the scan, the stable read and the settle wait behind ``snapshot_program``.

The Program folder is opened once without following a link (from a trusted folder down, one name at a
time, when one is given) and held; every folder and file in it is opened relative to a descriptor with
``O_NOFOLLOW`` (``O_DIRECTORY`` for folders), so a folder swapped for a link during capture is never
followed: the open fails and capture is refused as "changed during capture". The scan is iterative and
refuses Programs nested deeper than :data:`MAX_PROGRAM_DEPTH` folders. Waiting for files to settle never
sleeps longer than the settle window, whatever the file times say.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple

from evoledger.ledger.errors import ConfigError, SnapshotError
from evoledger.ledger.events.base import check_program_path
from evoledger.ledger.run_files import DIR_OPEN_FLAGS, describe_mode

__all__ = [
    "MAX_PROGRAM_DEPTH",
    "FileState",
    "SnapshotLimits",
    "changed_error",
    "open_program",
    "read_stable",
    "same_folder",
    "scan",
    "settled_scan",
]

_MIB: Final = 1024 * 1024
_SKIPPED_DIRS: Final = frozenset({"__pycache__", ".git"})
_SKIPPED_FILES: Final = frozenset({".DS_Store"})
_SKIPPED_SUFFIXES: Final = (".pyc",)
_OPEN_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
MAX_PROGRAM_DEPTH: Final = 64
"""Folders a Program may nest (deeper Programs are refused)."""


@dataclass(frozen=True, slots=True)
class SnapshotLimits:
    """Bounds on what one Program may hold."""

    max_files: int = 1000
    max_file_bytes: int = 10 * _MIB
    max_total_bytes: int = 50 * _MIB

    def __post_init__(self) -> None:
        for name in ("max_files", "max_file_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"SnapshotLimits.{name} must be a positive integer, got {value!r}")


class FileState(NamedTuple):
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    mode: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileState:
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)


def changed_error(root: Path, rel: str) -> SnapshotError:
    return SnapshotError(
        f"{rel!r} in {root} changed during capture; stop whatever is writing to the Program directory and retry"
    )


def _skipped(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in _SKIPPED_DIRS
    return name in _SKIPPED_FILES or name.endswith(_SKIPPED_SUFFIXES)


def open_dir(base_fd: int, parts: list[str]) -> int:
    """A descriptor of folder ``parts`` below ``base_fd``, each step opened without following links."""
    fd = os.dup(base_fd)
    for part in parts:
        try:
            child = os.open(part, DIR_OPEN_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def _is_link(base_fd: int, parts: list[str]) -> bool:
    """Whether the first of ``parts`` that is not a real folder below ``base_fd`` is a symbolic link."""
    fd = os.dup(base_fd)
    try:
        for part in parts:
            try:
                mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                return False
            if not stat.S_ISDIR(mode):
                return stat.S_ISLNK(mode)
            child = os.open(part, DIR_OPEN_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        return False
    except OSError:
        return False
    finally:
        os.close(fd)


def _open_failure(root: Path, rel: str, exc: OSError) -> SnapshotError:
    if exc.errno in (errno.ELOOP, errno.ENOENT, errno.ENOTDIR):  # replaced by a link, or gone, since the scan
        return changed_error(root, rel)
    return SnapshotError(f"cannot read {rel!r} in {root}: {exc.strerror}; fix its permissions")


def scan(root_fd: int, root: Path, limits: SnapshotLimits) -> dict[str, FileState]:
    """Every capturable file under ``root`` with its ``lstat`` state, enforcing the rules and limits.

    Iterative, and every folder is opened relative to the held Program folder without following links.
    """
    found: dict[str, FileState] = {}
    total = 0
    pending = [""]
    while pending:
        prefix = pending.pop()
        parts = prefix.split("/")[:-1]
        try:
            fd = open_dir(root_fd, parts)
        except OSError as exc:
            raise _open_failure(root, prefix.rstrip("/"), exc) from None
        try:
            with os.scandir(fd) as listing:
                entries = sorted(((e, _lstat_entry(root, prefix, e)) for e in listing), key=lambda p: p[0].name)
        except OSError as exc:
            folder = prefix or "."
            raise SnapshotError(f"cannot list {folder!r} in {root}: {exc.strerror}; fix its permissions") from None
        finally:
            os.close(fd)
        for entry, st in entries:
            rel = prefix + entry.name
            problem = check_program_path(rel)
            if problem is not None:
                shown = os.fsencode(rel) if "UTF-8" in problem else rel
                raise SnapshotError(f"cannot snapshot {shown!r} in {root}: {problem}")
            is_dir = stat.S_ISDIR(st.st_mode)
            if _skipped(entry.name, is_dir):
                continue
            if stat.S_ISLNK(st.st_mode):
                raise SnapshotError(
                    f"{rel!r} in {root} is a symbolic link; Programs may not contain links. "
                    "Replace it with a copy of what it points to"
                )
            if is_dir:
                if len(parts) + 1 >= MAX_PROGRAM_DEPTH:
                    raise SnapshotError(
                        f"{rel!r} in {root} is nested deeper than {MAX_PROGRAM_DEPTH} folders; flatten the Program"
                    )
                pending.append(rel + "/")
                continue
            if not stat.S_ISREG(st.st_mode):
                raise SnapshotError(
                    f"{rel!r} in {root} is {describe_mode(st.st_mode)}, not a regular file; "
                    "remove it from the Program directory"
                )
            if len(found) >= limits.max_files:
                raise SnapshotError(
                    f"{root} holds more than {limits.max_files} files (reached at {rel!r}); remove files "
                    "or raise SnapshotLimits.max_files"
                )
            if st.st_size > limits.max_file_bytes:
                raise SnapshotError(
                    f"{rel!r} in {root} is {st.st_size} bytes, over the {limits.max_file_bytes}-byte limit "
                    "per file; shrink it or raise SnapshotLimits.max_file_bytes"
                )
            total += st.st_size
            if total > limits.max_total_bytes:
                raise SnapshotError(
                    f"the Program in {root} exceeds {limits.max_total_bytes} bytes in total (reached at "
                    f"{rel!r}); remove large files or raise SnapshotLimits.max_total_bytes"
                )
            found[rel] = FileState.of(st)
    return found


def _lstat_entry(root: Path, prefix: str, entry: os.DirEntry[str]) -> os.stat_result:
    try:
        return entry.stat(follow_symlinks=False)
    except FileNotFoundError:
        raise changed_error(root, prefix + entry.name) from None


def read_stable(root_fd: int, root: Path, rel: str, expected: FileState) -> bytes:
    """The bytes of ``rel``, provided the file read is the very file that was scanned, unchanged."""
    parts = rel.split("/")
    try:
        folder = open_dir(root_fd, parts[:-1])
        try:
            fd = os.open(parts[-1], _OPEN_FLAGS, dir_fd=folder)
        finally:
            os.close(folder)
    except OSError as exc:
        raise _open_failure(root, rel, exc) from None
    try:
        if FileState.of(os.fstat(fd)) != expected:
            raise changed_error(root, rel)
        chunks: list[bytes] = []
        remaining = expected.size + 1  # one byte more reveals growth
        while remaining > 0:
            chunk = os.read(fd, min(remaining, _MIB))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) != expected.size:
        raise changed_error(root, rel)
    return data


_SETTLE_ATTEMPTS = 20


def settled_scan(
    root_fd: int,
    root: Path,
    limits: SnapshotLimits,
    settle_seconds: float,
    clock: Callable[[], int],
    sleep: Callable[[float], None],
) -> dict[str, FileState]:
    """Scan until no file's status changed within ``settle_seconds`` of now, sleeping at most that long each time.

    Only the status-change time (``ctime``) is used: the kernel sets it on every write and no process can set
    it, unlike ``mtime`` (``os.utime`` may put it in the future). A ``ctime`` ahead of the clock (a clock step)
    is never waited for either: the final re-scan still compares every file's full status.
    """
    state = scan(root_fd, root, limits)
    if settle_seconds <= 0:
        return state
    window = int(settle_seconds * 1e9)
    for _ in range(_SETTLE_ATTEMPTS):
        now = clock()
        newest = max((f.ctime_ns for f in state.values() if f.ctime_ns <= now), default=0)
        wait = newest + window - now
        if wait <= 0:
            return state
        sleep(min(wait, window) / 1e9)
        state = scan(root_fd, root, limits)
    raise SnapshotError(
        f"files in {root} changed during capture and kept changing for {_SETTLE_ATTEMPTS} settle windows of "
        f"{settle_seconds} s; finish writing the Program before submitting it"
    )


def open_program(directory: Path, within: Path | None, entry_point: str) -> int:
    """A descriptor of the Program folder, opened from ``within`` (or as given) one name at a time, no links."""
    not_dir = f"{directory} is not a directory; pass the Program directory (it holds {entry_point})"
    parts: list[str] = []
    start = directory
    if within is not None:
        try:
            parts = list(directory.relative_to(within).parts)
        except ValueError:
            raise SnapshotError(f"{directory} is outside {within}; submit a Program folder inside it") from None
        start = within
    try:
        base = os.open(start, DIR_OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(start):
            raise SnapshotError(f"{start} is a symbolic link; pass the real Program directory") from None
        raise SnapshotError(not_dir) from None
    try:
        return open_dir(base, parts)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(base, parts):
            raise SnapshotError(
                f"a folder on the way to {directory} is a symbolic link; Programs may not be reached through links"
            ) from None
        raise SnapshotError(not_dir) from None
    finally:
        os.close(base)


def same_folder(directory: Path, root_fd: int) -> bool:
    """Whether ``directory`` still names the folder held open as ``root_fd`` (not a link or another folder)."""
    try:
        named = os.lstat(directory)
    except OSError:
        return False
    held = os.fstat(root_fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)
