"""Rendering the Agent mirror and bringing a directory in line with it.

:func:`sync_mirror` writes a :class:`~evoledger.projections.mirror.MirrorState` into ``target``
(``workspace/feedback/``): each file atomically (a temporary file in the same folder, then a
rename), only the files that changed since ``previous``, and it deletes files that left the tree.
Without ``previous`` it reconciles with what is on disk: files whose bytes already match are left
alone and every file the tree does not name is removed, so deleting the folder and syncing a fresh
fold rebuilds it byte for byte. It never writes or deletes outside ``target``: a symlink inside the
folder is replaced, never followed. Files are not fsynced -- the mirror is rebuildable, and a full
sync after a crash repairs it.

:func:`diff_mirror` lists the files that differ on disk (``missing``, ``extra``, ``changed``);
``evoledger replay`` uses it as the mirror's projection check. Object files are compared by digest,
so checking a large mirror reads it once and fetches no Object bytes; JSON files are rendered with
orjson when that is provably byte-identical to :func:`pretty_json` (:func:`_rendered_fast`).

JSON files are pretty-printed: two-space indent, sorted keys, UTF-8, and a trailing newline.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import orjson
from evoledger.ledger.canonical import digest_of, parse_canonical
from evoledger.ledger.errors import EncodingError, InputError, IntegrityError
from evoledger.projections.mirror import FileSource, InlineFile, JsonFile, MirrorState, ObjectFile

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
    """What :func:`sync_mirror` did: paths written and deleted (sorted), files left as they were."""

    written: tuple[str, ...]
    deleted: tuple[str, ...]
    unchanged: int
    bytes_written: int


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


# -- paths inside the target ----------------------------------------------------------------------------


def _parts(path: str) -> list[str]:
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or "\x00" in path or any(p in ("", ".", "..") for p in parts):
        raise InputError(
            f"mirror path {path!r} is not a normalised relative path; build mirror states with projections.mirror"
        )
    return parts


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _locate(target: Path, rel: str) -> Path | None:
    """``target/rel`` if every folder on the way is a real folder inside ``target`` (else ``None``)."""
    parts = _parts(rel)
    current = target
    for part in parts[:-1]:
        current = current / part
        st = _lstat(current)
        if st is None or not stat.S_ISDIR(st.st_mode):
            return None
    return current / parts[-1]


def _remove(path: Path) -> None:
    """Remove whatever is at ``path`` without following symlinks."""
    st = _lstat(path)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def _parent_dir(target: Path, parts: list[str]) -> Path:
    """The real directory for a file at ``parts``, created as needed; symlinks and files in the way are removed."""
    current = target
    for part in parts[:-1]:
        current = current / part
        st = _lstat(current)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            current.unlink()  # a symlink or a file where a folder belongs: never follow it
            st = None
        if st is None:
            current.mkdir()
    return current


def _write(target: Path, rel: str, data: bytes) -> None:
    parts = _parts(rel)
    folder = _parent_dir(target, parts)
    final = folder / parts[-1]
    st = _lstat(final)
    if st is not None and stat.S_ISDIR(st.st_mode):
        shutil.rmtree(final)
    tmp = folder / f".{parts[-1][:64]}{_TMP_SUFFIX}"
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, final)


def _prune_empty_parents(target: Path, rel: str) -> None:
    parts = _parts(rel)
    for depth in range(len(parts) - 1, 0, -1):
        folder = target.joinpath(*parts[:depth])
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (or already gone): stop climbing


def _read_regular(path: Path | None) -> bytes | None:
    """The bytes of a regular file at ``path`` (``None`` if absent, a symlink, a folder, ...)."""
    if path is None:
        return None
    st = _lstat(path)
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    return path.read_bytes()


def _walk(target: Path, prefix: str = "") -> Iterator[str]:
    """Every non-folder entry under ``target`` (files, symlinks, ...) as a relative path; symlinks not followed."""
    try:
        entries = sorted(os.scandir(target), key=lambda e: e.name)
    except FileNotFoundError:
        return
    for entry in entries:
        rel = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), rel + "/")
        else:
            yield rel


def _prune_empty_folders(target: Path) -> None:
    for root, _dirs, _files in os.walk(target, topdown=False):  # children before parents; links not followed
        if Path(root) != target:
            try:
                Path(root).rmdir()
            except OSError:
                continue


def _matches(source: FileSource, on_disk: bytes | None, objects: ObjectSource) -> tuple[bool, bytes | None]:
    """Whether the file on disk already holds ``source``, and the rendered bytes if they had to be rendered."""
    if on_disk is None:
        return False, None
    if isinstance(source, ObjectFile):
        return digest_of(on_disk) == source.digest, None
    data = render_file(source, objects)
    return data == on_disk, data


def _is_link(path: Path) -> bool:
    st = _lstat(path)
    return st is not None and stat.S_ISLNK(st.st_mode)


def _check_target(target: Path) -> None:
    if _lstat(target) is not None and not target.is_dir():
        raise InputError(f"mirror target {target} exists and is not a folder; remove it or pick another path")


# -- public operations ----------------------------------------------------------------------------------


def sync_mirror(
    state: MirrorState, target: Path, objects: ObjectSource, *, previous: MirrorState | None = None
) -> SyncReport:
    """Bring folder ``target`` in line with ``state``; see the module docstring.

    ``previous`` must be the state last synced into ``target`` (pass ``None`` when unsure, e.g. when
    a Host starts or resumes: that reconciles with whatever is on disk).
    """
    target = Path(target)
    if _is_link(target):
        target.unlink()  # the link itself, never what it points to; the mirror is rebuilt below
        previous = None
    _check_target(target)
    target.mkdir(parents=True, exist_ok=True)
    deleted: list[str] = []
    pending: list[tuple[str, FileSource, bytes | None]] = []
    unchanged = 0
    if previous is None:
        for rel in _walk(target):
            if rel not in state.files:
                (target / rel).unlink()
                deleted.append(rel)
        _prune_empty_folders(target)
        for rel, source in state.files.items():
            same, rendered = _matches(source, _read_regular(_locate(target, rel)), objects)
            if same:
                unchanged += 1
            else:
                pending.append((rel, source, rendered))
    else:
        for rel in previous.files:
            if rel not in state.files:
                path = _locate(target, rel)
                if path is not None:  # a folder on the way was replaced by a link or a file: not ours to follow
                    _remove(path)
                    _prune_empty_parents(target, rel)
                deleted.append(rel)
        for rel, source in state.files.items():
            if previous.files.get(rel) == source:
                unchanged += 1
            else:
                pending.append((rel, source, None))
    written: list[str] = []
    bytes_written = 0
    for rel, source, rendered in sorted(pending, key=lambda p: p[0]):
        data = rendered if rendered is not None else render_file(source, objects)
        _write(target, rel, data)
        written.append(rel)
        bytes_written += len(data)
    return SyncReport(
        written=tuple(written), deleted=tuple(sorted(deleted)), unchanged=unchanged, bytes_written=bytes_written
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


def _scan(folder: str, prefix: str, entries: set[str], folders: set[str]) -> None:
    """Every entry under ``folder`` by relative path: folders into ``folders``, anything else into ``entries``.

    Like :func:`_walk`, symlinks are listed, never followed, so a path in neither set is absent or
    lies behind something that is not a real folder.
    """
    try:
        listing = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in listing:
        rel = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            folders.add(rel)
            _scan(entry.path, rel + "/", entries, folders)
        else:
            entries.add(rel)


def _read_entry(path: str) -> bytes | None:
    """The bytes at ``path`` if it is a regular file (``None`` for a symlink, a device, ...); never follows a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # a symlink (ELOOP), or gone since the scan
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(fd)


