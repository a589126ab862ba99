"""Program snapshots: a Program directory captured as Objects, and written back byte for byte.

A snapshot stores every file as an Object and then a *manifest* Object, the canonical JSON of::

    {"format": "evoledger.program/1",
     "entry_point": "policy.py",
     "files": {"<relative POSIX path>": {"digest": "sha256:...", "size": n, "executable": bool}}}

The manifest's digest **is** the Program's id. It depends only on paths, bytes and executable bits,
never on mtimes, owners or the order files were created in. Empty directories are not recorded.

Capture refuses what cannot be reproduced faithfully or safely: symbolic links (even ones pointing
inside), fifos, sockets and devices, file names that are not UTF-8, a missing entry point, and
Programs over the :class:`SnapshotLimits`. ``__pycache__/`` and ``.git/`` directories and ``*.pyc``
and ``.DS_Store`` files are skipped, whatever they are. Each file is read through a descriptor
opened without following links and checked against its earlier ``stat``; after all files are stored
the tree is scanned again, and any difference (size, mtime, ctime, inode, mode, added or removed
files) aborts the capture as "changed during capture".
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, NamedTuple, Protocol, Self

from evoledger.ledger.canonical import canonical_json, digest_of, is_digest, parse_canonical
from evoledger.ledger.errors import ConfigError, EncodingError, IntegrityError, SchemaError, SnapshotError
from evoledger.ledger.events.base import Count, ObjectDigest, ProgramPath, check_program_path
from evoledger.ledger.events.programs import ProgramSnapshotted, SnapshotSource
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "PROGRAM_FORMAT",
    "ManifestEntry",
    "ObjectSink",
    "ObjectSource",
    "ProgramManifest",
    "ProgramSnapshot",
    "SnapshotLimits",
    "materialize_program",
    "parse_manifest",
    "snapshot_program",
]

PROGRAM_FORMAT: Final = "evoledger.program/1"
_MIB: Final = 1024 * 1024
_SKIPPED_DIRS: Final = frozenset({"__pycache__", ".git"})
_SKIPPED_FILES: Final = frozenset({".DS_Store"})
_SKIPPED_SUFFIXES: Final = (".pyc",)
_OPEN_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class ObjectSink(Protocol):
    """Where captured bytes go: ``put`` stores bytes and returns their Object digest."""

    def put(self, data: bytes) -> str: ...


class ObjectSource(Protocol):
    """Where materialised bytes come from: ``get`` returns the bytes of an Object digest."""

    def get(self, digest: str) -> bytes: ...


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


class ManifestEntry(BaseModel):
    """One file of a Program manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    digest: ObjectDigest
    size: Count
    executable: bool


