"""Replay benchmark: checks 1-3 of ``evoledger replay`` on a large synthetic Run, against raw sqlite3.

Run: ``python bench/replay_bench.py [--submissions 1000] [--episodes 49] [--repeat 5]``.

The Run is built synthetically but validly: every Event is a real Event model appended through
``Ledger.append`` in batches, budgets are conserved, Feedback is published with a compact content
Object, a permanent and a bulk Artifact, bulk retention evicts through the real retention
projection, Candidates are validated, selected with the real rule and assessed, and the Agent
mirror and ``host/report.json`` are written the way the Host writes them. With the defaults it
holds ~103k Events and 1000 Submissions. Trajectory Objects are drawn from a pool of distinct
Objects (deterministic Policies repeat trajectories), so the Object store stays realistic in size.

The baseline reads the very same rows (every column of ``events``, then every row of ``objects``)
with plain ``sqlite3``; the ratio ``replay / raw`` is what the target (<= 3x) is about. The machine
is noisy, so raw reads and replays alternate and the table shows medians (and the median of the
per-pair ratios). The component rows time each step of checks 1-3 on its own, the way ``replay``
runs it (collector paused), and the floor rows time what any replay in Python must at least do.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import orjson
from evoledger.kernel.authoring import starting_program
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.kernel.replay import ProjectionRebuild, open_record, replay
from evoledger.kernel.replay.log_pass import fold_log
from evoledger.kernel.run import AssessmentConfig, RunConfig, RunLayout, ValidationConfig
from evoledger.kernel.run.judging import CandidateResult, select
from evoledger.kernel.run.runner import summarize
from evoledger.kernel.run.setup import plan_run, planned_events, run_key_for
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.events import (
    AgentExited,
    AgentStarted,
    ArtifactRef,
    AssessmentFinished,
    BenchmarkIdentity,
    EpisodeFailure,
    EpisodeFinished,
    EpisodeStarted,
    EpisodeSummary,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    InfraFault,
    ProgramSnapshotted,
    RunCreated,
    RunEnded,
    RunKey,
    SubmissionAccepted,
    SubmissionRejected,
    ValidationEpisodeFinished,
)
from evoledger.ledger.snapshots import snapshot_program
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory, encode_trajectory
from evoledger.ledger.verify import verify, verify_opened
from evoledger.projections import mirror, retention, run_state
from evoledger.projections.audit import AuditFold
from evoledger.projections.mirror_files import diff_mirror, sync_mirror
from evoledger.projections.scoring import score_episodes
from rich.console import Console
from rich.table import Table

_TRAJECTORIES = 1000
_PROGRAMS = 20
_CANDIDATES = 3


def _clock() -> datetime:
    return datetime(2024, 1, 1, tzinfo=UTC)


def _trajectory(i: int) -> bytes:
    steps = 8 + i % 13
    return encode_trajectory(
        Trajectory(
            observations=[[round(0.01 * (i + s), 4)] * 4 for s in range(steps + 1)],
            actions=[(i + s) % 2 for s in range(steps)],
            rewards=[1.0] * steps,
            terminated=True,
            truncated=False,
        )
    )


def _programs(root: Path, ledger: Ledger) -> list[ProgramSnapshotted]:
    source = starting_program(resolve_benchmark(RunConfig().benchmark))
    events: list[ProgramSnapshotted] = []
    for k in range(_PROGRAMS):
        folder = root / f"program-{k}"
        folder.mkdir(parents=True)
        (folder / "policy.py").write_bytes((source / "policy.py").read_bytes())
        (folder / "params.json").write_text(canonical_json({"variant": k}).decode())
        events.append(snapshot_program(folder, ledger.objects).to_event("submission"))
    return events


class _Builder:
    """Appends a valid Run, submission by submission, keeping the retention projection current."""

    def __init__(self, root: Path, submissions: int, episodes: int) -> None:
        self.rng = random.Random(7)
        self.root = root
        self.layout = RunLayout(root / "run")
        self.layout.root.mkdir(parents=True)
        self.layout.create_dirs()
        self.ledger = Ledger.create(self.layout.root, clock=_clock)
        self.config = RunConfig(
            benchmark=BenchmarkRef(name="cartpole"),
            episode_budget=submissions * episodes,
            episode_pool_size=max(episodes, 1000),
            max_submissions=submissions,
            max_episodes_per_submission=episodes,
            validation=ValidationConfig(episodes=10, max_candidates=_CANDIDATES),
            assessment=AssessmentConfig(episodes=20),
            bulk_feedback_retention_bytes=400_000,
            seed=424242,
        )
        self.benchmark = resolve_benchmark(self.config.benchmark)
        rule = self.benchmark.spec.scoring
        if rule is None:
            raise SystemExit(f"the Benchmark {self.benchmark.spec.id!r} declares no scoring rule to record scores with")
        self.rule = rule
        self.key = run_key_for(self.config)
        self.plan = plan_run(self.benchmark, self.config, self.key)
        self.trajectories = self.ledger.objects.put_many(_trajectory(i) for i in range(_TRAJECTORIES))
        self.retention = retention.RetentionState()
        self.models: list[EventBase] = []
        self.batch: list[EventBase] = []
        self.remaining = self.config.episode_budget
        self.used = 0
        self.scores: dict[str, float] = {}
        self.programs: dict[str, str] = {}

    def emit(self, *events: EventBase) -> None:
        self.batch.extend(events)
        for event in events:
            self.retention = retention.apply(self.retention, event)

    def flush(self) -> None:
        if self.batch:
            self.ledger.append(self.batch)
            self.models.extend(self.batch)
            self.batch = []

    def start(self) -> None:
        spec = self.benchmark.spec
        self.emit(
            RunCreated(
                run_id="synthetic",
                benchmark=BenchmarkIdentity.of(spec.id, dict(spec.environment_parameters)),
                episode_budget=self.config.episode_budget,
                max_submissions=self.config.submission_limit,
                config=self.config.model_dump(mode="json"),
                benchmark_spec=spec.model_dump(mode="json", exclude={"parameters_digest"}),
                pool_commitment=self.plan.commitment,
                seed=self.config.seed,
                created_by="evoledger replay_bench",
            ),
            RunKey(key=self.key.hex()),
            *planned_events(self.plan),
        )
        self.snapshots = _programs(self.root / "programs", self.ledger)
        initial = snapshot_program(starting_program(self.benchmark), self.ledger.objects)
        self.emit(initial.to_event("initial"))
        self.emit(AgentStarted(agent="hill-climb", command=["python", "-m", "agent"], pid=4242))

    def episode(self, sid: str, index: int, n: int) -> EpisodeFinished:
        trajectory = self.trajectories[(index * 7 + n) % _TRAJECTORIES]
        if n % 97 == 13:
            tb = self.ledger.objects.put(f"Traceback: boom in episode {index} of {sid}\n".encode())
            log = self.ledger.objects.put(f"policy output {n}\n".encode())
            failure = EpisodeFailure(code="exception", message="ValueError: boom", traceback_digest=tb)
            return EpisodeFinished(
                submission_id=sid,
                split="train",
                index=index,
                status="exception",
                episode_return=0.0,
                steps=0,
                terminated=False,
                truncated=False,
                trajectory_digest=trajectory,
                policy_log_digest=log,
                failure=failure,
            )
        return EpisodeFinished(
            submission_id=sid,
            split="train",
            index=index,
            status="ok",
            episode_return=float(8 + n % 13),
            steps=8 + n % 13,
            terminated=True,
            truncated=False,
            trajectory_digest=trajectory,
        )

    def submission(self, k: int, episodes: int) -> None:
        sid = f"submission-{k:06d}"
        snap = self.snapshots[k % _PROGRAMS]
        digest = snap.program_digest
        if k % 50 == 0:
            self.emit(SubmissionRejected(code="episode_limit", message="outside the pool", retryable=False))
        indices = sorted(self.rng.sample(range(self.config.pool_size), episodes))
        self.emit(
            snap,
            SubmissionAccepted(
                submission_id=sid,
                program_digest=digest,
                episodes=indices,
                budget_before=self.remaining,
                budget_after=self.remaining - episodes,
                submissions_used=k,
            ),
            *(EpisodeStarted(submission_id=sid, split="train", index=i) for i in indices),
        )
        self.remaining -= episodes
        self.used += episodes
        outcomes: list[tuple[str, float]] = []
        for n, index in enumerate(indices):
            if (k * episodes + n) % 499 == 7:
                self.emit(
                    InfraFault(
                        submission_id=sid, split="train", indices=[index], refunded_units=1, reason="worker died"
                    )
                )
                self.remaining += 1
                self.used -= 1
                continue
            event = self.episode(sid, index, k * episodes + n)
            outcomes.append((event.status, event.episode_return))
            self.emit(event)
        score = score_episodes(self.rule, outcomes)
        self.scores[sid] = score
        self.programs[sid] = digest
        objects = self.ledger.objects
        csv = f"index,return\n{k},{score}\n".encode()
        trace = canonical_json({"submission": sid, "trace": [k % 7] * 250})
        self.emit(
            FeedbackPublished(
                submission_id=sid,
                score=score,
                content_digest=objects.put(canonical_json({"score": score, "episodes": len(outcomes)})),
                artifacts=[
                    ArtifactRef(
                        name="episodes.csv",
                        media_type="text/csv",
                        digest=objects.put(csv),
                        size=len(csv),
                        retention="permanent",
                    ),
                    ArtifactRef(
                        name="trace.json",
                        media_type="application/json",
                        digest=objects.put(trace),
                        size=len(trace),
                        retention="bulk",
                    ),
                ],
                budget_used=self.used,
                budget_left=self.remaining,
            )
        )
        decision = retention.decide(self.retention, self.config.bulk_feedback_retention_bytes)
        event = decision.to_event()
        if event is not None:
            self.emit(event)
            self.flush()
            self.ledger.objects.evict_many(decision.digests)

    def judge(self) -> None:
        order = [f"submission-{k:06d}" for k in range(1, len(self.scores) + 1)]
        candidates = order[-_CANDIDATES:]
        self.emit(FinishAccepted(candidates=candidates, budget_left=self.remaining))
        self.emit(AgentExited(pid=4242, exit_code=0, duration_ms=1000, reason="finished"))
        results = []
        for position, sid in enumerate(candidates, start=1):
            returns = []
            for p in self.plan.validation:
                ret = float(9 + (position + p.spec.index) % 5)
                returns.append(ret)
                self.emit(
                    ValidationEpisodeFinished(
                        submission_id=sid,
                        program_digest=self.programs[sid],
                        index=p.spec.index,
                        status="ok",
                        episode_return=ret,
                        steps=int(ret),
                        terminated=True,
                        truncated=False,
                        trajectory_digest=self.trajectories[p.spec.index],
                    )
                )
            score = score_episodes(self.rule, [("ok", r) for r in returns])
            results.append(CandidateResult(sid, self.programs[sid], position, score, 0))
        direction = self.benchmark.spec.score_direction
        chosen = select(results, direction, validated=True)
        self.emit(chosen)
        summaries = [
            EpisodeSummary(
                index=p.spec.index,
                status="ok",
                episode_return=10.0,
                steps=10,
                trajectory_digest=self.trajectories[p.spec.index],
            )
            for p in self.plan.assessment
        ]
        self.emit(
            AssessmentFinished(
                submission_id=chosen.submission_id,
                program_digest=chosen.program_digest,
                score=10.0,
                episode_count=len(summaries),
                episodes=summaries,
            )
        )
        self.emit(
            RunEnded(
                reason="finished",
                selected_submission_id=chosen.submission_id,
                summary={
                    "budget_used": self.used,
                    "budget_left": self.remaining,
                    "submissions": len(order),
                    "candidates": candidates,
                    "assessment_score": 10.0,
                },
            )
        )

    def finish(self) -> None:
        self.flush()
        recorded = [(r.stored.visibility, r.event) for r in self.ledger.events()]
        sync_mirror(mirror.fold(recorded), self.layout.feedback, self.ledger.objects)
        state = run_state.fold(event for _, event in recorded)
        result = summarize(self.layout, state)
        self.layout.host.mkdir(parents=True, exist_ok=True)
        (self.layout.host / "report.json").write_text(result.model_dump_json(indent=2) + "\n")
        self.ledger.close()


def build_synthetic_run(root: Path, *, submissions: int = 1000, episodes: int = 49) -> Path:
    """Build a valid synthetic Run under ``root`` and return its directory (see the module docstring)."""
    builder = _Builder(root, submissions, episodes)
    builder.start()
    for k in range(1, submissions + 1):
        builder.submission(k, episodes)
        if len(builder.batch) >= 1000:
            builder.flush()
    builder.judge()
    builder.finish()
    return builder.layout.root


def raw_read(run_dir: Path) -> int:
    """Read every events row and every objects row with plain sqlite3 (the baseline); returns the row count."""
    conn = sqlite3.connect(f"{(run_dir / 'ledger.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    rows = 0
    try:
        cursor = conn.execute(
            "SELECT seq, kind, version, visibility, payload, prev_hash, hash, recorded_at FROM events ORDER BY seq"
        )
        cursor.arraysize = 4096
        for _row in cursor:
            rows += 1
        for _row in conn.execute("SELECT digest, size, location, data FROM objects"):
            rows += 1
    finally:
        conn.close()
    return rows


@contextmanager
def _collector_paused() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def _median_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        with _collector_paused():
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _audit_only(rows: list[tuple[object, ...]]) -> None:
    fold = AuditFold()
    fold.run(rows)
    fold.finish()


def _sha256_chain(rows: list[tuple[object, ...]]) -> None:
    sha256 = hashlib.sha256
    for _seq, kind, version, visibility, payload, prev_hash, _hash, _at in rows:
        hasher = sha256(f"{prev_hash}\x00{kind}\x00{version}\x00{visibility}\x00".encode())
        hasher.update(payload)  # type: ignore[arg-type]
        hasher.hexdigest()


def _orjson_every_payload(rows: list[tuple[object, ...]]) -> None:
    loads = orjson.loads
    for row in rows:
        loads(row[4])  # type: ignore[arg-type]


def _one_call_per_row(rows: list[tuple[object, ...]]) -> None:
    sink: list[object] = []
    add = sink.append
    for seq, _kind, _version, _visibility, _payload, _prev, _hash, _at in rows:
        add(seq)


def _components(run_dir: Path, repeat: int) -> list[tuple[str, float]]:
    """Each step of checks 1-3 timed on its own (median of ``repeat``), with the functions replay uses."""
    with _collector_paused():
        record = open_record(run_dir)
        folded = fold_log(record.rows, episode_cap=10_000, max_violations=200)
        rebuilt = ProjectionRebuild(record, folded.audit, folded.projections)
    try:
        rows = record.rows
        models = [(r.stored.visibility, r.event) for r in Ledger.open(run_dir).events()]
        events = [event for _, event in models]
        steps: list[tuple[str, Callable[[], object]]] = [
            ("read every row once (open_record)", lambda: open_record(run_dir).close()),
            (
                "1 integrity: verify_opened over those rows",
                lambda: verify_opened(run_dir, record.db, record.objects, rows, references=folded.references),
            ),
            ("1 integrity: standalone ledger.verify()", lambda: verify(run_dir)),
            (
                "2+3 the one pass: audit + projection folds (fold_log)",
                lambda: fold_log(rows, episode_cap=10_000, max_violations=200),
            ),
            ("2   of which the protocol audit alone (orjson dicts)", lambda: _audit_only(rows)),
            ("3 projections: compare with disk (ProjectionRebuild.check)", rebuilt.check),
            (
                "3   of which diff_mirror (workspace/feedback)",
                lambda: diff_mirror(folded.projections.mirror, record.layout.feedback, record.objects),
            ),
            ("    run_state.fold over parsed Events (batch fold)", lambda: run_state.fold(events)),
            ("    mirror.fold over parsed Events (batch fold)", lambda: mirror.fold(models)),
            ("    retention.fold over parsed Events", lambda: retention.fold(events)),
            ("floor: sha256 of every row (the chain, nothing else)", lambda: _sha256_chain(rows)),
            ("floor: orjson.loads of every payload", lambda: _orjson_every_payload(rows)),
            ("floor: a bare Python loop over the rows", lambda: _one_call_per_row(rows)),
        ]
        return [(name, _median_of(repeat, fn)) for name, fn in steps]
    finally:
        record.close()


def _paired(repeat: int, run_dir: Path, *, parallel: bool) -> tuple[float, float, float]:
    """Median raw read, median replay and median per-pair ratio, raw reads and replays alternating."""
    raws, totals = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        raw_read(run_dir)
        raws.append(time.perf_counter() - start)
        start = time.perf_counter()
        replay(run_dir, parallel=parallel)
        totals.append(time.perf_counter() - start)
    ratios = [t / r for t, r in zip(totals, raws, strict=True)]
    return statistics.median(raws), statistics.median(totals), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=49, help="Episodes per Submission")
    parser.add_argument("--repeat", type=int, default=5, help="medians of this many timings")
    parser.add_argument("--keep", type=Path, default=None, help="build the Run here and keep it (default: a temp dir)")
    args = parser.parse_args()
    console = Console(width=120)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        root = args.keep or Path(tmp)
        start = time.perf_counter()
        run_dir = build_synthetic_run(root, submissions=args.submissions, episodes=args.episodes)
        built = time.perf_counter() - start
        with Ledger.open(run_dir) as book:
            events = book.head().count
        report = replay(run_dir)
        if not report.ok:
            raise SystemExit(f"replay of the synthetic Run failed: {report.to_json()}")
        raw, total, ratio = _paired(args.repeat, run_dir, parallel=True)
        _, serial, serial_ratio = _paired(args.repeat, run_dir, parallel=False)
        title = (
            f"evoledger replay, checks 1-3: {events:,} events, {args.submissions} Submissions "
            f"(medians of {args.repeat})"
        )
        table = Table(title=title)
        for column in ("measure", "seconds", "events/s", "x raw read"):
            table.add_column(column, justify="left" if column == "measure" else "right")
        table.add_row(
            "raw sqlite3 read of the same rows (events + objects)", f"{raw:.3f}", f"{events / raw:,.0f}", "1.00"
        )
        table.add_row(
            "replay(): checks 1-3 end to end (ratio: median of pairs)",
            f"{total:.3f}",
            f"{events / total:,.0f}",
            f"{ratio:.2f}",
        )
        table.add_row(
            "replay(parallel=False): the same in one process",
            f"{serial:.3f}",
            f"{events / serial:,.0f}",
            f"{serial_ratio:.2f}",
        )
        for check in replay(run_dir, parallel=True).checks[:3]:
            table.add_row(
                f"  {check.name} (as reported by one replay)", f"{check.seconds:.3f}", "", f"{check.seconds / raw:.2f}"
            )
        for name, seconds in _components(run_dir, args.repeat):
            table.add_row(f"    {name}", f"{seconds:.3f}", f"{events / seconds:,.0f}", f"{seconds / raw:.2f}")
        console.print(table)
        console.print(
            f"synthetic Run built in {built:.1f} s; target: replay within 3x of the raw read "
            f"({'met' if ratio <= 3 else 'NOT met'}: {ratio:.1f}x; {serial_ratio:.1f}x in one process)"
        )


if __name__ == "__main__":
    main()
