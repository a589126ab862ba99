"""Signed heads: the Host's ed25519 signature over the head manifest, in ``<run_dir>/ledger.sig``.

The hash chain has no secret: whoever holds a run directory can rewrite its log and re-chain it
consistently. A signature closes that gap for whoever trusts the signer's public key. The signed
*statement* is the canonical JSON of::

    {"count": N, "format": "evoledger.signed-head/1", "hash": "sha256:...", "record_id": "<Run id>"}

i.e. the head hash, the event count and the record's id (the Run id, or the Evaluation id). The Host
signs it every time it writes the head manifest (after every committed append), so the signature
always covers the whole log. ``ledger.sig`` holds the statement's fields, the public key, its
fingerprint and the signature (hex), written atomically (a fresh temporary file renamed into place; never
through a symlink). It is not fsynced: that would double the cost of a commit, and a signature lost to an OS
crash is reported as missing or stale (never as valid), until ``evoledger resume`` signs the head again.
:mod:`evoledger.ledger.signature_check` checks it against a log.

A valid signature proves that the holder of the key signed this exact log (every event up to the
head) and that nothing was rewritten since. It does not prove that the Host was honest when it wrote
the events, nor that the key was not stolen.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evoledger.ledger.canonical import canonical_json, is_digest
from evoledger.ledger.errors import InputError, IntegrityError
from evoledger.ledger.head import Head
from evoledger.ledger.signing_keys import PublicKey, SigningKey

__all__ = [
    "SIGNATURE_FORMAT",
    "SIGNATURE_NAME",
    "STATEMENT_FORMAT",
    "HeadSigner",
    "SignedHead",
    "read_signature",
    "statement",
]

SIGNATURE_NAME: Final = "ledger.sig"
SIGNATURE_FORMAT: Final = "evoledger.signature/1"
STATEMENT_FORMAT: Final = "evoledger.signed-head/1"
_MAX_SIGNATURE_BYTES: Final = 4096
_SIGNATURE_HEX: Final = re.compile(r"^[0-9a-f]{128}$")
_RECORD_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_FIELDS: Final = frozenset({"format", "record_id", "hash", "count", "public_key", "fingerprint", "signature"})


def statement(record_id: str, head: Head) -> bytes:
    """The exact bytes a head signature signs."""
    return canonical_json({"count": head.count, "format": STATEMENT_FORMAT, "hash": head.hash, "record_id": record_id})


@dataclass(frozen=True, slots=True)
class SignedHead:
    """The content of ``ledger.sig``: which head of which record, signed by which key."""

    record_id: str
    head: Head
    public_key: PublicKey
    signature: bytes

    @property
    def fingerprint(self) -> str:
        return self.public_key.fingerprint

    def valid(self) -> bool:
        """Whether the signature is the public key's signature of the statement (says nothing about trust)."""
        return self.public_key.verifies(self.signature, statement(self.record_id, self.head))

    def to_json(self) -> bytes:
        return (
            canonical_json(
                {
                    "count": self.head.count,
                    "fingerprint": self.fingerprint,
                    "format": SIGNATURE_FORMAT,
                    "hash": self.head.hash,
                    "public_key": self.public_key.hex,
                    "record_id": self.record_id,
                    "signature": self.signature.hex(),
                }
            )
            + b"\n"
        )


class HeadSigner:
    """Signs the heads of one record (``record_id``) with ``key`` and writes ``ledger.sig`` in ``run_dir``."""

    def __init__(self, key: SigningKey, record_id: str) -> None:
        if not _RECORD_ID.match(record_id):
            raise InputError(f"cannot sign heads of record {record_id!r:.140}: not a Run or Evaluation id")
        self.key: Final = key
        self.record_id: Final = record_id

    def sign(self, head: Head) -> SignedHead:
        return SignedHead(self.record_id, head, self.key.public, self.key.sign(statement(self.record_id, head)))

    def write(self, run_dir: Path, head: Head) -> None:
        """Sign ``head`` and atomically replace ``run_dir/ledger.sig`` (never through a symlink)."""
        body = self.sign(head).to_json()
        target = Path(run_dir) / SIGNATURE_NAME
        tmp = target.with_name(SIGNATURE_NAME + ".tmp")
        try:
            dir_fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp.name, dir_fd=dir_fd)  # a planted link is removed, never followed
                fd = os.open(
                    tmp.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd
                )
                try:
                    os.write(fd, body)  # no fsync: after an OS crash, resume signs the head again
                finally:
                    os.close(fd)
                os.replace(tmp.name, SIGNATURE_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise IntegrityError(
                f"the events up to #{head.count} are committed but their signature {target} could not be written: "
                f"{exc}. Free disk space, then 'evoledger resume' the Run to sign its head again."
            ) from exc


def read_signature(run_dir: Path) -> SignedHead | None:
    """``run_dir/ledger.sig`` parsed, ``None`` if absent; :class:`IntegrityError` if it is anything but a valid file.

    Opened without following a symlink, regular files only, at most 4 KiB read.
    """
    path = Path(run_dir) / SIGNATURE_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IntegrityError(
            f"{path} cannot be opened as a regular file ({exc.strerror}); it is not a signature"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IntegrityError(f"{path} is not a regular file; it is not a signature")
        raw = os.read(fd, _MAX_SIGNATURE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > _MAX_SIGNATURE_BYTES:
        raise IntegrityError(f"{path} is over {_MAX_SIGNATURE_BYTES} bytes; a signature file is far smaller")
    try:
        data: Any = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
        raise IntegrityError(f"{path} is not valid JSON; it was damaged or replaced") from None
    if (
        not isinstance(data, dict)
        or set(data) != _FIELDS
        or data["format"] != SIGNATURE_FORMAT
        or not isinstance(data["record_id"], str)
        or not _RECORD_ID.match(data["record_id"])
        or not isinstance(data["hash"], str)
        or not is_digest(data["hash"])
        or type(data["count"]) is not int
        or not 0 <= data["count"] < 2**63
        or not isinstance(data["public_key"], str)
        or not isinstance(data["signature"], str)
        or not _SIGNATURE_HEX.match(data["signature"])
    ):
        raise IntegrityError(
            f"{path} is malformed; expected the fields {sorted(_FIELDS)} with format {SIGNATURE_FORMAT!r}"
        )
    try:
        public = PublicKey.from_hex(data["public_key"])
    except InputError:
        raise IntegrityError(f"{path} holds no valid public key") from None
    if data["fingerprint"] != public.fingerprint:
        raise IntegrityError(
            f"{path} names fingerprint {data['fingerprint']!r:.60}, but its key's is {public.fingerprint}"
        )
    return SignedHead(data["record_id"], Head(data["hash"], data["count"]), public, bytes.fromhex(data["signature"]))
