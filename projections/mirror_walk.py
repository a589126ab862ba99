"""The mirror folder on disk, walked and changed only through folder descriptors: bounded, iterative, never following.

``workspace/feedback/`` sits in the Agent's workspace, so anything may be found there: folders nested
thousands deep, names whose full path is far beyond ``PATH_MAX``, fifos, sockets, devices, symbolic
links, unreadable folders, millions of files, and all of it changing while the Host looks. Everything
here therefore works relative to an open folder descriptor (``os.open(name, dir_fd=...)`` with
``O_NOFOLLOW | O_DIRECTORY``), one name at a time, so no path is ever resolved through a link and no
path is ever long; loops are iterative and every walk is bounded:

* :func:`walk` lists the tree below a folder, descending into at most :data:`MAX_DEPTH` levels of
  folders the caller does not expect, and listing at most ``max_entries`` names in all. What it cannot
  or will not look into (too deep, too many entries, unreadable, a name that is not UTF-8, a special
  file, a link) is reported as an :class:`Oddity` -- Agent-owned garbage, never an error.
* :func:`remove_entry` removes a file, link or whole folder below a folder descriptor. A folder is
  first renamed to a trash name directly under the mirror's root, and each of its sub-folders is
  renamed there too before its parent is removed, so removal needs two descriptors whatever the depth
  and holds at most :data:`_BATCH` names in memory.

Open folder descriptors: one per level of the path being walked (expected folders, plus at most
:data:`MAX_DEPTH`).
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

from evoledger.ledger.run_files import DIR_OPEN_FLAGS, describe_mode

__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "Entry",
    "Oddity",
    "Report",
    "WalkLimits",
    "is_trash",
    "open_child_dir",
    "remove_entry",
    "shown_name",
    "walk",
]

MAX_DEPTH: Final = 32
"""Folders the mirror does not expect are looked into this many levels deep at most (from the mirror root)."""

MAX_ENTRIES: Final = 100_000
"""Names listed by one walk beyond the mirror's own files and folders; past that a folder is reported whole."""

_BATCH: Final = 4096
_TRASH_PREFIX: Final = ".evoledger-trash-"
_trash_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class Oddity:
    """One entry the walk reports as Agent-owned garbage: its relative path (``.`` for the root) and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed entry: its folder's descriptor (valid while the walk is paused on it), name, path and mode."""

    parent_fd: int
    name: str
    path: str
    mode: int

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        return stat.S_ISREG(self.mode)


@dataclass(slots=True)
class WalkLimits:
    """The bounds of one walk, and the oddities it met."""

    max_depth: int = MAX_DEPTH
    max_entries: int = MAX_ENTRIES
    oddities: list[Oddity] = field(default_factory=list)
    listed: int = 0


def shown_name(name: str) -> str:
    """``name`` as printable UTF-8 (a name that is not UTF-8 on disk shows its bytes escaped)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    return name


def _kind(mode: int) -> str:
    return describe_mode(mode) + (" (never followed)" if stat.S_ISLNK(mode) else "")


def open_child_dir(parent_fd: int, name: str) -> int | None:
    """A descriptor of folder ``name`` in ``parent_fd`` (``None`` if absent, not a real folder, or unreadable)."""
    try:
        return os.open(name, DIR_OPEN_FLAGS, dir_fd=parent_fd)
    except OSError:
        return None


def _list(fd: int, limits: WalkLimits) -> list[tuple[str, int]] | None:
    """The ``(name, mode)`` of every entry of folder ``fd``, or ``None`` once the walk's entry bound is reached."""
    out: list[tuple[str, int]] = []
    with os.scandir(fd) as listing:
        for item in listing:
            if limits.listed >= limits.max_entries:
                return None
            limits.listed += 1
            try:
                mode = item.stat(follow_symlinks=False).st_mode
            except OSError:
                continue  # gone since it was listed
            out.append((item.name, mode))
    out.sort()
    return out