class ProgramManifest(BaseModel):
    """The parsed manifest Object of a Program snapshot."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    format: Literal["evoledger.program/1"]
    entry_point: ProgramPath
    files: dict[ProgramPath, ManifestEntry]

    @model_validator(mode="after")
    def _check_tree(self) -> Self:
        if self.entry_point not in self.files:
            raise PydanticCustomError(
                "entry_point", "entry point {ep!r} is not among the files", {"ep": self.entry_point}
            )
        for path in self.files:
            parts = path.split("/")
            for depth in range(1, len(parts)):
                prefix = "/".join(parts[:depth])
                if prefix in self.files:
                    raise PydanticCustomError(
                        "file_is_directory",
                        "{prefix!r} is both a file and the directory of {path!r}",
                        {"prefix": prefix, "path": path},
                    )
        return self

    @property
    def total_bytes(self) -> int:
        """The sum of all file sizes."""
        return sum(entry.size for entry in self.files.values())

    def to_bytes(self) -> bytes:
        """The canonical manifest bytes (whose digest is the Program id)."""
        return canonical_json(self.model_dump(mode="json"))


@dataclass(frozen=True, slots=True)
class ProgramSnapshot:
    """The result of capturing a Program: its id (manifest digest) and its files."""

    digest: str
    files: Mapping[str, str]
    """Sorted relative POSIX path -> Object digest."""
    entry_point: str
    total_bytes: int
    manifest_bytes: bytes

    @property
    def file_count(self) -> int:
        """How many files the Program holds."""
        return len(self.files)

    def to_event(self, source: SnapshotSource) -> ProgramSnapshotted:
        """The ``program-snapshotted`` Event recording this snapshot."""
        return ProgramSnapshotted(
            program_digest=self.digest,
            files=dict(self.files),
            entry_point=self.entry_point,
            file_count=self.file_count,
            total_bytes=self.total_bytes,
            source=source,
        )


class _FileState(NamedTuple):
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    mode: int

    @classmethod
    def of(cls, st: os.stat_result) -> _FileState:
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)


def _changed(root: Path, rel: str) -> SnapshotError:
    return SnapshotError(
        f"{rel!r} in {root} changed during capture; stop whatever is writing to the Program directory and retry"
    )


def _skipped(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in _SKIPPED_DIRS
    return name in _SKIPPED_FILES or name.endswith(_SKIPPED_SUFFIXES)


def _special_kind(mode: int) -> str:
    kinds = {stat.S_IFIFO: "named pipe (fifo)", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device file"}
    return kinds.get(stat.S_IFMT(mode), "device file" if stat.S_ISBLK(mode) else "special file")


def _scan(root: Path, limits: SnapshotLimits) -> dict[str, _FileState]:
    """Every capturable file under ``root`` with its ``lstat`` state, enforcing the rules and limits."""
    found: dict[str, _FileState] = {}
    total = 0
    pending = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise SnapshotError(f"cannot list {directory}: {exc.strerror}; fix its permissions") from None
        for entry in entries:
            rel = prefix + entry.name
            problem = check_program_path(rel)
            if problem is not None:
                shown = os.fsencode(rel) if "UTF-8" in problem else rel
                raise SnapshotError(f"cannot snapshot {shown!r} in {root}: {problem}")
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                raise _changed(root, rel) from None
            is_dir = stat.S_ISDIR(st.st_mode)
            if _skipped(entry.name, is_dir):
                continue
            if stat.S_ISLNK(st.st_mode):
                raise SnapshotError(
                    f"{rel!r} in {root} is a symbolic link; Programs may not contain links. "
                    "Replace it with a copy of what it points to"
                )
            if is_dir:
                pending.append((rel + "/", Path(entry.path)))
                continue
            if not stat.S_ISREG(st.st_mode):
                raise SnapshotError(
                    f"{rel!r} in {root} is a {_special_kind(st.st_mode)}, not a regular file; "
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
            found[rel] = _FileState.of(st)
    return found


def _read_stable(root: Path, rel: str, expected: _FileState) -> bytes:
    """The bytes of ``rel``, provided the file read is the very file that was scanned, unchanged."""
    try:
        fd = os.open(root / rel, _OPEN_FLAGS)
    except FileNotFoundError:
        raise _changed(root, rel) from None
    except OSError as exc:  # ELOOP: replaced by a symlink since the scan
        if exc.errno == errno.ELOOP:
            raise _changed(root, rel) from None
        raise SnapshotError(f"cannot read {rel!r} in {root}: {exc.strerror}; fix its permissions") from None
    try:
        if _FileState.of(os.fstat(fd)) != expected:
            raise _changed(root, rel)
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
        raise _changed(root, rel)
    return data


def _put(objects: ObjectSink, data: bytes) -> str:
    digest = objects.put(data)
    if not is_digest(digest):
        raise IntegrityError(f"the Object sink returned {digest!r}, not a sha256:<hex> digest; fix the sink")
    return digest


_SETTLE_ATTEMPTS = 20


def _settled_scan(
    root: Path, limits: SnapshotLimits, settle_seconds: float, clock: Callable[[], int], sleep: Callable[[float], None]
) -> dict[str, _FileState]:
    state = _scan(root, limits)
    if settle_seconds <= 0:
        return state
    window = int(settle_seconds * 1e9)
    for _ in range(_SETTLE_ATTEMPTS):
        newest = max((max(f.mtime_ns, f.ctime_ns) for f in state.values()), default=0)
        wait = newest + window - clock()
        if wait <= 0:
            return state
        sleep(wait / 1e9)
        state = _scan(root, limits)
    raise SnapshotError(
        f"files in {root} changed during capture and kept changing for {_SETTLE_ATTEMPTS} settle windows of "
        f"{settle_seconds} s; finish writing the Program before submitting it"
    )


def snapshot_program(
    directory: Path,
    objects: ObjectSink,
    *,
    entry_point: str = "policy.py",
    limits: SnapshotLimits = SnapshotLimits(),
    settle_seconds: float = 0.0,
    clock: Callable[[], int] = time.time_ns,
    sleep: Callable[[float], None] = time.sleep,
) -> ProgramSnapshot:
    """Capture the Program in ``directory``: store each file and the manifest in ``objects``.

    With ``settle_seconds``, capture waits until no file was modified within that window: file timestamps
    are coarse (a clock tick), so a rewrite inside the tick of the first scan could otherwise look
    unchanged; once every file is older than the window, any later write gets a newer timestamp and the
    final re-scan refuses the capture. Files that never settle are refused.
    """
    root = Path(directory)
    if not root.is_dir():
        raise SnapshotError(f"{root} is not a directory; pass the Program directory (it holds {entry_point})")
    problem = check_program_path(entry_point)
    if problem is not None:
        raise SnapshotError(f"entry point {entry_point!r} is not a valid Program path: {problem}")
    before = _settled_scan(root, limits, settle_seconds, clock, sleep)
    if entry_point not in before:
        raise SnapshotError(
            f"entry point {entry_point!r} not found in {root}; create it or pass entry_point=... naming "
            "the file that defines make_policy"
        )
    entries: dict[str, ManifestEntry] = {}
    for rel in sorted(before):
        state = before[rel]
        data = _read_stable(root, rel, state)
        entries[rel] = ManifestEntry(
            digest=_put(objects, data), size=state.size, executable=bool(state.mode & stat.S_IXUSR)
        )
    after = _scan(root, limits)
    if after != before:
        differing = sorted(set(after) ^ set(before)) or sorted(r for r in before if before[r] != after[r])
        raise _changed(root, differing[0])
    manifest = ProgramManifest(format=PROGRAM_FORMAT, entry_point=entry_point, files=entries)
    manifest_bytes = manifest.to_bytes()
    return ProgramSnapshot(
        digest=_put(objects, manifest_bytes),
        files=MappingProxyType({rel: entry.digest for rel, entry in entries.items()}),
        entry_point=entry_point,
        total_bytes=manifest.total_bytes,
        manifest_bytes=manifest_bytes,
    )


def parse_manifest(data: bytes) -> ProgramManifest:
    """Parse and validate manifest bytes; :class:`SchemaError` unless they are a canonical manifest."""
    try:
        parsed = parse_canonical(data)
        canonical = canonical_json(parsed)
    except EncodingError as exc:
        raise SchemaError(f"not a Program manifest: {exc}") from None
    if canonical != data:
        raise SchemaError("the Program manifest is not in canonical JSON form; it was not written by evoledger")
    try:
        return ProgramManifest.model_validate_json(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(manifest)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:5]
        )
        raise SchemaError(f"invalid Program manifest ({PROGRAM_FORMAT}): {details}") from None


def _fetch(objects: ObjectSource, digest: str, what: str) -> bytes:
    data = objects.get(digest)
    if digest_of(data) != digest:
        raise IntegrityError(f"the bytes of {what} do not hash to {digest}; the Object store is damaged")
    return data


def _write_tree(manifest: ProgramManifest, objects: ObjectSource, into: Path) -> None:
    os.chmod(into, 0o755)
    for rel, entry in sorted(manifest.files.items()):
        data = _fetch(objects, entry.digest, f"{rel!r}")
        if len(data) != entry.size:
            raise IntegrityError(f"{rel!r} has {len(data)} bytes but the manifest says {entry.size}")
        dest = into / rel
        parent = dest.parent
        if not parent.is_dir():
            parent.mkdir(mode=0o755, parents=True)
        with open(dest, "xb") as handle:
            handle.write(data)
        os.chmod(dest, 0o755 if entry.executable else 0o644)


def materialize_program(
    manifest_digest: str, objects: ObjectSource, target: Path, *, overwrite: bool = False
) -> ProgramManifest:
    """Write the Program ``manifest_digest`` into ``target`` byte for byte (executable bits included).

    The files are written into a temporary sibling directory that is then renamed onto ``target``,
    so ``target`` never holds a half-written Program. A non-empty ``target`` is refused unless
    ``overwrite=True``, in which case its old content is replaced as a whole.
    """
    manifest = parse_manifest(_fetch(objects, manifest_digest, "the Program manifest"))
    target = Path(target)
    if target.is_symlink():
        raise SnapshotError(f"{target} is a symbolic link; materialise into a real directory path")
    occupied = False
    if target.exists():
        if not target.is_dir():
            raise SnapshotError(f"{target} exists and is not a directory; choose another target")
        occupied = any(target.iterdir())
        if occupied and not overwrite:
            raise SnapshotError(
                f"{target} is not empty; choose an empty directory or pass overwrite=True to replace it"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.materialize-", dir=target.parent))
    try:
        _write_tree(manifest, objects, staging)
        if occupied:
            holder = Path(tempfile.mkdtemp(prefix=f".{target.name}.replaced-", dir=target.parent))
            os.rename(target, holder / "old")
            os.rename(staging, target)
            shutil.rmtree(holder)
        else:
            os.rename(staging, target)  # replaces an empty directory atomically
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest
