"""Nothing a run directory names is run: a recorded Benchmark or Agent that is code needs the user's say-so.

Each test rewrites a real recorded Run consistently (re-chained log and manifest, so integrity passes) the
way an attacker who hands over a run directory would, then drives the real command line.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from evoledger.kernel.execution import PolicyLimits, bounded_limits, bounded_workers, local_cpu_count
from evoledger.kernel.execution.local_bounds import MAX_CPU_SECONDS
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest

pytestmark = pytest.mark.slow  # a long file: handed to an xdist worker first (tests/conftest.py)

Cli = Callable[..., CompletedProcess[str]]


@pytest.fixture
def marker() -> Iterator[Path]:
    """A file that appears only if a recorded command ran."""
    path = Path(f"/tmp/PWNED-{uuid.uuid4().hex}")
    yield path
    path.unlink(missing_ok=True)


def _hide_direction(tamper: Any, run_dir: Path) -> None:
    """Make the log give no score direction, so only the Benchmark could say it."""

    def created(data: dict[str, Any]) -> None:
        data["benchmark_spec"].pop("score_direction", None)

    def selected(data: dict[str, Any]) -> None:
        data["tie_break"] = ""

    tamper.forge(run_dir, 0, created)
    tamper.forge(run_dir, tamper.seq_of(run_dir, "candidate-selected"), selected)


def _set_config(tamper: Any, run_dir: Path, **changes: Any) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["config"].update(changes)

    tamper.forge(run_dir, 0, edit)


def _drop_run_end(tamper: Any, run_dir: Path) -> None:
    """Cut the last Event, ``run-ended`` (as if the Host died just before it), so ``resume`` has work to do."""
    last = tamper.seq_of(run_dir, "run-ended")
    conn = tamper.connect(run_dir)
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
        assert last == count - 1
        conn.execute("DELETE FROM events WHERE seq = ?", (last,))
        (head,) = conn.execute("SELECT hash FROM events WHERE seq = ?", (last - 1,)).fetchone()
    finally:
        conn.close()
    HeadManifest(run_dir / MANIFEST_NAME).write(Head(head, last))


def _no_traceback(done: CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.fixture
def hostile_benchmark(run_copy: Path, tamper: Any, marker: Path) -> Path:
    """The reported exploit: a Run whose recorded Benchmark is ``subprocess:run`` with a shell command."""
    _hide_direction(tamper, run_copy)
    _set_config(
        tamper, run_copy, benchmark={"name": "subprocess:run", "config": {"args": f"touch {marker}", "shell": True}}
    )
    return run_copy


def test_replay_reports_a_recorded_import_string_and_imports_nothing(
    hostile_benchmark: Path, marker: Path, replay_cli: Cli
) -> None:
    done = replay_cli("replay", str(hostile_benchmark), "--json")
    _no_traceback(done)
    assert not marker.exists(), "replay ran the command named by the record"
    assert "subprocess:run" in done.stdout
    assert "score_direction_unknown" in done.stdout
    assert "--trust-recorded-benchmark" in done.stdout


def test_replay_execute_refuses_a_recorded_import_string(
    hostile_benchmark: Path, marker: Path, replay_cli: Cli
) -> None:
    done = replay_cli("replay", str(hostile_benchmark), "--execute")
    _no_traceback(done)
    assert not marker.exists(), "replay --execute ran the command named by the record"
    assert done.returncode == 2, done.stdout + done.stderr
    assert "subprocess:run" in done.stderr
    assert "--trust-recorded-benchmark" in done.stderr


def test_resume_refuses_a_recorded_import_string(
    hostile_benchmark: Path, tamper: Any, marker: Path, replay_cli: Cli
) -> None:
    _drop_run_end(tamper, hostile_benchmark)
    done = replay_cli("resume", str(hostile_benchmark))
    _no_traceback(done)
    assert not marker.exists(), "resume ran the command named by the record"
    assert done.returncode == 2, done.stdout + done.stderr
    assert "subprocess:run" in done.stderr
    assert "--trust-recorded-benchmark" in done.stderr


def test_export_of_a_recorded_import_string_imports_nothing(
    hostile_benchmark: Path, marker: Path, replay_cli: Cli, tmp_path: Path
) -> None:
    done = replay_cli("export", str(hostile_benchmark), "--out", str(tmp_path / "ds"))
    _no_traceback(done)
    assert not marker.exists(), "export ran the command named by the record"


def test_resume_refuses_a_recorded_command_agent_unless_trusted(
    run_copy: Path, tamper: Any, marker: Path, replay_cli: Cli
) -> None:
    command = f"command:touch {marker}"
    _set_config(tamper, run_copy, agent={"name": command, "model": None, "args": []})
    _drop_run_end(tamper, run_copy)
    refused = replay_cli("resume", str(run_copy))
    _no_traceback(refused)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert command in refused.stderr
    assert "--trust-recorded-agent" in refused.stderr
    other = replay_cli("resume", str(run_copy), "--agent", "command:true")
    assert other.returncode == 2, other.stderr
    assert command in other.stderr
    assert not marker.exists()
    trusted = replay_cli("resume", str(run_copy), "--trust-recorded-agent", "--json")
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr  # finished already: only run-ended is written


def test_resource_figures_from_a_record_are_bounded_by_this_machine() -> None:
    assert bounded_workers(256) == local_cpu_count()
    assert bounded_workers(256, requested=10_000) == local_cpu_count()
    assert bounded_workers(1) == 1
    assert local_cpu_count() <= (os.cpu_count() or 1)
    unbounded = bounded_limits(PolicyLimits(memory_bytes=None))
    huge = bounded_limits(PolicyLimits(memory_bytes=1 << 60))
    assert unbounded.memory_bytes is not None
    assert unbounded.memory_bytes < 1 << 60
    assert huge.memory_bytes == unbounded.memory_bytes
    assert bounded_limits(PolicyLimits(cpu_seconds=10**12)).cpu_seconds == MAX_CPU_SECONDS
    assert bounded_limits(PolicyLimits()) == PolicyLimits()  # a sane recorded cap is kept as it is


def test_replay_execute_of_a_record_asking_for_256_workers_starts_only_local_ones(
    run_copy: Path, tamper: Any, replay_cli: Cli
) -> None:
    _set_config(tamper, run_copy, workers=256)
    done = replay_cli("replay", str(run_copy), "--execute", "--json")
    _no_traceback(done)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
