"""``replay()``: audit a Run end to end -- integrity, protocol, projections and (optionally) execution.

1. **integrity** is :func:`evoledger.ledger.verify.verify`: the hash chain, the head manifest, every
   referenced Object present and matching, or evicted by a recorded ``bulk-evicted`` Event.
2. **protocol** is the pure audit fold :func:`evoledger.projections.audit.fold` over the log's rows,
   plus the pool commitment: the ``episode-planned`` seeds must hash to the ``pool_commitment`` that
   ``run-created`` recorded before the Agent started, and (``kernel.replay.plan_check``) the Run's
   secret key must be recorded host-only in its ``run-key`` Event and give every planned seed. The
   Benchmark's score direction is read from the log (``run-created``'s ``benchmark_spec``, or the
   selection's tie-break text); only for older
   records that hold neither, and only when a rule needs it, is it taken from the Benchmark registry
   via ``run-created``'s configuration (the report says which).
3. **projections** (``kernel.replay.projection_check``): run state, Agent mirror and retention,
   rebuilt from the log, against ``host/report.json``, ``workspace/feedback/`` and the Object store.
4. **execution** (``kernel.replay.execution_check``, only when asked): every recorded Episode re-run.

Checks 1-4 read the log once (:func:`evoledger.kernel.replay.record.open_record`). On a large log,
checks 1-2 then run in a forked second process while this one runs check 3
(``kernel.replay.side_process``); otherwise one pass over the rows
(:func:`evoledger.kernel.replay.log_pass.fold_log`) parses every payload once for both the protocol
audit and the projection folds (its time is reported with the protocol check), and the integrity
walk reuses the Object references that pass read. Either way the report is the same. The garbage
collector is paused while checks 1-3 run: they allocate many objects that all stay alive until the
end, which would only make the collector scan them again and again (the rows are freed before it
resumes). Damage never raises: it is reported. Only a directory without any ledger raises
:class:`LedgerNotFoundError`.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from evoledger.kernel.authoring import EpisodeSpec, Split
from evoledger.kernel.planning import PlannedEpisode, plan_commitment
from evoledger.kernel.registry import resolve_benchmark
from evoledger.kernel.replay.execution_check import check_execution
from evoledger.kernel.replay.log_pass import FoldedLog, fold_log, fold_projections
from evoledger.kernel.replay.plan_check import plan_findings
from evoledger.kernel.replay.projection_check import ProjectionRebuild
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.report import CheckResult, Finding, ReplayReport
from evoledger.kernel.replay.side_process import start_side_checks
from evoledger.kernel.run.config import PROTOCOL_EPISODE_CAP
from evoledger.kernel.run.layout import RunLayout
from evoledger.ledger.errors import EvoLedgerError, LedgerError, LedgerNotFoundError
from evoledger.ledger.verify import VerifyReport, verify, verify_opened
from evoledger.projections import audit

__all__ = ["check_integrity", "check_protocol", "replay"]

_MAX_FINDINGS = 200


@contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_integrity(
    run_dir: str | os.PathLike[str], record: RunRecord | None = None, folded: FoldedLog | None = None
) -> CheckResult:
    """Check 1: :func:`verify` as a :class:`CheckResult` (warnings such as a lagging manifest do not fail it).

    With the Run's opened ``record`` it verifies the rows already read (and, with the pass ``folded``
    over them, reuses the Object references that pass read from the Episodes' payloads).
    """
    start = time.perf_counter()
    if record is None:
        report = verify(run_dir, max_problems=_MAX_FINDINGS)
    else:
        references = folded.references if folded is not None else None
        report = verify_opened(
            run_dir, record.db, record.objects, record.rows, references=references, max_problems=_MAX_FINDINGS
        )
    return _integrity_result(report, time.perf_counter() - start)


def _integrity_result(report: VerifyReport, seconds: float) -> CheckResult:
    findings = [
        Finding(p.code, f"{p.check}: {p.message}", seq=p.seq, digest=p.digest, severity=p.severity)
        for p in report.problems
    ]
    if report.problems_omitted:
        findings.append(Finding("problems_omitted", f"{report.problems_omitted} more problems were not listed"))
    summary = f"{report.events_checked} events and {report.objects_checked} Objects checked"
    return CheckResult.of("integrity", summary, findings, seconds=seconds)


def _registry_direction(record: RunRecord) -> tuple[str | None, str]:
    config = record.config
    if config is None:
        return None, "unknown (the recorded configuration cannot be read)"
    try:
        spec = resolve_benchmark(config.benchmark).spec
    except EvoLedgerError as exc:
        return None, f"unknown (the Benchmark {config.benchmark.name!r} cannot be built here: {exc})"
    return spec.score_direction, (
        f"the Benchmark registry ({config.benchmark.name!r}): the log does not record the score direction"
    )


def _commitment_findings(record: RunRecord, report: audit.AuditReport) -> list[Finding]:
    created = record.created
    if created is None or not report.planned:
        return []
    plans = [
        PlannedEpisode(
            spec=EpisodeSpec(split=cast(Split, p.split), index=p.index, seed=p.env_seed, scenario=p.scenario or None),
            policy_seed=p.policy_seed,
        )
        for p in report.planned
    ]
    recorded, actual = created.get("pool_commitment"), plan_commitment(plans)
    if recorded == actual:
        return []
    return [
        Finding(
            "pool_commitment",
            f"the {len(plans)} episode-planned seeds hash to {actual} but run-created committed to {recorded}: "
            "the Host's Episode pool changed after the Run was created",
            seq=0,
        )
    ]


def _fold(record: RunRecord) -> FoldedLog:
    return fold_log(record.rows, episode_cap=PROTOCOL_EPISODE_CAP, max_violations=_MAX_FINDINGS)


def check_protocol(record: RunRecord, folded: FoldedLog | None = None) -> tuple[CheckResult, audit.AuditReport]:
    """Check 2: the audit fold over the record's rows, the pool commitment, the key and the plan it gives, and
    where the direction came from.

    ``folded``: the pass over the record's rows that already ran the audit (else it runs here).
    """
    start = time.perf_counter()
    folded = folded if folded is not None else _fold(record)
    report = folded.audit
    if report.direction_needed:
        direction, source = _registry_direction(record)
        if direction is not None:
            report = audit.fold(
                (row[:5] for row in record.rows),
                score_direction=direction,
                direction_source=source,
                episode_cap=PROTOCOL_EPISODE_CAP,
                max_violations=_MAX_FINDINGS,
            )
    earliest_first = sorted(report.violations, key=lambda v: -1 if v.seq is None else v.seq)
    findings = [Finding(v.rule, v.message, seq=v.seq) for v in earliest_first]
    if report.violations_omitted:
        findings.append(Finding("violations_omitted", f"{report.violations_omitted} more violations were not listed"))
    findings.extend(_commitment_findings(record, report))
    findings.extend(plan_findings(record, report.planned))
    if record.config_error is not None:
        findings.append(Finding("config_unreadable", record.config_error, seq=0, severity="warning"))
    findings.extend(Finding("note", note, severity="note") for note in report.notes)
    if report.score_direction is not None:
        findings.append(
            Finding(
                "score_direction",
                f"score direction {report.score_direction} from {report.direction_source}",
                severity="note",
            )
        )
    total = report.rules.budget if report.rules is not None else "?"
    summary = (
        f"{report.events} events; budget {report.budget_used}/{total} used, {report.submissions} Submissions, "
        f"selected {report.selected or 'none'}, ended {report.ended or 'not yet'}"
    )
    seconds = folded.seconds + time.perf_counter() - start
    return CheckResult.of("protocol", summary, findings, seconds=seconds), report


def replay(
    run_dir: str | os.PathLike[str],
    *,
    execute: bool = False,
    rebuild: bool = False,
    workers: int | None = None,
    parallel: bool | None = None,
) -> ReplayReport:
    """Audit the Run in ``run_dir`` (see the module docstring); ``rebuild`` first regenerates its mirror.

    ``parallel``: run checks 1-2 in a forked second process while this one runs check 3
    (``kernel.replay.side_process``): ``None`` when the log is large and it is safe, ``True``
    whenever it is safe, ``False`` never. The report is the same either way.
    """
    root = Path(run_dir)
    if rebuild:  # refused before anything is read or written: nothing is created or deleted through a link
        RunLayout(root).check_safe()
    with _collector_paused():
        try:
            record = open_record(root)
        except LedgerNotFoundError:
            raise
        except LedgerError as exc:
            why = f"the log cannot be read ({exc}); see the integrity check"
            skipped = [CheckResult.skipped(n, why) for n in ("protocol", "projections", "execution")]
            return ReplayReport(str(root), (check_integrity(root), *skipped))
        try:
            integrity, protocol, report, projection_result, rebuilt = _checks_1_to_3(root, record, rebuild, parallel)
        except BaseException:
            record.close()
            raise
        if not execute:  # free the rows while the collector is paused: it would otherwise scan them all once
            record.rows = []
    with record:
        if execute:
            execution = check_execution(record, report, workers=workers)
        else:
            execution = CheckResult.skipped("execution", "not asked for (--execute re-runs every recorded Episode)")
    return ReplayReport(str(root), (integrity, protocol, projection_result, execution), rebuilt=rebuilt)


def _checks_1_to_3(
    root: Path, record: RunRecord, rebuild: bool, parallel: bool | None
) -> tuple[CheckResult, CheckResult, audit.AuditReport, CheckResult, dict[str, Any] | None]:
    side = None
    if parallel is not False:
        side = start_side_checks(
            root, record, episode_cap=PROTOCOL_EPISODE_CAP, max_problems=_MAX_FINDINGS, force=parallel is True
        )
    if side is None:
        folded = _fold(record)
        integrity = check_integrity(root, record, folded)
        protocol, report = check_protocol(record, folded)
        projections = ProjectionRebuild(record, report, folded.projections)
    else:
        try:  # check 3 here while checks 1-2 run in the side process
            start = time.perf_counter()
            projections = ProjectionRebuild(record, None, fold_projections(record.rows))
            projections.fold_seconds = time.perf_counter() - start
            if not rebuild:
                projections.compare_mirror()
        except BaseException:
            side.abandon()
            raise
        found = side.collect()
        if found is None:  # the side process failed: run its checks here
            folded = _fold(record)
            integrity = check_integrity(root, record, folded)
        else:
            folded = FoldedLog(found.audit, projections.folded, {}, found.audit_seconds)
            integrity = _integrity_result(found.integrity, found.integrity_seconds)
        protocol, report = check_protocol(record, folded)
        projections.audit = report
    rebuilt = projections.rebuild_mirror() if rebuild else None
    if rebuilt is not None and integrity.status == "fail":
        rebuilt["warning"] = "rebuilt from a log that fails the integrity check: the mirror shows what it says"
    return integrity, protocol, report, projections.check(), rebuilt
