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
   via ``run-created``'s configuration (the report says which). The same fold recomputes every
   aggregate score from the recorded Episodes with the Benchmark's declared rule
   (``projections.audit_scores``): each Feedback, Validation and Assessment score, the selection
   and ``run-ended``'s summary; one that differs is a finding. A recorded Benchmark named by an import
   string is never imported unless the user trusts the record (``trust_benchmark``); a note says what was
   not checked, and ``execute`` refuses (:class:`UntrustedRecordError`) before anything runs.
3. **projections** (``kernel.replay.projection_check``): run state, Agent mirror and retention,
   rebuilt from the log, against ``host/report.json`` (whose scores must also equal the recomputed
   ones), ``workspace/feedback/`` and the Object store.
4. **execution** (``kernel.replay.execution_check``, only when asked): every recorded Episode re-run,
   its trajectory digest, return and status compared: the very returns and statuses check 2 recomputes
   the scores from, so a clean ``--execute`` means the headline numbers follow from re-executed Episodes.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from evoledger.kernel.authoring import EpisodeSpec, Split
from evoledger.kernel.execution import ExecutionBackend
from evoledger.kernel.planning import PlannedEpisode, plan_commitment
from evoledger.kernel.registry import UntrustedRecordError, default_registry, is_import_string, resolve_recorded
from evoledger.kernel.replay.execution_check import check_execution
from evoledger.kernel.replay.log_pass import FoldedLog, fold_log, fold_projections
from evoledger.kernel.replay.plan_check import plan_findings
from evoledger.kernel.replay.projection_check import ProjectionRebuild
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.report import CheckResult, Finding, ReplayReport
from evoledger.kernel.replay.side_process import start_side_checks
from evoledger.kernel.replay.signature import check_run_signature, with_signature
from evoledger.kernel.run.config import PROTOCOL_EPISODE_CAP
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.runner import RunResult
from evoledger.ledger.errors import LedgerError, LedgerNotFoundError
from evoledger.ledger.signing_keys import PublicKey
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


def _registry_direction(record: RunRecord, trusted: bool) -> tuple[str | None, str]:
    config = record.config
    if config is None:
        return None, "unknown (the recorded configuration cannot be read)"
    try:
        spec = resolve_recorded(config.benchmark, trusted=trusted).spec
    except UntrustedRecordError:
        return None, (
            f"unknown: the recorded Benchmark {config.benchmark.name!r} is an import string, which replay does not "
            "import from a record (pass --trust-recorded-benchmark if you trust its author); the rules that need "
            "the score direction were not checked"
        )
    except Exception as exc:  # a registered factory given a recorded config: reported, never raised
        return None, (
            f"unknown (the Benchmark {config.benchmark.name!r} cannot be built here: "
            f"{type(exc).__name__}: {str(exc)[:300]})"
        )
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


