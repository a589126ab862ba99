"""The bytes the Host executes are exactly the snapshotted ones: a private copy per execution, from the Object store.

Every execution of a Program by the Host (one Submission's Episodes, one Candidate's Validation, the
Assessment) runs in a copy written for it alone by :func:`private_program_copy`: a fresh directory
(``mkdtemp``, mode 0700, an unpredictable name outside the run directory) materialized from the
content-addressed Object store and removed afterwards. Nothing the Agent or an earlier Policy wrote
anywhere can change what runs: the Host never reads a Program from a path it has used before.

Earlier versions executed a long-lived copy under ``<run>/host/programs/<digest>/`` that the Agent could
rewrite after submitting. :func:`copy_differences` compares such a directory with its snapshot;
``evoledger replay`` reports every copy there that differs (see ``kernel.replay.program_copies``).

Cost, on a typical Program (the packaged ``cartpole-linear``, one file; measured by
``tests/kernel/run/test_program_copies.py``, ``-s`` prints it): a private copy takes about 2.5 ms per
execution, re-hashing a long-lived copy about 0.05 ms. Re-hashing is cheaper but not sound: between the
check and the Policy's import the Agent can rewrite a path it knows. 2.5 ms per Submission, Candidate or
Assessment is negligible beside the Episodes it runs.

Within one execution the Episodes share the copy, so a Policy can rewrite its own copy for its later
Episodes of that execution, as it can keep any other state in files (a limit of the local backend; an
isolation backend mounts the copy read-only). It can never reach a later execution.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Protocol

from evoledger.ledger.snapshots import materialize_program, parse_manifest

__all__ = ["ProgramCache", "copy_differences", "private_program_copy"]

_MAX_EXTRA_ENTRIES: Final = 1000
_MAX_DEPTH: Final = 64
_READ_CHUNK: Final = 1 << 20


class _ObjectSource(Protocol):
    def get(self, digest: str) -> bytes: ...


@contextmanager
def private_program_copy(program_digest: str, objects: _ObjectSource) -> Iterator[Path]:
    """A fresh copy of Program ``program_digest`` for one execution, removed when the block ends."""
    root = Path(tempfile.mkdtemp(prefix="evoledger-program-"))
    try:
        target = root / "program"
        materialize_program(program_digest, objects, target)
        yield target
    finally:
        shutil.rmtree(root, ignore_errors=True)


class ProgramCache:
    """Programs materialized once per digest under a private ``root`` the caller owns (replay's re-execution)."""

    def __init__(self, root: Path, objects: _ObjectSource) -> None:
        self._root = root
        self._objects = objects

    def materialize(self, program_digest: str) -> Path:
        """The directory holding Program ``program_digest`` (written from its Objects on first use)."""
        target = self._root / program_digest.removeprefix("sha256:")[:32]
        if not (target / "policy.py").is_file():
            self._root.mkdir(parents=True, exist_ok=True)
            materialize_program(program_digest, self._objects, target, overwrite=True)
        return target


def _file_digest(fd: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(fd, _READ_CHUNK):
        digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def _walk(directory: Path, budget: int) -> tuple[dict[str, os.stat_result], list[str]]:
    """Regular files under ``directory`` by relative path (never following links), and what else is there."""
    files: dict[str, os.stat_result] = {}
    odd: list[str] = []
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        try:
            with os.scandir(directory / rel_dir if rel_dir else directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            odd.append(f"{rel_dir or '.'}: cannot be listed ({exc.strerror})")
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if len(files) + len(odd) > budget:
                odd.append("... and more entries (not listed)")
                return files, odd
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                odd.append(f"{rel}: cannot be read ({exc.strerror})")
                continue
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 > _MAX_DEPTH:
                    odd.append(f"{rel}: nested deeper than {_MAX_DEPTH} levels")
                else:
                    stack.append((rel, depth + 1))
            elif stat.S_ISREG(info.st_mode):
                files[rel] = info
            else:
                odd.append(f"{rel}: is not a regular file or directory")
    return files, odd


def copy_differences(program_digest: str, objects: _ObjectSource, directory: Path) -> list[str]:
    """How the files in ``directory`` differ from the snapshot ``program_digest`` (empty: identical).

    Compares the set of files, their bytes (SHA-256) and executable bits; never follows a symbolic link,
    bounds the walk, and treats anything that is not a regular file or directory as a difference.
    """
    manifest = parse_manifest(objects.get(program_digest))
    files, differences = _walk(directory, len(manifest.files) + _MAX_EXTRA_ENTRIES)
    for rel in sorted(set(manifest.files) - set(files)):
        differences.append(f"{rel}: missing")
    for rel in sorted(set(files) - set(manifest.files)):
        differences.append(f"{rel}: not in the snapshot")
    for rel in sorted(set(files) & set(manifest.files)):
        entry, info = manifest.files[rel], files[rel]
        if info.st_size != entry.size:
            differences.append(f"{rel}: {info.st_size} bytes, the snapshot has {entry.size}")
            continue
        try:
            fd = os.open(directory / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a fifo never blocks
        except OSError as exc:
            differences.append(f"{rel}: cannot be read ({exc.strerror})")
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                differences.append(f"{rel}: is not a regular file or directory")
            elif _file_digest(fd) != entry.digest:
                differences.append(f"{rel}: its bytes differ from the snapshot")
        finally:
            os.close(fd)
        if bool(info.st_mode & stat.S_IXUSR) != entry.executable:
            differences.append(f"{rel}: executable bit differs from the snapshot")
    return differences
