"""Checking a record's head signature (``ledger.sig``) against its log, and optionally against a trusted key.

:func:`check_signature` never raises for what it finds: every outcome is a :class:`SignatureReport`
whose ``status`` is one of

* ``unsigned`` -- the record names no signer and has no ``ledger.sig`` (an old or unsigned record);
* ``signed`` -- the signature is valid, covers the log's current head and record id, and was made by
  the key the record names in ``run-created`` (or ``evaluation-started``); *who* holds that key is not
  known without a trusted key;
* ``trusted`` -- ``signed``, and the key is the one the caller trusts: the log was written by that key's
  holder and not rewritten since;
* ``invalid`` -- anything else: no, a damaged or a forged signature, a signature over another head
  (the log changed after signing), another record or another key than the one recorded;
* ``untrusted`` -- a valid signature by a key other than the trusted one, or an unsigned record when a
  trusted key was asked for.

``ok`` is true for ``unsigned`` and ``signed`` without a trusted key, and only for ``trusted`` with one.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

from evoledger.ledger.database import DATABASE_NAME, SQLITE_ERRORS, Database
from evoledger.ledger.errors import EvoLedgerError, IntegrityError
from evoledger.ledger.head import Head
from evoledger.ledger.records import GENESIS_HASH
from evoledger.ledger.signing import SIGNATURE_NAME, read_signature, statement
from evoledger.ledger.signing_keys import PublicKey

__all__ = ["RECORD_KINDS", "RecordSigner", "SignatureReport", "SignatureStatus", "check_signature", "recorded_signer"]

SignatureStatus = Literal["unsigned", "signed", "trusted", "invalid", "untrusted"]
RECORD_KINDS: Final = ("run-created", "evaluation-started")
"""The Events that open a record, name its id and (optionally) its signer."""


@dataclass(frozen=True, slots=True)
class RecordSigner:
    """What a record's first Event says: its id and the public key (hex) that signs it, if any."""

    record_id: str | None
    public_key: str | None


@dataclass(frozen=True, slots=True)
class SignatureReport:
    """The verdict on a record's signature (see the module docstring)."""

    status: SignatureStatus
    code: str
    message: str
    fingerprint: str | None = None
    """The fingerprint of the key in ``ledger.sig`` (or recorded in the log when the file is missing)."""
    signed_count: int | None = None
    trusted_key: str | None = None
    """The fingerprint the caller trusts, if any."""

    @property
    def ok(self) -> bool:
        if self.trusted_key is not None:
            return self.status == "trusted"
        return self.status in ("unsigned", "signed")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


def recorded_signer(db: Database) -> RecordSigner:
    """The id and signer the record's first ``run-created`` / ``evaluation-started`` Event names.

    :class:`IntegrityError` if that Event cannot be read or parsed.
    """
    from evoledger.ledger.events import EvaluationStarted, RunCreated, from_stored
    from evoledger.ledger.log import row_to_event

    marks = ", ".join("?" * len(RECORD_KINDS))
    try:
        row = db.conn.execute(
            "SELECT seq, kind, version, visibility, payload, prev_hash, hash, recorded_at FROM events "
            f"WHERE kind IN ({marks}) ORDER BY seq LIMIT 1",
            RECORD_KINDS,
        ).fetchone()
    except SQLITE_ERRORS as exc:
        raise IntegrityError(f"cannot read the record's first Event: {exc}") from None
    if row is None:
        return RecordSigner(None, None)
    try:
        event = from_stored(row_to_event(row))
    except EvoLedgerError as exc:
        raise IntegrityError(f"the record's first Event cannot be read: {exc}") from None
    if isinstance(event, RunCreated):
        return RecordSigner(event.run_id, event.signer.public_key if event.signer else None)
    if isinstance(event, EvaluationStarted):
        return RecordSigner(event.evaluation_id, event.signer.public_key if event.signer else None)
    return RecordSigner(None, None)


def _hash_at(db: Database, seq: int) -> str | None:
    if seq < 0:
        return GENESIS_HASH
    try:
        row = db.conn.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
    except SQLITE_ERRORS as exc:
        raise IntegrityError(f"cannot read the log: {exc}") from None
    return None if row is None else str(row[0])


