"""Through the real CLI: ``evoledger sweep`` runs its cells, is killed by SIGTERM mid-way, resumes, skips what finished,
and ``report`` / ``export`` take the sweep's folder for its Runs. Plus every user-facing error of the command.

The Agent of the killed cells is a script that waits for a release file before it submits: so the kill always finds
their Runs live (never a race with a Run that ends first), and after the release the resumed Runs finish. Every wait
has a generous deadline; nothing asserts a duration.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.sweep.record import read_sweep
from evoledger.ledger.store import Ledger
from evoledger.tests.support.process_tree import processes_naming, wait_until
from evoledger.tests.support.sweep_cells import RELEASED_AGENT, count_events

_CLI = [sys.executable, "-m", "evoledger"]


def _sweep_file(root: Path, *, benchmarks: tuple[str, ...], agents: tuple[str, ...], seeds: tuple[int, ...]) -> Path:
    script = root / "agent.py"
    script.write_text(RELEASED_AGENT)
    release = root / "release"
    tables = {
        "scripted": f"name = {json.dumps('command:' + shlex.join([sys.executable, str(script), str(release)]))}\n"
        'label = "scripted"\n',
        "baseline": 'name = "baseline"\n',
    }
    text = f'[sweep]\nname = "study"\nseeds = {list(seeds)}\n\n'
    text += "[run]\nepisode_budget = 2\nvalidation = { episodes = 1 }\nassessment = { episodes = 1 }\n"
    text += 'isolation = "local"\nagent_isolation = "local"\n'
    for name in benchmarks:
        text += f'\n[[benchmark]]\nname = "{name}"\n'
    for agent in agents:
        text += f"\n[[agent]]\n{tables[agent]}"
    path = root / "study.toml"
    path.write_text(text)
    return path


def _sweep(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_CLI, "sweep", "study.toml", "--out", "out", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )


@dataclass(frozen=True)
class KilledAndResumed:
    root: Path
    first: subprocess.CompletedProcess[str]
    second: subprocess.CompletedProcess[str]
    cells: list[str]


def _kill_mid_way_and_resume(root: Path, sweep: Path, *, parallel: int, live: int) -> KilledAndResumed:
    """Start the sweep, SIGTERM it once ``live`` scripted Runs wait for their release, then release and run it again."""
    out = root / "out"
    process = subprocess.Popen(
        [*_CLI, "sweep", sweep.name, "--out", "out", "--parallel", str(parallel)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:

        def waiting() -> int:
            runs = out / "runs"
            found = list(runs.glob("*--scripted--*")) if runs.is_dir() else []
            return sum(1 for run in found if count_events(run, "agent-started"))

        if not wait_until(lambda: waiting() >= live or process.poll() is not None, 240, every=0.2):
            raise AssertionError("the scripted Runs never started")
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    first = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert wait_until(lambda: not processes_naming(str(out)), 60, every=0.2)  # no Run outlives the sweep
    (root / "release").touch()
    second = _sweep(root, "--parallel", str(parallel), "--json")
    return KilledAndResumed(root, first, second, list(read_sweep(out).cells))


@pytest.fixture(scope="module")
def resumed() -> Iterator[KilledAndResumed]:
    """One Benchmark x (baseline, the scripted Agent) x one seed, two at once, killed while the scripted Run is live
    (the baseline's has ended or is stopped too), then resumed. The issue's 2 x 2 x 2 case is the catalog test."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))  # short: Unix socket paths are length-limited
    sweep = _sweep_file(root, benchmarks=("toy/counter",), agents=("baseline", "scripted"), seeds=(0,))
    yield _kill_mid_way_and_resume(root, sweep, parallel=2, live=1)
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def test_sigterm_stops_every_run_and_says_how_to_continue(resumed: KilledAndResumed) -> None:
    assert resumed.first.returncode == -signal.SIGTERM, resumed.first.stderr
    assert "continue it with: evoledger sweep study.toml --out out" in resumed.first.stderr
    state = read_sweep(resumed.root / "out")
    # the first invocation recorded the scripted cell as interrupted; the second resumed it
    scripted = "toy-counter--scripted--seed-0"
    with Ledger.open(resumed.root / "out") as ledger:
        ends = [r.event for r in ledger.events(kinds=["sweep-cell-ended"])]
    assert [e.outcome for e in ends if e.cell == scripted] == ["interrupted", "finished"]  # type: ignore[attr-defined]
    assert (state.cells[scripted].attempts, state.cells[scripted].last_mode) == (2, "resume")
    for name in resumed.cells:
        history = state.cells[name]
        assert not history.running
        assert history.last_end is not None
        assert history.last_end.outcome == "finished"
        assert history.last_end.exit_code == 0
        with Ledger.open(resumed.root / "out" / "runs" / name) as run:
            assert history.last_end.run_head_hash == run.head().hash  # the sweep names the Run's exact log


def test_the_second_run_resumes_and_reports_json(resumed: KilledAndResumed) -> None:
    assert resumed.second.returncode == 0, resumed.second.stderr
    data = json.loads(resumed.second.stdout)
    assert data["sweep_id"] == "study"
    assert data["counts"] == {"finished": 2}
    assert [c["cell"] for c in data["cells"]] == ["toy-counter--baseline--seed-0", "toy-counter--scripted--seed-0"]
    assert all(c["outcome"] == "finished" and c["budget_used"] == 2 for c in data["cells"])


def test_a_third_run_skips_every_finished_run(resumed: KilledAndResumed, monkeypatch: pytest.MonkeyPatch) -> None:
    before = read_sweep(resumed.root / "out").events
    monkeypatch.chdir(resumed.root)
    code, output = _invoke(["sweep", "study.toml", "--out", "out"])
    assert code == 0, output
    assert "0 to start, 0 to resume, 2 finished before" in output
    assert read_sweep(resumed.root / "out").events == before  # nothing started, nothing recorded again
    assert output.count("earlier") == 2


def test_report_gives_the_leaderboard_across_the_sweep(
    resumed: KilledAndResumed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(resumed.root)
    code, output = _invoke(["report", "out", "--out", "r.html", "--no-audit"])
    assert code == 0, output
    assert "(2 Runs)" in output
    html = (resumed.root / "r.html").read_text()
    assert '<table class="leaderboard">' in html
    assert all(name in html for name in resumed.cells)


def test_export_writes_one_dataset_whose_episode_ids_carry_their_cell(
    resumed: KilledAndResumed, monkeypatch: pytest.MonkeyPatch
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.chdir(resumed.root)
    result = CliRunner().invoke(cli, ["export", "out", "--out", "ds", "--config", "episodes", "--json"])
    assert result.exit_code == 0, result.output
    assert [r["run_id"] for r in json.loads(result.stdout)["runs"]] == resumed.cells
    table = pq.read_table(next((resumed.root / "ds" / "episodes").glob("*.parquet")))
    rows = table.select(["run_id", "episode_id"]).to_pylist()
    assert len(rows) == 2 * len(resumed.cells)  # two Episodes per Run
    assert len({r["episode_id"] for r in rows}) == len(rows)
    assert all(r["episode_id"].startswith(r["run_id"] + "/") and r["run_id"] in resumed.cells for r in rows)


@pytest.mark.catalog
def test_a_sweep_of_two_benchmarks_two_agents_two_seeds_is_killed_resumed_and_reported() -> None:
    """The issue's own case: 2 Benchmarks x 2 Agents x 2 seeds, SIGTERM mid-way, run again, then the report."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))
    try:
        sweep = _sweep_file(
            root, benchmarks=("toy/counter", "toy/continuous"), agents=("baseline", "scripted"), seeds=(0, 1)
        )
        done = _kill_mid_way_and_resume(root, sweep, parallel=2, live=1)
        assert done.first.returncode == -signal.SIGTERM, done.first.stderr
        assert done.second.returncode == 0, done.second.stderr
        data = json.loads(done.second.stdout)
        assert data["counts"] == {"finished": 8}
        assert len({c["run_dir"] for c in data["cells"]}) == 8
        report = subprocess.run([*_CLI, "report", "out", "--out", "r.html"], cwd=root, capture_output=True, text=True)
        assert report.returncode == 0, report.stderr
        assert "(8 Runs)" in report.stdout
    finally:
        import shutil

        shutil.rmtree(root, ignore_errors=True)


# -- user errors: each one line (or one list) naming the fix; nothing is created -----------------------------------


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def test_a_bad_sweep_file_is_refused_before_anything_is_created(cwd: Path) -> None:
    (cwd / "s.toml").write_text('[sweep]\nseeds = [0]\n[run]\nepisode_budgt = 3\n[[benchmark]]\nname = "toy/counter"\n')
    code, output = _invoke(["sweep", "s.toml", "--out", "out"])
    assert code == 2
    assert (
        "line 4: [run], key episode_budgt: unknown Run setting 'episode_budgt'; did you mean 'episode_budget'?"
        in output
    )
    assert "[[agent]]" in output  # the missing table, in the same list
    assert not (cwd / "out").exists()


def test_an_out_folder_that_holds_something_else_is_refused(cwd: Path) -> None:
    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[[benchmark]]\nname = "toy/counter"\n[[agent]]\nname = "baseline"\n'
    )
    (cwd / "out").mkdir()
    (cwd / "out" / "notes.txt").write_text("mine")
    code, output = _invoke(["sweep", "s.toml", "--out", "out"])
    assert code == 2
    assert "--out out exists and holds no sweep; give a new or empty folder" in output
    assert sorted(p.name for p in (cwd / "out").iterdir()) == ["notes.txt"]
    Ledger.create(cwd / "run").close()  # a Run's folder (here: a ledger that is not a sweep's)
    with Ledger.open(cwd / "run", writable=True) as ledger:
        from evoledger.ledger.events import RunKey

        ledger.append([RunKey(key="0" * 64)])
    code, output = _invoke(["sweep", "s.toml", "--out", "run"])
    assert code == 2
    assert "--out run holds a record that is not a sweep's (it starts with run-key)" in output


def test_a_different_file_on_an_existing_sweep_is_refused(cwd: Path) -> None:
    from evoledger.kernel.sweep.cells import expand
    from evoledger.kernel.sweep.record import SweepRecord
    from evoledger.kernel.sweep.spec import read_sweep_file

    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[[benchmark]]\nname = "toy/counter"\n[[agent]]\nname = "baseline"\n'
    )
    spec, text = read_sweep_file(cwd / "s.toml")
    SweepRecord.open(cwd / "out", sweep_id="s", cells=expand(spec, text), source=text, source_name="s.toml").close()
    (cwd / "s.toml").write_text(text.replace("seeds = [0]", "seeds = [0, 1]"))
    code, output = _invoke(["sweep", "s.toml", "--out", "out"])
    assert code == 2
    assert "s.toml does not expand to the cells the sweep in out was started with (new cells: " in output
    assert "toy-counter--baseline--seed-1" in output
    assert "give a new --out for the new sweep" in output


def test_a_sweep_another_process_holds_is_refused(cwd: Path) -> None:
    from evoledger.kernel.sweep.cells import expand
    from evoledger.kernel.sweep.record import SweepRecord
    from evoledger.kernel.sweep.spec import read_sweep_file

    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[[benchmark]]\nname = "toy/counter"\n[[agent]]\nname = "baseline"\n'
    )
    spec, text = read_sweep_file(cwd / "s.toml")
    held = SweepRecord.open(cwd / "out", sweep_id="s", cells=expand(spec, text), source=text, source_name="s.toml")
    try:
        code, output = _invoke(["sweep", "s.toml", "--out", "out"])  # a flock: refused within one process too
    finally:
        held.close()
    assert code == 4, output
    assert output.startswith("error:")


def test_report_and_export_of_a_sweep_with_no_run_yet_say_how_to_start_it(cwd: Path) -> None:
    from evoledger.kernel.sweep.cells import expand
    from evoledger.kernel.sweep.record import SweepRecord
    from evoledger.kernel.sweep.spec import read_sweep_file

    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[[benchmark]]\nname = "toy/counter"\n[[agent]]\nname = "baseline"\n'
    )
    spec, text = read_sweep_file(cwd / "s.toml")
    SweepRecord.open(cwd / "out", sweep_id="s", cells=expand(spec, text), source=text, source_name="s.toml").close()
    for args in (["report", "out"], ["export", "out", "--out", "ds"]):
        code, output = _invoke(args)
        assert code == 2, output
        assert "the sweep in out has no Run yet; start it with: evoledger sweep SWEEP.toml --out out" in output


def test_an_isolation_that_cannot_work_is_refused_before_any_run(cwd: Path, no_bwrap: None) -> None:
    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[run]\nisolation = "bwrap"\n[[benchmark]]\nname = "toy/counter"\n'
        '[[agent]]\nname = "baseline"\n'
    )
    code, output = _invoke(["sweep", "s.toml", "--out", "out"])
    assert code == 2
    assert "line 4: [run], key isolation: " in output
    assert "bubblewrap" in output
    assert not (cwd / "out").exists()


def test_a_run_that_ends_without_a_candidate_and_a_process_that_fails_set_the_exit_code(cwd: Path) -> None:
    """One cell's Agent exits at once (its Run ends agent_failed: 6 alone); another's Run folder is held by a process
    (its resume fails before the Run ends: 5, which wins), with the end of its log printed."""
    quits = "command:" + shlex.join([sys.executable, "-c", "raise SystemExit(3)"])
    (cwd / "s.toml").write_text(
        '[sweep]\nseeds = [0]\n[run]\nepisode_budget = 2\nisolation = "local"\nagent_isolation = "local"\n'
        '[[benchmark]]\nname = "toy/counter"\n'
        f'[[agent]]\nname = {json.dumps(quits)}\nlabel = "quits"\n[[agent]]\nname = "baseline"\n'
    )
    from evoledger.kernel.sweep.cells import expand
    from evoledger.kernel.sweep.record import SweepRecord
    from evoledger.kernel.sweep.spec import read_sweep_file

    spec, text = read_sweep_file(cwd / "s.toml")
    SweepRecord.open(cwd / "out", sweep_id="s", cells=expand(spec, text), source=text, source_name="s").close()
    held_dir = cwd / "out" / "runs" / "toy-counter--baseline--seed-0"
    held_dir.mkdir(parents=True)
    with Ledger.create(held_dir):  # another process is creating this Run: it is neither removed nor started over
        result = CliRunner().invoke(cli, ["sweep", "s.toml", "--out", "out", "--parallel", "2"])
    assert result.exit_code == 5, result.output
    assert "error: cell toy-counter--baseline--seed-0's process failed (exit " in result.output
    assert "is locked for writing by process" in result.output  # the end of its log: why resume refused
    assert held_dir.is_dir()
    state = read_sweep(cwd / "out")
    quit_end = state.cells["toy-counter--quits--seed-0"].last_end
    assert quit_end is not None
    assert (quit_end.outcome, quit_end.reason, quit_end.exit_code) == ("ended", "agent_failed", 6)
    held_end = state.cells["toy-counter--baseline--seed-0"].last_end
    assert held_end is not None
    assert held_end.outcome == "failed"
    assert state.cells["toy-counter--baseline--seed-0"].last_mode == "resume"


@pytest.mark.catalog
def test_a_sweep_killed_by_sigkill_leaves_no_run_running_and_resumes() -> None:
    """Its children asked for SIGTERM when the sweep dies (PR_SET_PDEATHSIG): each stops cleanly, its Run resumable."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))
    try:
        _sweep_file(root, benchmarks=("toy/counter",), agents=("scripted",), seeds=(0,))
        out = root / "out"
        run_dir = out / "runs" / "toy-counter--scripted--seed-0"
        process = subprocess.Popen(
            [*_CLI, "sweep", "study.toml", "--out", "out"], cwd=root, start_new_session=True, stderr=subprocess.PIPE
        )
        try:
            assert wait_until(
                lambda: count_events(run_dir, "agent-started") > 0 or process.poll() is not None, 240, every=0.2
            )
            assert process.poll() is None
            process.kill()
            process.wait()
        finally:
            if process.poll() is None:
                process.kill()
            assert process.stderr is not None
            process.stderr.close()
        assert wait_until(lambda: not processes_naming(str(out)), 60, every=0.2)
        assert read_sweep(out).cells[run_dir.name].running  # the sweep could record no end
        assert count_events(run_dir, "run-ended") == 0
        (root / "release").touch()
        again = _sweep(root, "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["cells"][0]["state"] == "finished"
        assert read_sweep(out).cells[run_dir.name].last_mode == "resume"
    finally:
        shutil.rmtree(root, ignore_errors=True)
