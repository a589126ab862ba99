"""The head of the Event log and its manifest file ``<run_dir>/ledger.head``.

The manifest repeats the log's head hash and event count outside SQLite::

    {"count": 42, "format": "evoledger.head/1", "hash": "sha256:..."}

It is rewritten atomically (temporary file, ``fsync``, ``os.replace``) after every committed
append, so deleting the last events of the log -- which leaves a perfectly valid shorter chain --
is still detected: the manifest then claims more events than the log has. The manifest may lag
the log by the last commit if the process died between the commit and the rewrite; a writable
open repairs that lag when the manifest's head is a prefix of the log.

The run directory may come from someone else: the manifest is read and written relative to a
descriptor of its folder, never through a link, never from a fifo or device, and at most
:data:`_MAX_MANIFEST_BYTES` of it is read (:mod:`evoledger.ledger.run_files`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.ledger.canonical import canonical_json, is_digest
from evoledger.ledger.errors import IntegrityError, UnsafePathError
from evoledger.ledger.records import GENESIS_HASH
from evoledger.ledger.run_files import check_entry, open_root, read_file_at, write_file_at

__all__ = ["EMPTY_HEAD", "MANIFEST_FORMAT", "MANIFEST_NAME", "Head", "HeadManifest"]

MANIFEST_NAME: Final = "ledger.head"
MANIFEST_FORMAT: Final = "evoledger.head/1"
_MAX_MANIFEST_BYTES: Final = 4096


@dataclass(frozen=True, slots=True)
class Head:
    """The hash of the last event (``GENESIS_HASH`` when empty) and the number of events.

    Sequence numbers are 0-based, so ``count`` is also the ``seq`` the next event will get.
    """

    hash: str
    count: int


EMPTY_HEAD: Final = Head(GENESIS_HASH, 0)


class HeadManifest:
    """Reads and atomically rewrites ``ledger.head``."""

    def __init__(self, path: Path) -> None:
        self.path: Final = path
        self._tmp: Final = path.with_name(path.name + ".tmp")

    def exists(self) -> bool:
        """Whether anything is at the manifest's name (a link or fifo counts: it is refused when read)."""
        return os.path.lexists(self.path)

    def read(self) -> Head | None:
        """The recorded head, ``None`` if the file is absent; :class:`IntegrityError` if malformed.

        :class:`~evoledger.ledger.errors.UnsafePathError` (a link, fifo or device there) is an integrity
        failure too, so callers that report one report the other.
        """
        try:
            folder = open_root(self.path.parent)
        except OSError as exc:
            raise IntegrityError(f"cannot read the head manifest {self.path}: {exc}") from exc
        try:
            raw = read_file_at(folder, self.path.name, self.path, limit=_MAX_MANIFEST_BYTES)
        except UnsafePathError as exc:
            raise IntegrityError(f"cannot read the head manifest: {exc}") from None
        except OSError as exc:
            raise IntegrityError(f"cannot read the head manifest {self.path}: {exc}") from exc
        finally:
            os.close(folder)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise IntegrityError(
                f"the head manifest {self.path} is not valid JSON ({exc}); it was damaged. "
                "Run `evoledger ledger verify` on the run directory."
            ) from None
        if (
            not isinstance(data, dict)
            or data.get("format") != MANIFEST_FORMAT
            or set(data) != {"format", "hash", "count"}
            or not is_digest(data["hash"])
            or type(data["count"]) is not int
            or data["count"] < 0
        ):
            raise IntegrityError(
                f"the head manifest {self.path} is malformed: {raw[:200]!r}; expected "
                f'{{"format": "{MANIFEST_FORMAT}", "hash": "sha256:...", "count": N}}. '
                "Run `evoledger ledger verify` on the run directory."
            )
        return Head(data["hash"], data["count"])

    def write(self, head: Head) -> None:
        """Atomically replace the manifest with ``head`` (temporary file + fsync + rename)."""
        body = canonical_json({"format": MANIFEST_FORMAT, "hash": head.hash, "count": head.count}) + b"\n"
        try:
            folder = open_root(self.path.parent)
            try:
                check_entry(folder, self.path.name, "file", self.path)  # a planted link or fifo is refused
                write_file_at(folder, self.path.name, body, self.path, tmp=self._tmp.name, sync_folder=False)
            finally:
                os.close(folder)
        except OSError as exc:
            raise IntegrityError(
                f"the events up to #{head.count} are committed but the head manifest {self.path} "
                f"could not be written: {exc}. Free disk space, then reopen the ledger writable to repair it."
            ) from exc