def check_signature(
    run_dir: str | os.PathLike[str], *, log_head: Head | None, trusted: PublicKey | str | None = None
) -> SignatureReport:
    """Check ``run_dir/ledger.sig`` against ``log_head`` (from ``verify``), the recorded signer and ``trusted``.

    ``log_head`` is the head ``verify`` walked to (``None`` when the chain could not be walked); ``trusted``
    a :class:`PublicKey` or a fingerprint string.
    """
    root = Path(run_dir)
    trusted_fp = trusted if isinstance(trusted, str) or trusted is None else trusted.fingerprint
    report = _check(root, log_head)
    if trusted_fp is None:
        return report
    if report.status == "signed" and report.fingerprint == trusted_fp:
        return SignatureReport(
            "trusted",
            "signature_trusted",
            f"signed by the trusted key {trusted_fp}: the log was written by that key's holder and not rewritten "
            f"since ({report.signed_count} events)",
            report.fingerprint,
            report.signed_count,
            trusted_fp,
        )
    if report.status == "signed":
        return SignatureReport(
            "untrusted",
            "signer_not_trusted",
            f"the log is signed by {report.fingerprint}, not by the trusted key {trusted_fp}: it was written, or "
            "rewritten and signed again, by someone else's key",
            report.fingerprint,
            report.signed_count,
            trusted_fp,
        )
    if report.status == "unsigned":
        return SignatureReport(
            "untrusted",
            "unsigned",
            f"the record is not signed, so nothing shows it was written by the trusted key {trusted_fp}",
            None,
            None,
            trusted_fp,
        )
    return SignatureReport(
        report.status, report.code, report.message, report.fingerprint, report.signed_count, trusted_fp
    )


def _check(root: Path, log_head: Head | None) -> SignatureReport:
    where = root / SIGNATURE_NAME
    try:
        signed = read_signature(root)
    except IntegrityError as exc:
        return SignatureReport("invalid", "signature_malformed", str(exc))
    try:
        db = Database.open(root / DATABASE_NAME, writable=False)
    except EvoLedgerError as exc:
        return SignatureReport("invalid", "record_unreadable", f"the ledger cannot be read to check its signer: {exc}")
    try:
        recorded = recorded_signer(db)
        signed_prefix = signed is not None and _hash_at(db, signed.head.count - 1) == signed.head.hash
    except IntegrityError as exc:
        return SignatureReport("invalid", "record_unreadable", str(exc))
    finally:
        db.close()
    recorded_fp = None if recorded.public_key is None else PublicKey.from_hex(recorded.public_key).fingerprint
    if signed is None:
        if recorded_fp is None:
            return SignatureReport(
                "unsigned", "unsigned", "the record is not signed (no signer recorded, no ledger.sig)"
            )
        return SignatureReport(
            "invalid",
            "signature_missing",
            f"the record names signer {recorded_fp} but {where} is missing: the signature was removed",
            recorded_fp,
        )
    fp = signed.fingerprint
    if not signed.public_key.verifies(signed.signature, statement(signed.record_id, signed.head)):
        return SignatureReport(
            "invalid",
            "signature_invalid",
            f"{where} does not verify under the key it names ({fp}): it was forged or damaged",
            fp,
        )
    if recorded_fp is None:
        return SignatureReport(
            "invalid",
            "signer_not_recorded",
            f"{where} is a valid signature by {fp}, but the record names no signer in its first Event: "
            "the signature does not belong to this record",
            fp,
            signed.head.count,
        )
    if recorded_fp != fp:
        return SignatureReport(
            "invalid",
            "signer_mismatch",
            f"{where} is signed by {fp}, but the record names signer {recorded_fp}",
            fp,
            signed.head.count,
        )
    if signed.record_id != recorded.record_id:
        return SignatureReport(
            "invalid",
            "signature_other_record",
            f"{where} signs record {signed.record_id!r}, but this record is {recorded.record_id!r}",
            fp,
            signed.head.count,
        )
    if log_head is None:
        return SignatureReport(
            "invalid",
            "head_unknown",
            "the log's head cannot be established (see the chain findings), so the signature covers nothing known",
            fp,
            signed.head.count,
        )
    if signed.head != log_head and signed_prefix and signed.head.count < log_head.count:
        return SignatureReport(
            "invalid",
            "signature_behind",
            f"the signature covers the first {signed.head.count} of {log_head.count} events: the later ones are "
            "unsigned (the Host died before signing them, and 'evoledger resume' signs the head again; or someone "
            "else appended them)",
            fp,
            signed.head.count,
        )
    if signed.head != log_head:
        return SignatureReport(
            "invalid",
            "signature_stale",
            f"the signature covers {signed.head.count} events with head {signed.head.hash}, but the log has "
            f"{log_head.count} events with head {log_head.hash}: the log changed after it was signed",
            fp,
            signed.head.count,
        )
    return SignatureReport(
        "signed",
        "signature_valid",
        f"signed by {fp} ({log_head.count} events); pass --trusted-key to check that this is the key you trust",
        fp,
        log_head.count,
    )
