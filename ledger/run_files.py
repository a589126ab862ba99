"""Opening the files of a run directory as hostile input: one name at a time, never through a link.

A run directory may come from someone else, so any of its entries may be a symbolic link (to a file
the user cares about, or to ``/dev/zero``), a fifo (which blocks a reader forever), a device or a
socket. Every file the tools open inside it goes through here:

* names are resolved relative to a folder descriptor, one component at a time, with ``O_NOFOLLOW``
  (a link is refused, never followed, at any depth);
* files are opened with ``O_NONBLOCK`` and checked with ``fstat`` to be regular files before a byte
  is read or written (a fifo, device or socket is refused without blocking);
* files are created with ``O_EXCL`` after removing what was in the way, so ``O_CREAT`` never
  truncates or writes the target of a planted link;
* reads are bounded.

What is refused raises :class:`~evoledger.ledger.errors.UnsafePathError`, naming the entry and what to
do. The run directory itself is the one the user named, so it may be reached through a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from evoledger.ledger.errors import IntegrityError, UnsafePathError

__all__ = [
    "DIR_OPEN_FLAGS",
    "EntryKind",
    "check_entry",
    "check_entry_kind",
    "describe_mode",
    "open_dir_at",
    "open_file_at",
    "open_root",
    "read_file_at",
    "unsafe_entry",
    "write_file_at",
]

DIR_OPEN_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS: Final = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_CHUNK: Final = 1 << 20

EntryKind = Literal["file", "dir", "socket"]


def describe_mode(mode: int) -> str:
    """What an entry is, in words (for messages)."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe (fifo)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def unsafe_entry(shown: Path | str, found: str, expected: str = "a regular file") -> UnsafePathError:
    """The error for an entry that is not what the tools may open."""
    error = UnsafePathError(
        f"{shown} is {found}, not {expected}: a run directory from elsewhere may use it to make evoledger read or "
        f"write outside the directory, so it is neither followed nor opened. Remove it (`rm {shown}`) or restore "
        "the Run from a trusted copy, then try again"
    )
    error.path = str(shown)
    return error


_EXPECTED: Final = {"file": "a regular file", "dir": "a folder", "socket": "a socket"}
_CHECKS: Final = {"file": stat.S_ISREG, "dir": stat.S_ISDIR, "socket": stat.S_ISSOCK}


def open_root(path: Path) -> int:
    """A descriptor of the run directory itself (the user named it, so a link to it is followed)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise unsafe_entry(path, "not a folder", "a run directory") from None


def check_entry(dir_fd: int, name: str, kind: EntryKind, shown: Path | str) -> bool:
    """Whether ``name`` exists below ``dir_fd``; :class:`UnsafePathError` when it is there but not a ``kind``."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return False
    if not _CHECKS[kind](mode):
        raise unsafe_entry(shown, describe_mode(mode), _EXPECTED[kind])
    return True


def open_dir_at(dir_fd: int, parts: Sequence[str], shown: Path, *, create: bool = False) -> int | None:
    """A descriptor of folder ``parts`` below ``dir_fd`` (``None`` when absent and not ``create``); links refused."""
    fd = os.dup(dir_fd)
    where = shown
    try:
        for part in parts:
            where = where / part
            try:
                child = os.open(part, DIR_OPEN_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = _open_existing_dir(fd, part, where)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise unsafe_entry(where, _found(fd, part), "a folder") from None
                raise
            os.close(fd)
            fd = child
        result, fd = fd, -1
        return result
    finally:
        if fd >= 0:
            os.close(fd)


def _open_existing_dir(fd: int, part: str, where: Path) -> int:
    try:
        return os.open(part, DIR_OPEN_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise unsafe_entry(where, _found(fd, part), "a folder") from None
        raise


def _found(dir_fd: int, name: str) -> str:
    try:
        return describe_mode(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return "not a folder"


def open_file_at(dir_fd: int, name: str, flags: int, shown: Path | str, mode: int = 0o644) -> int:
    """Open regular file ``name`` below ``dir_fd`` without following a link or blocking on a fifo.

    ``flags`` must not contain ``O_TRUNC`` together with ``O_CREAT`` on a file that may be planted: create
    new files with :func:`write_file_at` instead. Raises :class:`UnsafePathError` for a link, fifo,
    device, socket or folder, and ``FileNotFoundError`` when absent.
    """
    try:
        fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENODEV, errno.EOPNOTSUPP):
            raise unsafe_entry(shown, _found(dir_fd, name)) from None
        raise
    try:
        found = os.fstat(fd).st_mode
        if not stat.S_ISREG(found):
            raise unsafe_entry(shown, describe_mode(found))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file_at(dir_fd: int, name: str, shown: Path | str, *, limit: int) -> bytes | None:
    """At most ``limit`` bytes of regular file ``name`` (``None`` when absent); :class:`IntegrityError` if longer."""
    try:
        fd = open_file_at(dir_fd, name, os.O_RDONLY, shown)
    except FileNotFoundError:
        return None
    try:
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0 and (chunk := os.read(fd, min(remaining, _CHUNK))):
            chunks.append(chunk)
            remaining -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise IntegrityError(f"{shown} is larger than the {limit} bytes it may have; it was replaced or damaged")
    return data


def write_file_at(
    dir_fd: int, name: str, data: bytes, shown: Path | str, *, tmp: str | None = None, sync_folder: bool = True
) -> None:
    """Atomically replace ``name`` below ``dir_fd`` with ``data`` (fsynced), never writing through a link.

    The temporary file (``tmp``, by default ``.<name>.tmp``) is removed first if anything is there (a
    planted link is removed, its target untouched) and created with ``O_EXCL | O_NOFOLLOW``; the rename
    then replaces whatever ``name`` was (a link is replaced, not followed). A folder at ``name`` is refused.
    ``sync_folder`` also fsyncs the folder, so the rename itself survives a power loss.
    """
    tmp_name = tmp if tmp is not None else f".{name}.tmp"
    if check_entry_kind(dir_fd, name) == stat.S_IFDIR:
        raise unsafe_entry(shown, "a folder")
    _remove_non_folder(dir_fd, tmp_name, shown)
    fd = os.open(tmp_name, _CREATE_FLAGS, 0o644, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name, dir_fd=dir_fd)
        raise
    if sync_folder:
        os.fsync(dir_fd)


def check_entry_kind(dir_fd: int, name: str) -> int | None:
    """The ``S_IFMT`` bits of ``name`` below ``dir_fd`` without following a link (``None`` when absent)."""
    try:
        return stat.S_IFMT(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None


def _remove_non_folder(dir_fd: int, name: str, shown: Path | str) -> None:
    kind = check_entry_kind(dir_fd, name)
    if kind is None:
        return
    if kind == stat.S_IFDIR:
        raise unsafe_entry(f"{shown} (its temporary file {name})", "a folder")
    os.unlink(name, dir_fd=dir_fd)  # the entry itself (a link's target is untouched)
