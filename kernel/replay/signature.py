"""The signature part of ``replay``: ``ledger.sig`` checked against the log's head, added to the integrity check.

An invalid signature (missing although ``run-created`` names a signer, over another head, forged, another key)
is an error of the integrity check: a log rewritten consistently by someone without the key fails here even
though its chain and manifest hold. With a trusted key the Run must be signed by exactly that key.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from evoledger.kernel.replay.report import CheckResult, Finding
from evoledger.ledger.head import EMPTY_HEAD, Head
from evoledger.ledger.signature_check import SignatureReport, check_signature
from evoledger.ledger.signing import SIGNATURE_NAME
from evoledger.ledger.signing_keys import PublicKey
from evoledger.ledger.verify import LogRow

__all__ = ["check_run_signature", "with_signature"]


def check_run_signature(
    root: Path, rows: list[LogRow], integrity: CheckResult, trusted: PublicKey | str | None = None
) -> SignatureReport:
    """The signature verdict for the Run whose rows (all columns, by seq) ``integrity`` checked."""
    head = None
    if integrity.status == "pass":  # the chain holds: its last row is the head
        head = Head(str(rows[-1][6]), len(rows)) if rows else EMPTY_HEAD
    return check_signature(root, log_head=head, trusted=trusted)


def with_signature(integrity: CheckResult, signature: SignatureReport) -> CheckResult:
    """``integrity`` with the signature's verdict added: an error unless the signature is acceptable."""
    finding = Finding(
        signature.code,
        f"signature: {signature.message}",
        path=SIGNATURE_NAME,
        severity="note" if signature.ok else "error",
    )
    merged = CheckResult.of("integrity", integrity.summary, [*integrity.findings, finding], seconds=integrity.seconds)
    return replace(merged, findings_omitted=merged.findings_omitted + integrity.findings_omitted)
