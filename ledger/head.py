"""The head of the Event log and its manifest file ``<run_dir>/ledger.head``.

The manifest repeats the log's head hash and event count outside SQLite::

    {"count": 42, "format": "evoledger.head/1", "hash": "sha256:..."}

It is rewritten atomically (temporary file, ``fsync``, ``os.replace``) after every committed
append, so deleting the last events of the log -- which leaves a perfectly valid shorter chain --
is still detected: the manifest then claims more events than the log has. The manifest may lag
the log by the last commit if the process died between the commit and the rewrite; a writable
open repairs that lag when the manifest's head is a prefix of the log.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.ledger.canonical import canonical_json, is_digest
from evoledger.ledger.errors import IntegrityError
from evoledger.ledger.records import GENESIS_HASH

__all__ = ["EMPTY_HEAD", "MANIFEST_FORMAT", "MANIFEST_NAME", "Head", "HeadManifest"]

MANIFEST_NAME: Final = "ledger.head"
MANIFEST_FORMAT: Final = "evoledger.head/1"


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
        return self.path.exists()

    def read(self) -> Head | None:
        """The recorded head, ``None`` if the file is absent; :class:`IntegrityError` if malformed."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise IntegrityError(f"cannot read the head manifest {self.path}: {exc}") from exc
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
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self._tmp, self.path)
        except OSError as exc:
            raise IntegrityError(
                f"the events up to #{head.count} are committed but the head manifest {self.path} "
                f"could not be written: {exc}. Free disk space, then reopen the ledger writable to repair it."
            ) from exc
