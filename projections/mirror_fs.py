"""Changing the mirror folder through folder descriptors: open, create, write atomically, prune, hash.

The primitives :mod:`evoledger.projections.mirror_files` syncs with. Like :mod:`~evoledger.projections.mirror_walk`
they take a descriptor of the mirror's root and resolve one name at a time with ``O_NOFOLLOW | O_DIRECTORY``, so
nothing is reached through a link and no long path is ever built. Whatever is in the way of a mirror file or
folder (a file, a link, a fifo, an unreadable folder) is removed, never followed; a folder whose mode the Agent
changed is made writable by its owner again.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import InputError
from evoledger.ledger.run_files import DIR_OPEN_FLAGS
from evoledger.projections.mirror_walk import Entry, Report, open_child_dir, remove_entry

__all__ = [
    "empty_root",
    "hash_file",
    "open_folder",
    "open_root",
    "own",
    "own_child",
    "prune_empty_parents",
    "read_exactly",
    "write_file",
]

_TMP_SUFFIX: Final = ".evoledger-tmp"
_CHUNK: Final = 1 << 20


def own(fd: int) -> None:
    """Make a folder of the mirror writable by the Host again (the Agent may have changed its mode)."""
    mode = os.fstat(fd).st_mode
    if mode & 0o700 != 0o700:
        os.fchmod(fd, stat.S_IMODE(mode) | 0o700)


def open_folder(root_fd: int, parts: list[str], *, create: bool) -> int | None:
    """A descriptor of folder ``parts`` below ``root_fd``; ``create`` replaces whatever is not a real folder there."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            child = open_child_dir(fd, part)
            if child is None:
                if not create:
                    return None
                remove_entry(fd, part, root_fd)  # a file, link or unreadable folder in the way: never followed
                os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, DIR_OPEN_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            if create:
                own(fd)
        result, fd = fd, -1
        return result
    finally:
        if fd >= 0:
            os.close(fd)


def write_file(root_fd: int, parts: list[str], data: bytes) -> None:
    """Write ``data`` atomically at ``parts`` below ``root_fd`` (a temporary file, then a rename); folders made."""
    folder = open_folder(root_fd, parts[:-1], create=True)
    assert folder is not None  # created
    try:
        name = parts[-1]
        remove_entry(folder, name, root_fd) if _is_dir_at(folder, name) else None
        tmp = f".{name[:64]}{_TMP_SUFFIX}"
        remove_entry(folder, tmp, root_fd)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)


def _is_dir_at(folder: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def prune_empty_parents(root_fd: int, parts: list[str]) -> None:
    """Remove the folders of ``parts`` that are left empty, deepest first."""
    for depth in range(len(parts) - 1, 0, -1):
        parent = open_folder(root_fd, parts[: depth - 1], create=False)
        if parent is None:
            return
        try:
            os.rmdir(parts[depth - 1], dir_fd=parent)
        except OSError:
            return  # not empty (or already gone): stop climbing
        finally:
            os.close(parent)


def hash_file(fd: int) -> str:
    hasher = hashlib.sha256()
    while chunk := os.read(fd, _CHUNK):
        hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def read_exactly(fd: int, size: int) -> bytes:
    """At most ``size + 1`` bytes of the file (one more than expected reveals a longer file)."""
    chunks: list[bytes] = []
    remaining = size + 1
    while remaining > 0 and (chunk := os.read(fd, min(remaining, _CHUNK))):
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def open_root(target: Path, *, create: bool) -> int | None:
    """A descriptor of the mirror folder (``None`` when absent, or a link when not creating)."""
    for _attempt in range(5):  # the Agent may swap the folder while the Host opens it
        try:
            st: os.stat_result | None = target.lstat()
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            if not create:
                return None
            target.unlink()  # the link itself, never what it points to; the mirror is rebuilt below
            continue
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise InputError(f"mirror target {target} exists and is not a folder; remove it or pick another path")
        if st is None:
            if not create:
                return None
            target.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(target, DIR_OPEN_FLAGS)
        except (FileNotFoundError, NotADirectoryError, OSError) as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                raise
            continue
        if create:
            own(fd)
        return fd
    raise InputError(f"mirror target {target} kept being replaced while the Host opened it; stop replacing it")


def own_child(entry: Entry) -> None:
    fd = open_child_dir(entry.parent_fd, entry.name)
    if fd is not None:
        try:
            own(fd)
        finally:
            os.close(fd)


def empty_root(root_fd: int, report: Report) -> None:
    """Remove everything in the mirror folder (its listing overflowed the walk's bound)."""
    for _attempt in range(1000):
        with os.scandir(root_fd) as listing:
            names = [item.name for _, item in zip(range(4096), listing, strict=False)]
        if not names:
            return
        for name in names:
            remove_entry(root_fd, name, root_fd, report)