def walk(
    root_fd: int,
    limits: WalkLimits,
    *,
    expected: Callable[[str], bool] = lambda _: False,
    skipped: Callable[[str], bool] = lambda _: False,
) -> Iterator[Entry]:
    """Every entry below folder ``root_fd``, parents before children, siblings by name; links never followed.

    A folder is entered when ``expected(path)`` says the mirror owns it or while it is less than
    ``limits.max_depth`` levels deep, and never when ``skipped(path)``. Oddities (see the module
    docstring) are appended to ``limits.oddities``; an entry that is not a folder or a regular file is
    yielded *and* reported.
    A folder whose listing fails (unreadable, replaced meanwhile) or overflows the entry bound is reported
    with its path, and its listed entries are not yielded. The consumer may remove the entry it is handed
    (through ``parent_fd``) before resuming the walk.
    """
    root_listing = _safe_list(root_fd, ".", limits)
    if root_listing is None:
        return
    stack: list[tuple[int, str, int, Iterator[tuple[str, int]]]] = [(-1, "", 0, iter(root_listing))]
    try:
        while stack:
            fd, prefix, depth, items = stack[-1]
            parent = root_fd if fd < 0 else fd
            item = next(items, None)
            if item is None:
                stack.pop()
                if fd >= 0:
                    os.close(fd)
                continue
            name, mode = item
            path = prefix + shown_name(name)
            entry = Entry(parent, name, path, mode)
            if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
                limits.oddities.append(Oddity(path, _kind(mode)))
            elif path != prefix + name:
                limits.oddities.append(Oddity(path, "a name that is not UTF-8"))
            yield entry
            if not stat.S_ISDIR(mode) or skipped(path) or not _exists(parent, name):  # removed by the consumer?
                continue
            if not expected(path) and depth + 1 >= limits.max_depth:
                limits.oddities.append(Oddity(path, f"nested deeper than {limits.max_depth} folders"))
                continue
            child = open_child_dir(parent, name)
            if child is None:
                limits.oddities.append(Oddity(path, "a folder that cannot be opened"))
                continue
            listing = _safe_list(child, path, limits)
            if listing is None:
                os.close(child)
                continue
            stack.append((child, path + "/", depth + 1, iter(listing)))
    finally:
        for fd, *_rest in stack:
            if fd >= 0:
                os.close(fd)


def _exists(parent_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _safe_list(fd: int, path: str, limits: WalkLimits) -> list[tuple[str, int]] | None:
    try:
        listing = _list(fd, limits)
    except OSError as exc:
        limits.oddities.append(Oddity(path, f"a folder that cannot be listed ({exc.strerror})"))
        return None
    if listing is None:
        limits.oddities.append(Oddity(path, f"a folder past the walk's bound of {limits.max_entries} entries"))
    return listing


# -- removal ---------------------------------------------------------------------------------------------


def _trash_name() -> str:
    return f"{_TRASH_PREFIX}{os.getpid()}-{next(_trash_counter)}"


def is_trash(name: str) -> bool:
    """Whether ``name`` is a folder :func:`remove_entry` was emptying (a crash can leave one behind)."""
    return name.startswith(_TRASH_PREFIX)


Report = Callable[[str, str | None], None]
"""Told ``(path, None)`` for each non-folder entry removed, ``(path, why)`` for a folder removed unlisted."""


def remove_entry(parent_fd: int, name: str, root_fd: int, report: Report | None = None) -> bool:
    """Remove ``name`` in folder ``parent_fd`` without following links, however deep; whether it is gone.

    ``root_fd`` is the mirror's root, on the same file system, where folders are renamed while they are
    emptied. ``report`` hears the path (relative to ``parent_fd``) of each non-folder entry removed, down
    to :data:`MAX_DEPTH` levels; a folder deeper than that is reported once, with the reason.
    """
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=parent_fd)
            if report is not None:
                report(shown_name(name), None)
            return True
        trash = _trash_name()
        os.rename(name, trash, src_dir_fd=parent_fd, dst_dir_fd=root_fd)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return _empty_trash(root_fd, [(trash, shown_name(name) + "/", 1)], report)


def _empty_trash(root_fd: int, queue: list[tuple[str, str | None, int]], report: Report | None) -> bool:
    """Remove each trash folder of ``queue`` (name under ``root_fd``, the path it had, its depth).

    Sub-folders are renamed under ``root_fd`` (queued) before their parent is removed.
    """
    ok = True
    while queue:
        trash, shown, depth = queue.pop()
        fd = open_child_dir(root_fd, trash)
        if fd is None:
            ok = False
            continue
        try:
            for _attempt in range(1000):  # an Agent may keep adding entries while they are removed
                batch = _batch(fd)
                if not batch:
                    break
                for item_name, is_dir in batch:
                    path = None if shown is None else shown + shown_name(item_name)
                    try:
                        if is_dir:
                            sub = _trash_name()
                            os.rename(item_name, sub, src_dir_fd=fd, dst_dir_fd=root_fd)
                            if path is not None and depth >= MAX_DEPTH:
                                if report is not None:
                                    report(path, f"nested deeper than {MAX_DEPTH} folders (removed unlisted)")
                                path = None
                            queue.append((sub, None if path is None else path + "/", depth + 1))
                        else:
                            os.unlink(item_name, dir_fd=fd)
                            if report is not None and path is not None:
                                report(path, None)
                    except FileNotFoundError:
                        continue
        except OSError:
            ok = False
        finally:
            os.close(fd)
        try:
            os.rmdir(trash, dir_fd=root_fd)
        except OSError as exc:
            ok = ok and exc.errno == errno.ENOENT
    return ok


def _batch(fd: int) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    with os.scandir(fd) as listing:
        for item in listing:
            try:
                out.append((item.name, item.is_dir(follow_symlinks=False)))
            except OSError:
                continue
            if len(out) >= _BATCH:
                break
    return out
