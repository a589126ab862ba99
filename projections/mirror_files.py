"""Rendering the Agent mirror and bringing a directory in line with it.

:func:`sync_mirror` writes a :class:`~evoledger.projections.mirror.MirrorState` into ``target``
(``workspace/feedback/``): each file atomically (a temporary file in the same folder, then a
rename), only the files that changed since ``previous``, and it deletes files that left the tree.
Without ``previous`` it reconciles with what is on disk: files whose bytes already match are left
alone and every file the tree does not name is removed, so deleting the folder and syncing a fresh
fold rebuilds it byte for byte. It never writes or deletes outside ``target``: every file and folder is
opened relative to its folder's descriptor without following links (``projections.mirror_walk``), so a
symlink inside the folder is replaced, never followed, and folders nested thousands deep, names past
``PATH_MAX``, fifos or millions of files are Agent-owned garbage that is reported and removed, never a
Host error. Files are not fsynced -- the mirror is rebuildable, and a full sync after a crash repairs it.

:func:`diff_mirror` lists the files that differ on disk (``missing``, ``extra``, ``changed``);
``evoledger replay`` uses it as the mirror's projection check. Object files are compared by digest,
so checking a large mirror reads it once and fetches no Object bytes (and a huge file is hashed in chunks,
never held in memory); JSON files are rendered with
orjson when that is provably byte-identical to :func:`pretty_json` (:func:`_rendered_fast`).

JSON files are pretty-printed: two-space indent, sorted keys, UTF-8, and a trailing newline.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import orjson
from evoledger.ledger.canonical import parse_canonical
from evoledger.ledger.errors import EncodingError, InputError, IntegrityError
from evoledger.projections.mirror import FileSource, InlineFile, JsonFile, MirrorState, ObjectFile
from evoledger.projections.mirror_fs import (
    empty_root,
    hash_file,
    open_folder,
    open_root,
    own_child,
    prune_empty_parents,
    read_exactly,
    write_file,
)
from evoledger.projections.mirror_walk import MAX_ENTRIES, Entry, WalkLimits, remove_entry, shown_name, walk

__all__ = [
    "Difference",
    "ObjectSource",
    "SyncReport",
    "diff_mirror",
    "pretty_json",
    "render_file",
    "sync_mirror",
]

_TMP_SUFFIX: Final = ".evoledger-tmp"
_CHUNK: Final = 1 << 20
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_MAX_REPORTED: Final = 10_000


class ObjectSource(Protocol):
    """Where Object bytes come from at write time (``Ledger.objects`` is one)."""

    def get(self, digest: str) -> bytes:
        """The raw bytes of Object ``digest``."""
        ...


@dataclass(frozen=True, slots=True)
class Difference:
    """One mirror file that differs on disk from the projection."""

    path: str
    problem: Literal["missing", "extra", "changed"]


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What :func:`sync_mirror` did: paths written and deleted (sorted), files left as they were.

    ``deleted`` lists at most 10,000 paths; ``garbage`` holds ``(path, why)`` for each odd entry met
    (a special file, a link, a folder too deep, unreadable or past the entry bound), all removed.
    """

    written: tuple[str, ...]
    deleted: tuple[str, ...]
    unchanged: int
    bytes_written: int
    garbage: tuple[tuple[str, str], ...] = ()


def pretty_json(value: Any) -> bytes:
    """The mirror's JSON rendering: indented, sorted keys, UTF-8, finite numbers, trailing newline."""
    try:
        text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise EncodingError(f"cannot render a mirror JSON file: {exc}; use JSON types with finite numbers") from None
    return (text + "\n").encode("utf-8")


def _object_json(objects: ObjectSource, digest: str, key: str) -> Any:
    data = objects.get(digest)
    try:
        return parse_canonical(data)
    except EncodingError as exc:
        raise IntegrityError(
            f"Object {digest} embedded as {key!r} of a mirror file is not JSON ({exc}); "
            "the record's Feedback content must be a JSON Object"
        ) from None


def render_file(source: FileSource, objects: ObjectSource) -> bytes:
    """The bytes of one mirror file (Objects are fetched from ``objects``)."""
    if isinstance(source, InlineFile):
        return source.data
    if isinstance(source, ObjectFile):
        return objects.get(source.digest)
    document = parse_canonical(source.document)
    for key, digest in source.embeds:
        document[key] = _object_json(objects, digest, key)
    for key, items in source.lists:
        document[key] = [parse_canonical(items[i]) for i in range(len(items))]
    return pretty_json(document)


# -- paths inside the target (all through folder descriptors, see projections.mirror_walk) -----------------


def _parts(path: str) -> list[str]:
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or "\x00" in path or any(p in ("", ".", "..") for p in parts):
        raise InputError(
            f"mirror path {path!r} is not a normalised relative path; build mirror states with projections.mirror"
        )
    return parts


def _folders_of(paths: Iterable[str]) -> set[str]:
    folders: set[str] = set()
    for path in paths:
        parts = _parts(path)
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return folders


