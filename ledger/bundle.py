"""One file to share a Run: ``bundle`` packs what cannot be rebuilt, ``unbundle`` unpacks it as hostile input.

A bundle is an uncompressed tar holding only regular files named

    ledger.sqlite                       a consistent copy of the database (SQLite's backup API: WAL included)
    ledger.head                         the head manifest
    ledger.sig                          the head signature, when the Run is signed
    objects/<2 hex>/<64 hex>.zst        large Objects

with fixed owners, modes and times, so the same record bundles to the same bytes. The workspace, the
Agent mirror and ``host/`` reports are left out: ``evoledger replay --rebuild`` makes them again.

:func:`unbundle` reads every header first and refuses the whole bundle -- before it writes any byte --
on a member that is not a regular file (links, devices, FIFOs, folders), a name outside the list above
(absolute paths and ``..`` included), a duplicate, more than 1,000,000 members, or sizes over the cap.
It then writes the files into a fresh folder next to the target (``O_EXCL | O_NOFOLLOW``, nothing
through a symlink), verifies the ledger there and renames it into place only if it is intact.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from evoledger.ledger.database import DATABASE_NAME
from evoledger.ledger.errors import InputError, IntegrityError, LedgerNotFoundError
from evoledger.ledger.head import MANIFEST_NAME, HeadManifest
from evoledger.ledger.objects import OBJECTS_DIR_NAME
from evoledger.ledger.signature_check import SignatureReport, check_signature
from evoledger.ledger.signing import SIGNATURE_NAME
from evoledger.ledger.signing_keys import PublicKey

__all__ = ["DEFAULT_MAX_BYTES", "BundleSummary", "bundle", "unbundle"]

DEFAULT_MAX_BYTES: Final = 64 * 1024**3
"""The default cap on a bundle's total unpacked size (64 GiB)."""
_MAX_MEMBERS: Final = 1_000_000
_CHUNK: Final = 1 << 20
_MAX_EXTENDED_HEADER: Final = 64 * 1024
_OBJECT_NAME: Final = re.compile(r"^objects/([0-9a-f]{2})/([0-9a-f]{64})\.zst$")
_TOP_NAMES: Final = (DATABASE_NAME, MANIFEST_NAME, SIGNATURE_NAME)


@dataclass(frozen=True, slots=True)
class BundleSummary:
    """What a bundle holds: its members and their total size."""

    path: str
    members: int
    bytes: int
    signed: bool


def _allowed(name: str) -> bool:
    if name in _TOP_NAMES:
        return True
    match = _OBJECT_NAME.match(name)
    return match is not None and match.group(2).startswith(match.group(1))


def _regular_files(root: Path) -> Iterator[tuple[str, Path]]:
    """The large Object files under ``root/objects`` (regular files with Object names only; links are skipped)."""
    objects = root / OBJECTS_DIR_NAME
    if not objects.is_dir() or objects.is_symlink():
        return
    for sub in sorted(objects.iterdir()):
        if sub.is_symlink() or not sub.is_dir():
            continue
        for item in sorted(sub.iterdir()):
            name = f"{OBJECTS_DIR_NAME}/{sub.name}/{item.name}"
            if _allowed(name) and not item.is_symlink() and item.is_file():
                yield name, item


