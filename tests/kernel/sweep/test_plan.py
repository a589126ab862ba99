"""What a sweep does with each cell, decided from each Run's own ledger, and recorded in the sweep's once."""

from __future__ import annotations

from pathlib import Path

from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.kernel.sweep.plan import SweepPlan, plan_sweep
from evoledger.kernel.sweep.record import SweepRecord, is_sweep_dir, runs_of
from evoledger.ledger.events import SweepCell
from evoledger.ledger.store import Ledger

CELL = SweepCell(name="toy-counter--baseline--seed-0", benchmark="toy/counter", agent="baseline", seed=0)


def _record(root: Path) -> SweepRecord:
    return SweepRecord.open(root, sweep_id="s", cells=[CELL], source="[sweep]\n", source_name="s.toml")


def _plan(record: SweepRecord) -> SweepPlan:
    return plan_sweep(
        record,
        [CELL],
        run_argv=lambda cell, run_dir: (["run", str(run_dir)], 1),
        resume_argv=lambda cell, run_dir: ["resume", str(run_dir)],
    )


def test_a_missing_run_is_started_and_an_empty_ledger_is_started_afresh(tmp_path: Path) -> None:
    record = _record(tmp_path / "out")
    try:
        assert [(j.mode, list(j.argv)) for j in _plan(record).jobs] == [
            ("run", ["run", str(record.run_dir(CELL.name))])
        ]
        run_dir = record.run_dir(CELL.name)
        run_dir.mkdir(parents=True)
        Ledger.create(run_dir).close()  # what a process killed before run-created leaves: nothing recorded
        (run_dir / "workspace").mkdir()
        plan = _plan(record)
        assert [j.mode for j in plan.jobs] == ["run"]
        assert not run_dir.exists()  # `evoledger run` would refuse a folder holding a ledger
    finally:
        record.close()
    assert is_sweep_dir(tmp_path / "out")
    assert not is_sweep_dir(tmp_path)


def test_a_run_found_ended_is_skipped_and_its_end_recorded_once(tmp_path: Path) -> None:
    record = _record(tmp_path / "out")
    try:
        record.started(CELL.name, "run", 1)  # the sweep was killed after this, while the Run went on to its end
        config = RunConfig(
            benchmark=BenchmarkRef(name="toy/counter"),
            episode_budget=2,
            validation=ValidationConfig(episodes=1),
            assessment=AssessmentConfig(episodes=1),
            agent=AgentConfig(name="baseline"),
            seed=0,
            isolation="local",
            agent_isolation="local",
        )
        result = run(config, record_to=record.run_dir(CELL.name))
        plan = _plan(record)
        assert plan.jobs == ()
        view = plan.views[CELL.name]
        assert (view.state, view.reason, view.budget_used, view.budget_total) == ("done earlier", "finished", 2, 2)
        assert view.assessment == result.assessment_score
        end = record.state.cells[CELL.name].last_end
        assert end is not None
        assert (end.outcome, end.exit_code, end.selected_submission_id) == ("finished", None, result.selected)
        with Ledger.open(record.run_dir(CELL.name)) as ledger:
            assert end.run_head_hash == ledger.head().hash
        events = record.state.events
        _plan(record)
        assert record.state.events == events  # recorded once
    finally:
        record.close()
    assert runs_of([tmp_path / "out", tmp_path / "other"]) == [record.run_dir(CELL.name), tmp_path / "other"]


def test_the_same_cells_reopen_the_sweep(tmp_path: Path) -> None:
    _record(tmp_path / "out").close()
    again = _record(tmp_path / "out")
    try:
        assert again.state.events == 1
        assert list(again.state.cells) == [CELL.name]
    finally:
        again.close()
