"""Part of check 3 of replay: materialized Program copies under ``host/programs/`` equal their snapshots.

Versions before the private per-execution copies (:mod:`evoledger.kernel.run.private_copies`) executed the
Programs of a Run from ``host/programs/<first 32 hex digits of the digest>/``, a directory the Agent
could rewrite after submitting, so that Validation and Assessment ran other bytes than the snapshot.
Current Runs write nothing there; any copy that is there must still equal its snapshot byte for byte,
and anything else there (an unknown name, a link, a file) is reported too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import Final

from evoledger.kernel.replay.record import RunRecord
from evoledger.kernel.replay.report import Finding
from evoledger.kernel.run.private_copies import copy_differences
from evoledger.ledger.errors import EvoLedgerError

__all__ = ["program_copy_findings"]

_MAX_ENTRIES: Final = 1000
_SHOWN: Final = 3


def program_copy_findings(record: RunRecord, program_digests: Iterable[str]) -> list[Finding]:
    """Findings for every copy under ``host/programs/`` that differs from (or names no) recorded snapshot."""
    root = record.layout.host / "programs"
    where = "host/programs"
    try:
        if not stat.S_ISDIR(os.lstat(record.layout.host).st_mode):
            return []  # a link or file at host/: reported as path_unsafe, never followed
        info = os.lstat(root)
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [Finding("program_copy_unreadable", f"{where} cannot be read ({exc.strerror})", path=where)]
    if not stat.S_ISDIR(info.st_mode):
        return [Finding("program_copy_tampered", f"{where} is not a directory (a link or a file)", path=where)]
    by_name = {d.removeprefix("sha256:")[:32]: d for d in program_digests}
    findings: list[Finding] = []
    try:
        with os.scandir(root) as listing:
            names = sorted(e.name for _, e in zip(range(_MAX_ENTRIES), listing, strict=False))
    except OSError as exc:
        return [Finding("program_copy_unreadable", f"{where} cannot be listed ({exc.strerror})", path=where)]
    for name in names:
        path = f"{where}/{name}"
        digest = by_name.get(name)
        if name.startswith("."):  # a materialization's staging directory left by a crash
            continue
        if digest is None:
            findings.append(Finding("program_copy_unknown", f"{path} names no Program snapshot of this Run", path=path))
            continue
        if not stat.S_ISDIR(os.lstat(root / name).st_mode):
            findings.append(Finding("program_copy_tampered", f"{path} is not a directory", path=path, digest=digest))
            continue
        try:
            differences = copy_differences(digest, record.objects, root / name)
        except EvoLedgerError as exc:
            findings.append(Finding("program_copy_unreadable", f"{path}: {exc}", path=path, digest=digest))
            continue
        if differences:
            shown = "; ".join(differences[:_SHOWN]) + (
                f"; and {len(differences) - _SHOWN} more" if len(differences) > _SHOWN else ""
            )
            findings.append(
                Finding(
                    "program_copy_tampered",
                    f"the materialized copy of {digest} differs from its snapshot ({shown}); it was rewritten "
                    "after the Host materialized it, and a Host before the private per-execution copies ran it",
                    path=path,
                    digest=digest,
                )
            )
    return findings