def check_protocol(
    record: RunRecord, folded: FoldedLog | None = None, *, trust_benchmark: bool = False
) -> tuple[CheckResult, audit.AuditReport]:
    """Check 2: the audit fold over the record's rows, the pool commitment, the key and the plan it gives, and
    where the direction came from.

    ``folded``: the pass over the record's rows that already ran the audit (else it runs here).
    ``trust_benchmark``: a recorded import-string Benchmark may be imported (the user said so).
    """
    start = time.perf_counter()
    folded = folded if folded is not None else _fold(record)
    report = folded.audit
    unknown_direction: str | None = None
    if report.direction_needed:
        direction, source = _registry_direction(record, trust_benchmark)
        if direction is None:
            unknown_direction = f"score direction {source}"
        else:
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
    findings.extend(plan_findings(record, report.planned, trust_benchmark=trust_benchmark))
    if record.config_error is not None:
        findings.append(Finding("config_unreadable", record.config_error, seq=0, severity="warning"))
    findings.extend(Finding("note", note, severity="note") for note in report.notes)
    if unknown_direction is not None:
        findings.append(Finding("score_direction_unknown", unknown_direction, severity="note"))
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
    isolation: str = "auto",
    trusted_key: PublicKey | str | None = None,
    trust_benchmark: bool = False,
    on_episode: Callable[[int, int], None] | None = None,
    backend: ExecutionBackend | None = None,
) -> ReplayReport:
    """Audit the Run in ``run_dir`` (see the module docstring); ``rebuild`` first regenerates its mirror.

    ``isolation``: how ``execute`` runs the recorded Programs (never taken from the record, which is untrusted).
    ``trust_benchmark``: the user trusts the record's author, so a Benchmark it names by import string may be
    imported (to learn the score direction, re-derive the plan and, with ``execute``, re-run Episodes).
    Without it, ``execute`` of such a record raises :class:`UntrustedRecordError` before anything runs, as it raises
    :class:`~evoledger.ledger.errors.MissingExtraError` for a registered Benchmark whose optional extra is missing.
    ``workers`` (else the record's figure) is capped by this machine's CPUs.

    ``parallel``: run checks 1-2 in a forked second process while this one runs check 3
    (``kernel.replay.side_process``): ``None`` when the log is large and it is safe, ``True``
    whenever it is safe, ``False`` never. The report is the same either way. The signature (``ledger.sig``) is
    part of the integrity check; with ``trusted_key`` (a public key or fingerprint) it must be that key's.
    ``on_episode(done, total)``: the progress of ``execute``, once per re-run Episode (see ``check_execution``).
    ``backend``: where ``execute`` re-runs Episodes (default: locally; the digests must match either way).
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
            if execute and not trust_benchmark:
                _refuse_untrusted_execution(record)
            if execute and record.config is not None:  # MissingExtraError (the install command) before any check
                default_registry().check_installed(record.config.benchmark.name)
            integrity, protocol, report, projection_result, rebuilt, run_result = _checks_1_to_3(
                root, record, rebuild, parallel, trust_benchmark
            )
            signature = check_run_signature(root, record.rows, integrity, trusted_key)
            integrity = with_signature(integrity, signature)
        except BaseException:
            record.close()
            raise
        if not execute:  # free the rows while the collector is paused: it would otherwise scan them all once
            record.rows = []
    with record:
        if execute:
            execution = check_execution(
                record,
                report,
                workers=workers,
                isolation=isolation,
                trust_benchmark=trust_benchmark,
                on_episode=on_episode,
                backend=backend,
            )
        else:
            execution = CheckResult.skipped("execution", "not asked for (--execute re-runs every recorded Episode)")
    return ReplayReport(
        str(root),
        (integrity, protocol, projection_result, execution),
        rebuilt=rebuilt,
        signature=signature.to_dict(),
        run_result=run_result,
    )


def _refuse_untrusted_execution(record: RunRecord) -> None:
    config = record.config
    if config is not None and is_import_string(config.benchmark.name):
        raise UntrustedRecordError(
            f"{record.layout.root} names its Benchmark by the import string {config.benchmark.name!r}: re-running "
            "its Episodes would import and run that code. If you trust whoever wrote this record, pass "
            "--trust-recorded-benchmark; without --execute, replay audits it without importing anything"
        )


def _checks_1_to_3(
    root: Path, record: RunRecord, rebuild: bool, parallel: bool | None, trust_benchmark: bool
) -> tuple[CheckResult, CheckResult, audit.AuditReport, CheckResult, dict[str, Any] | None, RunResult]:
    side = None
    if parallel is not False:
        side = start_side_checks(
            root, record, episode_cap=PROTOCOL_EPISODE_CAP, max_problems=_MAX_FINDINGS, force=parallel is True
        )
    if side is None:
        folded = _fold(record)
        integrity = check_integrity(root, record, folded)
        protocol, report = check_protocol(record, folded, trust_benchmark=trust_benchmark)
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
        protocol, report = check_protocol(record, folded, trust_benchmark=trust_benchmark)
        projections.audit = report
    rebuilt = projections.rebuild_mirror() if rebuild else None
    if rebuilt is not None and integrity.status == "fail":
        rebuilt["warning"] = "rebuilt from a log that fails the integrity check: the mirror shows what it says"
    return integrity, protocol, report, projections.check(), rebuilt, projections.summary()
