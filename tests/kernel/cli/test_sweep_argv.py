"""A sweep cell's command line: parsed by the real ``evoledger run`` and ``resume`` options, it is exactly the cell.

Whatever the sweep file says (Run settings, ``--set`` values of any JSON type, Agent options), the ``evoledger run``
command line built for the cell must parse, through the very click options of ``evoledger run``, into the same
``RunConfig`` the sweep checked (``kernel.sweep.cells.run_config_of``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from evoledger.kernel.cli.agent_options import apply_agent_options
from evoledger.kernel.cli.config_options import config_values
from evoledger.kernel.cli.options import parse_config_pairs
from evoledger.kernel.cli.resume_command import resume_command
from evoledger.kernel.cli.run_command import RUN_OPTIONS, run_command
from evoledger.kernel.cli.sweep_argv import resume_argv, run_argv
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import RunConfig
from evoledger.kernel.sweep.cells import run_config_of
from evoledger.ledger.events import SweepCell
from hypothesis import given, settings
from hypothesis import strategies as st

_words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
_values = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(-1e6, 1e6) | _words
_json = st.recursive(_values, lambda inner: st.lists(inner, max_size=3), max_leaves=5)

_runs = st.fixed_dictionaries(
    {},
    optional={
        "episode_budget": st.integers(1, 10_000),
        "workers": st.integers(1, 8),
        "validation": st.fixed_dictionaries(
            {}, optional={"episodes": st.integers(0, 50), "max_candidates": st.integers(1, 5)}
        ),
        "assessment": st.fixed_dictionaries({}, optional={"episodes": st.integers(0, 50)}),
        "limits": st.fixed_dictionaries(
            {}, optional={"act_timeout_seconds": st.floats(0.01, 600), "memory_bytes": st.integers(1 << 26, 1 << 34)}
        ),
        "isolation": st.sampled_from(["local", "bwrap", "auto"]),
        "agent_isolation": st.sampled_from(["local", "bwrap", "auto"]),
        "fallback": st.sampled_from(["none", "best_public"]),
        "agent_timeout_seconds": st.floats(0.5, 1e5),
        "episode_pool_size": st.integers(1, 100),
    },
)
_options = st.fixed_dictionaries(
    {},
    optional={
        "model": _words.filter(str.strip),
        "effort": _words.filter(str.strip),
        "view_image": st.booleans(),
        "args": st.lists(_words, max_size=3),
    },
)
_cells = st.builds(
    SweepCell,
    name=st.just("c"),
    benchmark=st.sampled_from(["toy/counter", "cartpole", "frozen-lake"]),
    settings=st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _json, max_size=3),
    agent=st.sampled_from(["hill-climb", "baseline", "codex"]),
    agent_options=_options,
    seed=st.integers(0, 2**63 - 1),
    run=_runs,
)


def _parsed_run(argv: list[str]) -> RunConfig:
    """What ``evoledger run`` makes of ``argv`` (its options, as the command turns them into a ``RunConfig``)."""
    assert argv[1:4] == ["-m", "evoledger", "run"]
    ctx = run_command.make_context("run", argv[4:])
    params: dict[str, Any] = dict(ctx.params)
    values = config_values(RUN_OPTIONS, params)
    values["agent"] = apply_agent_options(values["agent"], params["agent_options"])
    benchmark = BenchmarkRef(name=params["benchmark"], config=parse_config_pairs(params["settings"]))
    assert params["as_json"]
    return RunConfig.model_validate({**values, "benchmark": benchmark})


@settings(max_examples=30, deadline=None)
@given(_cells, st.integers(1, 4))
def test_the_run_command_line_is_the_cells_run_config(cell: SweepCell, workers: int) -> None:
    argv = run_argv(cell, Path("/tmp/sweep/runs/c"), workers)
    assert _parsed_run(argv) == run_config_of(cell, workers=workers)


def test_a_workers_setting_in_the_file_wins_over_the_sweeps_default() -> None:
    cell = SweepCell(name="c", benchmark="cartpole", agent="baseline", seed=3, run={"workers": 2})
    assert _parsed_run(run_argv(cell, Path("r"), 7)).workers == 2
    assert _parsed_run(run_argv(cell.model_copy(update={"run": {}}), Path("r"), 7)).workers == 7


def test_extra_flags_reach_both_commands() -> None:
    cell = SweepCell(name="c", benchmark="cartpole", agent="baseline", seed=0)
    assert run_argv(cell, Path("r"), 1, ("--backend", "ray"))[-2:] == ["--backend", "ray"]
    assert resume_argv(cell, Path("r"), ("--backend", "ray"))[-2:] == ["--backend", "ray"]


def test_the_resume_command_line_restates_the_files_choices(tmp_path: Path) -> None:
    cell = SweepCell(
        name="c", benchmark="my.pkg:factory", agent="command:python3 a.py", seed=0, run={"isolation": "local"}
    )
    argv = resume_argv(cell, tmp_path)
    assert argv[1:4] == ["-m", "evoledger", "resume"]
    ctx = resume_command.make_context("resume", argv[4:])
    assert ctx.params["run_dir"] == tmp_path
    assert ctx.params["isolation"] == "local"
    assert ctx.params["agent_isolation"] == "auto"
    assert ctx.params["agent"] == "command:python3 a.py"
    assert ctx.params["trust_recorded_benchmark"] is True
    assert ctx.params["as_json"] is True


def test_click_would_refuse_what_the_sweep_refuses() -> None:
    """A sanity check of the harness above: a wrong value does not slip through the real options."""
    cell = SweepCell(name="c", benchmark="cartpole", agent="baseline", seed=0, run={"episode_budget": 0})
    with pytest.raises(click.BadParameter, match="not in the range 1<=x"):
        _parsed_run(run_argv(cell, Path("r"), 1))
