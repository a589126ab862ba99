"""Check 3 of replay: the projections rebuilt from the log equal what is on disk.

* **run state**: ``projections.run_state`` folded from the log, summarised exactly as the Host
  summarises it, equals ``host/report.json`` (where present; its ``run_dir`` is not compared, so a
  copied Run still passes). The Validation rows are the run state's (``candidate-selected``, ranked by the
  selection's rule). Its scores also equal those the audit recomputed from the recorded Episodes
  (``projections.audit_scores``).
* **mirror**: ``projections.mirror`` folded from the log equals ``workspace/feedback/``
  (``diff_mirror``), file by file.
* **Program copies**: every materialized copy under ``host/programs/`` equals its snapshot
  (``kernel.replay.program_copies``).
* **retention**: the Object store's evicted tombstones are exactly the digests the
  ``projections.retention`` fold says are evicted (and not published again since), and
  ``retention.decide`` wants no further eviction under the Run's ``bulk_feedback_retention_bytes``.

The projections are folded in the one pass over the log that also runs the protocol audit
(``kernel.replay.log_pass``; a test keeps its list of kinds not folded honest).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any, Final

from evoledger.kernel.replay.log_pass import UNFOLDED_KINDS, FoldedProjections, fold_log
from evoledger.kernel.replay.program_copies import program_copy_findings
from evoledger.kernel.replay.record import RunRecord
from evoledger.kernel.replay.report import CheckResult, Finding
from evoledger.kernel.run.config import PROTOCOL_EPISODE_CAP
from evoledger.kernel.run.layout import read_report
from evoledger.kernel.run.runner import RunResult, summarize
from evoledger.ledger.errors import LedgerError, UnsafePathError
from evoledger.projections import retention
from evoledger.projections.audit import AuditReport
from evoledger.projections.audit_scores import report_score_findings
from evoledger.projections.mirror_files import diff_mirror, sync_mirror

__all__ = ["UNFOLDED_KINDS", "ProjectionRebuild"]

_MEANING: Final = {
    "missing": "the log publishes this file to the Agent but it is not on disk (deleted; --rebuild restores it)",
    "extra": "this file is in the Agent's mirror but no public Event puts it there (written outside the Host)",
    "changed": "its bytes differ from what the log renders (edited after publication; --rebuild restores it)",
}


def _first_difference(on_disk: Any, rebuilt: Any, where: str) -> str | None:
    """The path of the first difference between two JSON values (``None`` when equal)."""
    if isinstance(on_disk, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(on_disk) | set(rebuilt)):
            found = _first_difference(on_disk.get(key), rebuilt.get(key), f"{where}.{key}" if where else key)
            if found is not None:
                return found
        return None
    if isinstance(on_disk, list) and isinstance(rebuilt, list) and len(on_disk) == len(rebuilt):
        for i, (a, b) in enumerate(zip(on_disk, rebuilt, strict=True)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    return None if on_disk == rebuilt else where


def _relative(record: RunRecord, exc: UnsafePathError) -> str | None:
    """The run-relative path an :class:`UnsafePathError` names."""
    root = f"{record.layout.root}/"
    return exc.path[len(root) :] if exc.path is not None and exc.path.startswith(root) else exc.path


def _value_at(value: Any, path: str) -> Any:
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            value = value[int(part[1:-1])] if isinstance(value, list) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value


class ProjectionRebuild:
    """The three projections folded from one Run's record, and their comparison with the disk."""

    def __init__(self, record: RunRecord, audit: AuditReport | None, folded: FoldedProjections | None = None) -> None:
        """``folded``: the projections already folded from ``record`` (by :func:`fold_log`); else folded here.

        ``audit`` (whose score direction ranks the Validation entries of the report) may be set later,
        before :meth:`check`: ``evoledger replay`` compares the mirror while the audit still runs.
        """
        start = time.perf_counter()
        self.record = record
        self.audit = audit
        self._mirror_result: tuple[list[Finding], int] | None = None
        self._summary: RunResult | None = None
        if folded is None:
            folded = fold_log(record.rows, episode_cap=PROTOCOL_EPISODE_CAP, max_violations=0).projections
        self.folded = folded
        self.findings: list[Finding] = list(folded.findings)
        self.run_state = folded.run_state
        self.mirror = folded.mirror
        self.retention = folded.retention
        self.fold_seconds = time.perf_counter() - start

    def rebuild_mirror(self) -> dict[str, Any]:
        """Regenerate ``workspace/feedback/`` from the fresh mirror fold (``--rebuild``); what was done."""
        target = self.record.layout.feedback
        self._mirror_result = None  # compare again after rewriting
        try:
            self.record.layout.check_safe()  # nothing is written or deleted through a link
            done = sync_mirror(self.mirror, target, self.record.objects)
        except LedgerError as exc:
            return {"target": str(target), "error": f"the mirror cannot be rebuilt: {exc}"}
        return {
            "target": str(target),
            "written": len(done.written),
            "deleted": len(done.deleted),
            "unchanged": done.unchanged,
            "bytes_written": done.bytes_written,
            "garbage": [f"{path}: {why}" for path, why in done.garbage[:20]],  # odd entries removed (first 20)
        }

    def compare_mirror(self) -> None:
        """Compare the mirror with ``workspace/feedback/`` now; :meth:`check` reports it instead of comparing again."""
        start = time.perf_counter()
        findings: list[Finding] = []
        self._mirror_result = findings, self._mirror(findings)
        self.fold_seconds += time.perf_counter() - start

    def check(self) -> CheckResult:
        """Compare the three projections with the disk (its time includes parsing and folding the log)."""
        start = time.perf_counter()
        findings = list(self.findings)
        findings += self._unsafe_entries()
        findings += self._run_state()
        if self._mirror_result is None:
            mirror_files = self._mirror(findings)
        else:
            findings += self._mirror_result[0]
            mirror_files = self._mirror_result[1]
        findings += self._retention()
        findings += program_copy_findings(self.record, (v.program_digest for v in self.run_state.submissions.values()))
        summary = (
            f"run state, {mirror_files} mirror files and {len(self.retention.evicted)} evicted digests "
            "rebuilt from the log"
        )
        elapsed = self.fold_seconds + time.perf_counter() - start
        return CheckResult.of("projections", summary, findings, seconds=elapsed)

    # -- run state ----------------------------------------------------------------------------------
    def _direction(self) -> str | None:
        return self.audit.score_direction if self.audit is not None else None

    def summary(self) -> RunResult:
        """The Run's summary as the log tells it: what ``evoledger run`` and ``resume`` print and report.

        Made once, when first asked for: set :attr:`audit` (whose score direction it may need) before."""
        if self._summary is not None:
            return self._summary
        state = self.run_state
        direction = self._direction()
        if state.score_direction is None and direction in ("maximize", "minimize"):  # learnt by the audit
            state = replace(state, score_direction="maximize" if direction == "maximize" else "minimize")
        self._summary = summarize(self.record.layout, state)
        return self._summary

    def _unsafe_entries(self) -> list[Finding]:
        """A link, fifo or device where the Host writes (``workspace``, ``host``, ...): reported, never followed."""
        try:
            self.record.layout.check_safe()
        except UnsafePathError as exc:
            return [Finding("path_unsafe", str(exc), path=_relative(self.record, exc))]
        except OSError as exc:
            return [Finding("path_unsafe", f"the run directory cannot be checked: {exc}")]
        return []

    def _run_state(self) -> list[Finding]:
        where = "host/report.json"
        try:
            raw = read_report(self.record.layout)
        except (LedgerError, OSError) as exc:
            return [Finding("report_unreadable", f"{where} cannot be read: {exc}", path=where)]
        if raw is None:
            return [
                Finding(
                    "report_absent",
                    f"{where} is absent (the Run has not ended, or its Host died before "
                    "writing it): the run state was folded but not compared",
                    path=where,
                    severity="note",
                )
            ]
        try:
            on_disk = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            return [Finding("report_unreadable", f"{where} is not readable JSON: {exc}", path=where)]
        rebuilt = self.summary().model_dump(mode="json")
        if not isinstance(on_disk, dict):
            return [Finding("report_mismatch", f"{where} is not a JSON object", path=where)]
        scores = self.audit.scores if self.audit is not None else None
        recomputed = [] if scores is None else report_score_findings(on_disk, scores)
        findings = [Finding("report_score", message, path=where) for message in recomputed]
        on_disk.pop("run_dir", None)
        rebuilt.pop("run_dir", None)
        if self._direction() is None:  # the ranking cannot be re-derived: compare the entries only
            for doc in (on_disk, rebuilt):
                if isinstance(doc.get("validation"), list):
                    doc["validation"] = sorted(doc["validation"], key=lambda v: str(v.get("submission_id")))
        found = _first_difference(on_disk, rebuilt, "")
        if found is None:
            return findings
        return [
            *findings,
            Finding(
                "report_mismatch",
                f"{where} says {found} = {_value_at(on_disk, found)!r:.200} but the run state rebuilt from the log "
                f"gives {_value_at(rebuilt, found)!r:.200}: the report was edited or written from another state",
                path=where,
            ),
        ]

    # -- mirror -------------------------------------------------------------------------------------
    def _mirror(self, findings: list[Finding]) -> int:
        try:
            self.record.layout.check_safe()
        except (UnsafePathError, OSError):
            return 0  # reported by check(): nothing is read through a link
        try:
            differences = diff_mirror(self.mirror, self.record.layout.feedback, self.record.objects)
        except LedgerError as exc:
            findings.append(
                Finding(
                    "mirror_unrenderable",
                    f"the mirror cannot be rendered from the log: {exc}",
                    path="workspace/feedback",
                )
            )
            return len(self.mirror.files)
        findings.extend(
            Finding(f"mirror_{d.problem}", _MEANING[d.problem], path=f"workspace/feedback/{d.path}")
            for d in differences
        )
        return len(self.mirror.files)

    # -- retention ----------------------------------------------------------------------------------
    def _retention(self) -> list[Finding]:
        state = self.retention
        expected = {d for d in state.evicted if d not in state.holders and d not in state.permanent}
        try:
            tombstones = {e.digest for e in self.record.objects.entries() if e.state == "evicted"}
        except LedgerError as exc:
            return [Finding("objects_unreadable", f"the Object store cannot be listed: {exc}")]
        findings = [
            Finding(
                "eviction_unrecorded",
                "this Object was evicted but the retention fold of the log does not "
                "evict it (bytes deleted outside bulk retention)",
                digest=d,
            )
            for d in sorted(tombstones - expected)
        ]
        findings += [
            Finding(
                "eviction_not_applied",
                "the log records this eviction but the Object store still holds the "
                "bytes (the Host died between the two; `evoledger resume` applies it)",
                digest=d,
            )
            for d in sorted(expected - tombstones)
        ]
        config = self.record.config
        if config is None:
            findings.append(
                Finding("note", "retention decisions not re-checked: the configuration is unreadable", severity="note")
            )
            return findings
        decision = retention.decide(state, config.bulk_feedback_retention_bytes)
        if decision.digests:
            findings.append(
                Finding(
                    "retention_behind",
                    f"bulk Feedback counts {decision.bytes_before} bytes over the cap of {decision.cap_bytes}: the "
                    f"retention rule still wants to evict {len(decision.digests)} digest(s) of "
                    f"{list(decision.submission_ids)[:5]} that the log never evicted",
                    digest=decision.digests[0],
                )
            )
        return findings