def _compare(
    source: FileSource, folder: int, name: str, objects: ObjectSource, *, fast: bool
) -> tuple[bool, bytes | None]:
    """Whether regular file ``name`` in ``folder`` holds ``source``, and the bytes rendered to decide it (if any).

    Memory stays bounded by the rendered file, whatever the Agent left on disk: Object files are hashed
    in chunks, other files are compared with their rendering after comparing sizes.
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=folder)
    except OSError:  # a link (ELOOP), unreadable, or gone since it was listed
        return False, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False, None
        if isinstance(source, ObjectFile):
            return hash_file(fd) == source.digest, None
        rendered = _rendered_fast(source, objects) if fast and isinstance(source, JsonFile) else None
        if rendered is None:
            rendered = render_file(source, objects)
        if st.st_size != len(rendered):
            return False, rendered
        return read_exactly(fd, len(rendered)) == rendered, rendered
    except OSError:
        return False, None
    finally:
        os.close(fd)


# -- public operations ----------------------------------------------------------------------------------


class _Reporter:
    """Collects removed paths up to a bound, and folders removed unlisted."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.garbage: list[tuple[str, str]] = []
        self.more = 0

    def removed(self, path: str, why: str | None = None) -> None:
        if why is not None:
            if len(self.garbage) < _MAX_REPORTED:
                self.garbage.append((path, why))
        elif len(self.deleted) < _MAX_REPORTED:
            self.deleted.append(path)
        else:
            self.more += 1

    def under(self, prefix: str) -> Callable[[str, str | None], None]:
        return lambda path, why: self.removed(prefix + path, why)


def _parent_path(entry: Entry) -> str:
    return entry.path[: len(entry.path) - len(shown_name(entry.name))]


def _full_sync(
    state: MirrorState, root_fd: int, objects: ObjectSource, limits: WalkLimits, reporter: _Reporter
) -> tuple[list[tuple[str, FileSource, bytes | None]], int]:
    """Remove whatever the tree does not name, compare the rest; the files to write and how many matched."""
    folders = _folders_of(state.files)
    matched: set[str] = set()
    rendered: dict[str, bytes] = {}
    for entry in walk(root_fd, limits, expected=folders.__contains__):
        source = state.files.get(entry.path)
        if entry.is_dir and entry.path in folders:
            own_child(entry)
            continue
        if source is not None and entry.is_file:
            same, data = _compare(source, entry.parent_fd, entry.name, objects, fast=False)
            if same:
                matched.add(entry.path)
            elif data is not None:
                rendered[entry.path] = data
            continue  # a differing file is replaced by the atomic rename of its new bytes
        remove_entry(entry.parent_fd, entry.name, root_fd, reporter.under(_parent_path(entry)))
    for odd in list(limits.oddities):
        if odd.path == ".":
            empty_root(root_fd, reporter.under(""))
            matched.clear()
        elif odd.path in folders:  # a folder of the mirror that could not be listed: replaced as a whole
            parts = odd.path.split("/")
            parent = open_folder(root_fd, parts[:-1], create=False)
            if parent is not None:
                try:
                    remove_entry(parent, parts[-1], root_fd, reporter.under(odd.path[: -len(parts[-1])]))
                finally:
                    os.close(parent)
            matched = {rel for rel in matched if not rel.startswith(odd.path + "/")}
    pending = [(rel, source, rendered.get(rel)) for rel, source in state.files.items() if rel not in matched]
    return pending, len(matched)


def sync_mirror(
    state: MirrorState,
    target: Path,
    objects: ObjectSource,
    *,
    previous: MirrorState | None = None,
    max_entries: int = MAX_ENTRIES,
) -> SyncReport:
    """Bring folder ``target`` in line with ``state``; see the module docstring.

    ``previous`` must be the state last synced into ``target`` (pass ``None`` when unsure, e.g. when
    a Host starts or resumes: that reconciles with whatever is on disk). Agent-owned garbage found on
    the way (see :mod:`evoledger.projections.mirror_walk`) is removed and listed in ``garbage``;
    ``max_entries`` bounds the names listed beyond the mirror's own.
    """
    target = Path(target)
    root_fd = open_root(target, create=True)
    assert root_fd is not None  # created
    reporter = _Reporter()
    limits = WalkLimits(max_entries=max_entries + 2 * len(state.files))
    try:
        if previous is None:
            pending, unchanged = _full_sync(state, root_fd, objects, limits, reporter)
        else:
            pending, unchanged = [], 0
            for rel in previous.files:
                if rel not in state.files:
                    parts = _parts(rel)
                    folder = open_folder(root_fd, parts[:-1], create=False)
                    if folder is not None:  # a folder on the way was replaced by a link or a file: not followed
                        try:
                            remove_entry(folder, parts[-1], root_fd)
                        finally:
                            os.close(folder)
                        prune_empty_parents(root_fd, parts)
                    reporter.removed(rel)
            for rel, source in state.files.items():
                if previous.files.get(rel) == source:
                    unchanged += 1
                else:
                    pending.append((rel, source, None))
        written: list[str] = []
        bytes_written = 0
        for rel, source, rendered in sorted(pending, key=lambda p: p[0]):
            data = rendered if rendered is not None else render_file(source, objects)
            write_file(root_fd, _parts(rel), data)
            written.append(rel)
            bytes_written += len(data)
    finally:
        os.close(root_fd)
    garbage = [(odd.path, odd.reason) for odd in limits.oddities] + reporter.garbage
    if reporter.more:
        garbage.append((".", f"{reporter.more} more removed entries are not listed"))
    return SyncReport(
        written=tuple(written),
        deleted=tuple(sorted(reporter.deleted)),
        unchanged=unchanged,
        bytes_written=bytes_written,
        garbage=tuple(garbage),
    )


