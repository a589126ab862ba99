"""``replay()``: audit a Run end to end -- integrity, protocol, projections and (optionally) execution.

1. **integrity** is :func:`evoledger.ledger.verify.verify`: the hash chain, the head manifest, every
   referenced Object present and matching, or evicted by a recorded ``bulk-evicted`` Event.
2. **protocol** is the pure audit fold :func:`evoledger.projections.audit.fold` over the log's rows,
   plus the pool commitment: the ``episode-planned`` seeds must hash to the ``pool_commitment`` that
   ``run-created`` recorded before the Agent started. The Benchmark's score direction is read from
   the log (``run-created``'s ``benchmark_spec``, or the selection's tie-break text); only for older
   records that hold neither, and only when a rule needs it, is it taken from the Benchmark registry
   via ``run-created``'s configuration (the report says which).
3. **projections** (``kernel.replay.projection_check``): run state, Agent mirror and retention,
   rebuilt from the log, against ``host/report.json``, ``workspace/feedback/`` and the Object store.
4. **execution** (``kernel.replay.execution_check``, only when asked): every recorded Episode re-run.

Checks 2-4 read the log once (:func:`evoledger.kernel.replay.record.open_record`). Damage never
raises: it is reported. Only a directory without any ledger raises :class:`LedgerNotFoundError`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import cast

from evoledger.kernel.authoring import EpisodeSpec, Split
from evoledger.kernel.planning import PlannedEpisode, plan_commitment
from evoledger.kernel.registry import resolve_benchmark
from evoledger.kernel.replay.execution_check import check_execution
from evoledger.kernel.replay.projection_check import ProjectionRebuild
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.report import CheckResult, Finding, ReplayReport
from evoledger.kernel.run.config import PROTOCOL_EPISODE_CAP
from evoledger.ledger.errors import EvoLedgerError, LedgerError, LedgerNotFoundError
from evoledger.ledger.verify import verify
from evoledger.projections import audit

__all__ = ["check_integrity", "check_protocol", "replay"]

_MAX_FINDINGS = 200


def check_integrity(run_dir: str | os.PathLike[str]) -> CheckResult:
    """Check 1: :func:`verify` as a :class:`CheckResult` (warnings such as a lagging manifest do not fail it)."""
    start = time.perf_counter()
    report = verify(run_dir, max_problems=_MAX_FINDINGS)
    findings = [
        Finding(p.code, f"{p.check}: {p.message}", seq=p.seq, digest=p.digest, severity=p.severity)
        for p in report.problems
    ]
    if report.problems_omitted:
        findings.append(Finding("problems_omitted", f"{report.problems_omitted} more problems were not listed"))
    summary = f"{report.events_checked} events and {report.objects_checked} Objects checked"
    return CheckResult.of("integrity", summary, findings, seconds=time.perf_counter() - start)


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


def check_protocol(record: RunRecord) -> tuple[CheckResult, audit.AuditReport]:
    """Check 2: the audit fold over the record's rows, the pool commitment, and where the direction came from."""
    start = time.perf_counter()
    report = audit.fold(record.rows, episode_cap=PROTOCOL_EPISODE_CAP, max_violations=_MAX_FINDINGS)
    if report.direction_needed:
        direction, source = _registry_direction(record)
        if direction is not None:
            report = audit.fold(
                record.rows,
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
    return CheckResult.of("protocol", summary, findings, seconds=time.perf_counter() - start), report


def replay(
    run_dir: str | os.PathLike[str], *, execute: bool = False, rebuild: bool = False, workers: int | None = None
) -> ReplayReport:
    """Audit the Run in ``run_dir`` (see the module docstring); ``rebuild`` first regenerates its mirror."""
    root = Path(run_dir)
    try:
        record = open_record(root)
    except LedgerNotFoundError:
        raise
    except LedgerError as exc:
        why = f"the log cannot be read ({exc}); see the integrity check"
        skipped = [CheckResult.skipped(n, why) for n in ("protocol", "projections", "execution")]
        return ReplayReport(str(root), (check_integrity(root), *skipped))
    with record:
        integrity = check_integrity(root)
        protocol, report = check_protocol(record)
        projections = ProjectionRebuild(record, report)
        rebuilt = projections.rebuild_mirror() if rebuild else None
        if rebuilt is not None and integrity.status == "fail":
            rebuilt["warning"] = "rebuilt from a log that fails the integrity check: the mirror shows what it says"
        projection_result = projections.check()
        if execute:
            execution = check_execution(record, report, workers=workers)
        else:
            execution = CheckResult.skipped("execution", "not asked for (--execute re-runs every recorded Episode)")
    return ReplayReport(str(root), (integrity, protocol, projection_result, execution), rebuilt=rebuilt)
