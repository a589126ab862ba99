"""``LocalExecutor(wait_until_ready=False)``: the workers start in the background; the first ``run`` waits for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from evoledger.kernel.execution import EpisodeTask, LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import ConfigError, InputError

MakeTasks = Callable[..., list[EpisodeTask]]


def _alive(pid: int) -> bool:
    """Whether ``pid`` still exists (the executor reaps its workers, so an ended one is gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_first_run_waits_for_the_workers(programs: dict[str, Path], make_tasks: MakeTasks) -> None:
    with LocalExecutor(BenchmarkRef(name="toy-counter"), workers=2, wait_until_ready=False) as executor:
        outcomes = list(executor.run(make_tasks(programs["binary_search"], 3)))
        assert [(o.index, o.status) for o in outcomes] == [(0, "ok"), (1, "ok"), (2, "ok")]
        again = list(executor.run(make_tasks(programs["binary_search"], 1)))
        assert again[0].trajectory == outcomes[0].trajectory


def test_a_start_up_error_surfaces_at_the_first_run_and_stops_the_workers(
    programs: dict[str, Path], make_tasks: MakeTasks
) -> None:
    executor = LocalExecutor(BenchmarkRef(name="toy-counter", config={"n_actions": 1}), wait_until_ready=False)
    pids = executor.worker_pids
    with pytest.raises(ConfigError, match="n_actions"):
        executor.run(make_tasks(programs["binary_search"]))
    assert not any(_alive(pid) for pid in pids)
    with pytest.raises(InputError, match="closed"):
        executor.run(make_tasks(programs["binary_search"]))


def test_closing_before_any_run_stops_the_starting_workers() -> None:
    executor = LocalExecutor(BenchmarkRef(name="toy-counter"), wait_until_ready=False)
    pids = executor.worker_pids
    executor.close()
    assert not any(_alive(pid) for pid in pids)


def _loaded_by(module: str, candidates: tuple[str, ...]) -> list[str]:
    code = f"import json, sys, {module}; print(json.dumps([m for m in {candidates!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def test_the_worker_entry_point_starts_the_sandbox_before_importing_numpy_or_gymnasium() -> None:
    assert _loaded_by("evoledger.kernel.execution.worker_start", ("numpy", "gymnasium", "pydantic")) == []


def test_a_sandboxed_zygote_and_its_policies_do_not_load_pydantic() -> None:
    assert _loaded_by("evoledger.kernel.execution.sandbox_main", ("pydantic", "evoledger.kernel.execution.tasks")) == []
