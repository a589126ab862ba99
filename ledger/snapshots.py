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
and ``.DS_Store`` files are skipped, whatever they are. The Program folder is opened once without
following a link and held; every folder and file in it is opened relative to that descriptor, one
name at a time with ``O_NOFOLLOW``, so swapping a folder for a link during capture can never make it
read outside. Each file is checked against its earlier ``stat``; after all files are stored the tree
is scanned again, and any difference (size, mtime, ctime, inode, mode, added or removed files, or the
folder itself replaced) aborts the capture as "changed during capture". Capture never sleeps until
a file time: see :func:`snapshot_program`.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, Protocol, Self

from evoledger.ledger.canonical import canonical_json, digest_of, is_digest, parse_canonical
from evoledger.ledger.errors import EncodingError, IntegrityError, SchemaError, SnapshotError
from evoledger.ledger.events.base import Count, ObjectDigest, ProgramPath, check_program_path
from evoledger.ledger.events.program_snapshots import ProgramSnapshotted, SnapshotSource
from evoledger.ledger.program_scan import (
    SnapshotLimits,
    changed_error,
    open_program,
    read_stable,
    same_folder,
    scan,
    settled_scan,
)
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
_DEFAULT_LIMITS: Final = SnapshotLimits()
_MIB: Final = 1024 * 1024


class ObjectSink(Protocol):
    """Where captured bytes go: ``put`` stores bytes and returns their Object digest."""

    def put(self, data: bytes) -> str: ...


class ObjectSource(Protocol):
    """Where materialised bytes come from: ``get`` returns the bytes of an Object digest."""

    def get(self, digest: str) -> bytes: ...


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


def _put(objects: ObjectSink, data: bytes) -> str:
    digest = objects.put(data)
    if not is_digest(digest):
        raise IntegrityError(f"the Object sink returned {digest!r}, not a sha256:<hex> digest; fix the sink")
    return digest


def snapshot_program(
    directory: Path,
    objects: ObjectSink,
    *,
    entry_point: str = "policy.py",
    limits: SnapshotLimits = _DEFAULT_LIMITS,
    settle_seconds: float = 0.0,
    clock: Callable[[], int] = time.time_ns,
    sleep: Callable[[float], None] = time.sleep,
    within: Path | None = None,
) -> ProgramSnapshot:
    """Capture the Program in ``directory``: store each file and the manifest in ``objects``.

    The Program folder is opened once, without following a link (``within``: from that folder down, every
    step), and everything in it is opened relative to that descriptor without following links; if the folder
    is swapped for another during capture, capture is refused as "changed during capture". A link as the
    Program folder or on the way from ``within`` is refused.

    With ``settle_seconds``, capture waits until no file's status changed within that window: file timestamps
    are coarse (a clock tick), so a rewrite inside the tick of the first scan could otherwise look
    unchanged; once every file is older than the window, any later write gets a newer timestamp and the
    final re-scan refuses the capture. Each wait lasts at most ``settle_seconds`` and there are at most 20,
    whatever the file times say (see ``ledger.program_scan``); files that never settle are refused.
    """
    root = Path(directory)
    problem = check_program_path(entry_point)
    if problem is not None:
        raise SnapshotError(f"entry point {entry_point!r} is not a valid Program path: {problem}")
    root_fd = open_program(root, None if within is None else Path(within), entry_point)
    try:
        return _capture(root_fd, root, objects, entry_point, limits, settle_seconds, clock, sleep)
    finally:
        os.close(root_fd)


def _capture(
    root_fd: int,
    root: Path,
    objects: ObjectSink,
    entry_point: str,
    limits: SnapshotLimits,
    settle_seconds: float,
    clock: Callable[[], int],
    sleep: Callable[[float], None],
) -> ProgramSnapshot:
    before = settled_scan(root_fd, root, limits, settle_seconds, clock, sleep)
    if entry_point not in before:
        raise SnapshotError(
            f"{root} has no {entry_point}: a Program is a folder whose {entry_point} defines make_policy(context); "
            "create it there or give the folder that holds it"
        )
    entries: dict[str, ManifestEntry] = {}
    for rel in sorted(before):
        state = before[rel]
        data = read_stable(root_fd, root, rel, state)
        entries[rel] = ManifestEntry(
            digest=_put(objects, data), size=state.size, executable=bool(state.mode & stat.S_IXUSR)
        )
    after = scan(root_fd, root, limits)
    if after != before:
        differing = sorted(set(after) ^ set(before)) or sorted(r for r in before if before[r] != after[r])
        raise changed_error(root, differing[0])
    if not same_folder(root, root_fd):
        raise changed_error(root, ".")
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