def _same_as_disk(source: FileSource, on_disk: bytes, objects: ObjectSource) -> bool:
    if isinstance(source, JsonFile):
        fast = _rendered_fast(source, objects)
        if fast is not None:
            return fast == on_disk
    return _matches(source, on_disk, objects)[0]


def diff_mirror(state: MirrorState, target: Path, objects: ObjectSource) -> list[Difference]:
    """The files of ``target`` that differ from ``state``, sorted by path (empty when they agree)."""
    target = Path(target)
    if _is_link(target):
        return [Difference(".", "changed")]  # the folder itself was replaced by a link: never followed
    _check_target(target)
    entries: set[str] = set()
    folders: set[str] = set()
    _scan(str(target), "", entries, folders)
    root = str(target) + os.sep
    out: list[Difference] = []
    for rel, source in state.files.items():
        _parts(rel)  # refuses a path that is not normalised
        on_disk = _read_entry(root + rel) if rel in entries else None
        if on_disk is None:
            exists = rel in entries or rel in folders
            out.append(Difference(rel, "changed" if exists else "missing"))
        elif not _same_as_disk(source, on_disk, objects):
            out.append(Difference(rel, "changed"))
    out.extend(Difference(rel, "extra") for rel in entries if rel not in state.files)
    return sorted(out, key=lambda d: d.path)