class _NotFast(Exception):
    """A value :func:`_rendered_fast` cannot vouch for (the exact renderer decides)."""


def _vouched_float(text: str) -> float:
    value = float(text)
    shown = repr(value)
    if "e" in shown or "n" in shown:  # exponent notation, inf or nan: orjson writes these differently
        raise _NotFast
    return value


def _no_constant(name: str) -> Any:
    raise _NotFast


def _fast_loads(data: bytes) -> Any:
    return json.loads(data, parse_float=_vouched_float, parse_constant=_no_constant)


def _rendered_fast(source: JsonFile, objects: ObjectSource) -> bytes | None:
    """:func:`render_file` of ``source`` by orjson, or ``None`` when it might differ (or fail).

    The value is parsed as :func:`render_file` parses it (Python's JSON reader), only refusing float
    literals whose ``repr`` uses an exponent (or is not finite) -- for every other float orjson's
    shortest form is ``repr``. orjson refuses integers beyond 64 bits and lone surrogates; its
    indented, key-sorted layout and string escapes equal ``json.dumps(indent=2, sort_keys=True,
    ensure_ascii=False)`` (a property-based test compares the two renderers).
    """
    try:
        document = _fast_loads(source.document)
        for key, digest in source.embeds:
            document[key] = _fast_loads(objects.get(digest))
        for key, items in source.lists:
            document[key] = [_fast_loads(items[i]) for i in range(len(items))]
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    except Exception:  # anything unusual: the exact renderer decides, and raises what it raises
        return None


def diff_mirror(
    state: MirrorState, target: Path, objects: ObjectSource, *, max_entries: int = MAX_ENTRIES
) -> list[Difference]:
    """The files of ``target`` that differ from ``state``, sorted by path (empty when they agree).

    Agent-owned garbage (see :mod:`evoledger.projections.mirror_walk`) is an ``extra`` entry; a folder the
    walk does not look into (too deep, past ``max_entries`` names, unreadable) is one ``extra`` entry.
    """
    target = Path(target)
    for rel in state.files:
        _parts(rel)  # refuses a path that is not normalised
    try:
        st = target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return sorted((Difference(rel, "missing") for rel in state.files), key=lambda d: d.path)
    if stat.S_ISLNK(st.st_mode):
        return [Difference(".", "changed")]  # the folder itself was replaced by a link: never followed
    try:
        root_fd = open_root(target, create=False)
    except InputError:
        raise
    if root_fd is None:
        return [Difference(".", "changed")]
    folders = _folders_of(state.files)
    limits = WalkLimits(max_entries=max_entries + 2 * len(state.files))
    found: dict[str, Difference | None] = {}
    others: set[str] = set()
    try:
        for entry in walk(root_fd, limits, expected=folders.__contains__, skipped=state.files.__contains__):
            source = state.files.get(entry.path)
            if source is None:
                if not entry.is_dir:
                    others.add(entry.path)
                continue
            same = entry.is_file and _compare(source, entry.parent_fd, entry.name, objects, fast=True)[0]
            found[entry.path] = None if same else Difference(entry.path, "changed")
        out: dict[str, Difference] = {}
        for rel, source in state.files.items():
            if rel not in found:  # in a folder the walk did not list (past the bound, unreadable) or absent
                found[rel] = _check_unlisted(root_fd, rel, source, objects)
            if (difference := found[rel]) is not None:
                out[rel] = difference
    finally:
        os.close(root_fd)
    for rel in others:
        out[rel] = Difference(rel, "extra")
    for odd in limits.oddities:  # a folder the walk did not look into holds entries no Event put there
        if odd.path not in out and odd.path not in state.files:
            out[odd.path] = Difference(odd.path, "extra")
    return sorted(out.values(), key=lambda d: d.path)


def _check_unlisted(root_fd: int, rel: str, source: FileSource, objects: ObjectSource) -> Difference | None:
    parts = _parts(rel)
    folder = open_folder(root_fd, parts[:-1], create=False)
    if folder is None:
        return Difference(rel, "missing")
    try:
        try:
            os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except OSError:
            return Difference(rel, "missing")
        same = _compare(source, folder, parts[-1], objects, fast=True)[0]
    finally:
        os.close(folder)
    return None if same else Difference(rel, "changed")