def _add(tar: tarfile.TarFile, name: str, source: IO[bytes], size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = size, 0o644, 0, 0, 0, "", ""
    tar.addfile(info, source)


def _open_plain(path: Path) -> IO[bytes]:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IntegrityError(f"{path} is not a regular file; it cannot be bundled")
    return os.fdopen(fd, "rb")


def bundle(run_dir: Path, out: Path) -> BundleSummary:
    """Pack the record in ``run_dir`` into the new file ``out`` (never overwritten)."""
    root = Path(run_dir)
    if not (root / DATABASE_NAME).is_file():
        raise LedgerNotFoundError(f"no ledger in {root}; pass a Run directory")
    if os.path.lexists(out):
        raise InputError(f"{out} already exists; bundle never overwrites a file: choose another --out")
    manifest = HeadManifest(root / MANIFEST_NAME).read()
    with tempfile.TemporaryDirectory(prefix="evoledger-bundle-") as scratch:
        copy = Path(scratch) / DATABASE_NAME
        source = sqlite3.connect(f"{(root / DATABASE_NAME).resolve().as_uri()}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
            row = target.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise IntegrityError(f"the ledger of {root} cannot be copied: {exc}") from None
        finally:
            target.close()
            source.close()
        count, head = (0, None) if row is None else (row[0] + 1, row[1])
        if manifest is None or manifest.count != count or (head is not None and manifest.hash != head):
            raise IntegrityError(
                f"the log of {root} ({count} events) does not match its head manifest: it is being written or was "
                f"changed. Bundle a Run that has ended, after 'evoledger ledger verify {root}' passes"
            )
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        members, total = 0, 0
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            with (
                os.fdopen(fd, "wb") as handle,
                tarfile.open(fileobj=handle, mode="w", format=tarfile.PAX_FORMAT) as tar,
            ):
                entries: list[tuple[str, Path]] = [(DATABASE_NAME, copy), (MANIFEST_NAME, root / MANIFEST_NAME)]
                if (root / SIGNATURE_NAME).exists():
                    entries.append((SIGNATURE_NAME, root / SIGNATURE_NAME))
                entries.extend(_regular_files(root))
                for name, path in entries:
                    with _open_plain(path) as data:
                        size = os.fstat(data.fileno()).st_size
                        _add(tar, name, data, size)
                    members, total = members + 1, total + size
            os.link(tmp, out, follow_symlinks=False)
        finally:
            tmp.unlink(missing_ok=True)
    return BundleSummary(str(out), members, total, signed=(root / SIGNATURE_NAME).exists())


def _check_raw_headers(handle: IO[bytes], file_size: int) -> None:
    """Walk the tar's 512-byte headers before ``tarfile`` does: its extended (pax, GNU long name) headers are read
    whole into memory, so any over 64 KiB is refused here, as is any header whose data runs past the file."""
    position = 0
    while position + 512 <= file_size:
        handle.seek(position)
        block = handle.read(512)
        if len(block) < 512 or block == bytes(512):
            break
        raw = block[124:136]
        try:
            size = (
                int.from_bytes(raw[1:], "big") if raw[0] & 0x80 else int(raw.rstrip(b"\0 ").decode("ascii") or "0", 8)
            )
        except (UnicodeDecodeError, ValueError):
            raise IntegrityError("the bundle has a damaged tar header (its size field); refused") from None
        if block[156:157] in (b"x", b"g", b"L", b"K") and size > _MAX_EXTENDED_HEADER:
            raise IntegrityError(
                f"the bundle has a {size}-byte extended tar header (at most {_MAX_EXTENDED_HEADER}); refused"
            )
        position += 512 + (size + 511) // 512 * 512
        if position > file_size:
            raise IntegrityError("the bundle is truncated: a member's data runs past the end of the file; refused")
    handle.seek(0)


def _checked_members(tar: tarfile.TarFile, max_bytes: int) -> list[tarfile.TarInfo]:
    members: list[tarfile.TarInfo] = []
    seen: set[str] = set()
    total = 0
    while True:
        info = tar.next()
        if info is None:
            break
        if len(members) >= _MAX_MEMBERS:
            raise IntegrityError(f"the bundle has more than {_MAX_MEMBERS} members; it is not a Run")
        shown = info.name.encode("unicode_escape")[:200].decode("ascii")
        if info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
            raise IntegrityError(f"bundle member {shown!r} is not a regular file (a link, device or folder); refused")
        if not _allowed(info.name):
            raise IntegrityError(
                f"bundle member {shown!r} is not a name a Run bundle holds (ledger.sqlite, ledger.head, ledger.sig, "
                "objects/<2 hex>/<64 hex>.zst); refused"
            )
        if info.name in seen:
            raise IntegrityError(f"bundle member {shown!r} appears twice; refused")
        seen.add(info.name)
        total += info.size
        if info.size < 0 or total > max_bytes:
            raise IntegrityError(f"the bundle unpacks to more than {max_bytes} bytes (the cap); refused")
        members.append(info)
    if DATABASE_NAME not in seen or MANIFEST_NAME not in seen:
        raise IntegrityError(f"the bundle lacks {DATABASE_NAME} or {MANIFEST_NAME}; it is not a Run bundle")
    return members


def unbundle(
    bundle_file: Path, out: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, trusted: PublicKey | str | None = None
) -> tuple[BundleSummary, SignatureReport]:
    """Unpack ``bundle_file`` into the new folder ``out`` (see the module docstring); verify before it appears.

    The ledger must verify and its signature must be acceptable (with ``trusted``: by exactly that key), else
    nothing is left behind.
    """
    from evoledger.ledger.verify import verify  # verify imports the store; keep this module light

    out = Path(out)
    if os.path.lexists(out):
        raise InputError(f"{out} already exists; unbundle writes a new folder only: choose another --out")
    try:
        fd = os.open(bundle_file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot open the bundle {bundle_file}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{bundle_file} is not a regular file")
        _check_raw_headers(handle, info.st_size)
        try:
            with tarfile.open(fileobj=handle, mode="r:") as tar:
                members = _checked_members(tar, max_bytes)
                out.parent.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.unbundle-", dir=out.parent))
                try:
                    total = sum(_extract(tar, info, staging) for info in members)
                    report = verify(staging)
                    if not report.ok:
                        first = report.first_problem
                        why = first.message if first is not None else "too many problems"
                        raise IntegrityError(f"the bundled ledger fails verification, nothing was unpacked: {why}")
                    signature = check_signature(staging, log_head=report.log_head, trusted=trusted)
                    if not signature.ok:
                        raise IntegrityError(f"the bundle's signature is {signature.status}: {signature.message}")
                    os.rename(staging, out)
                except BaseException:
                    shutil.rmtree(staging, ignore_errors=True)
                    raise
        except tarfile.TarError as exc:
            raise IntegrityError(f"{bundle_file} is not a readable tar bundle: {exc}") from None
    signed = any(info.name == SIGNATURE_NAME for info in members)
    return BundleSummary(str(out), len(members), total, signed), signature


def _extract(tar: tarfile.TarFile, info: tarfile.TarInfo, staging: Path) -> int:
    """Write member ``info`` (already checked) under ``staging``: exactly ``info.size`` bytes, nothing followed."""
    target = staging / info.name
    for parent in reversed(target.relative_to(staging).parents[:-1]):
        with contextlib.suppress(FileExistsError):
            os.mkdir(staging / parent, 0o755)
    source = tar.extractfile(info)
    if source is None:
        raise IntegrityError(f"bundle member {info.name!r} has no data")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    written = 0
    with os.fdopen(fd, "wb") as sink:
        while written < info.size:
            chunk = source.read(min(_CHUNK, info.size - written))
            if not chunk:
                raise IntegrityError(f"bundle member {info.name!r} is truncated")
            sink.write(chunk)
            written += len(chunk)
    return written
