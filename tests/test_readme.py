"""The README's two set-up commands stay true: CI runs the test command verbatim, and the main job runs."""

from __future__ import annotations

import re
from pathlib import Path

from evoledger.tests.support.readme_run import MainJobRun, main_job_argv
from evoledger.tests.support.readme_run import setup_commands as _setup_commands

ROOT = Path(__file__).resolve().parent.parent


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m pip install -e . && evoledger ")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci.splitlines()
    assert "ruff check" in ci
    assert "mypy" in ci


def test_readme_main_command_runs(readme_main_run: MainJobRun) -> None:
    """Execute the main job as the README says (the install half is already done), with ``--seed 1`` added.

    The session's one run of it (conftest's ``readme_main_run``); test_builtin_agent_runs reads the same Run.
    """
    argv = main_job_argv()
    assert argv[0] == "evoledger"
    assert readme_main_run.argv[: len(argv)] == argv
    done = readme_main_run.done
    assert done.returncode == 0, done.stderr[-3000:]
    assert "score" in done.stdout


def test_readme_example_policy_runs_and_balances_the_pole(tmp_path: Path) -> None:
    """The README's Policy Program block is a working Program (evaluated through the real stack)."""
    from evoledger.kernel.evaluation import EvaluationConfig, evaluate

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(def make_policy\(context\):.*?)```", text, re.S)
    assert block, "README.md lost its example Policy Program"
    program = tmp_path / "program"
    program.mkdir()
    (program / "policy.py").write_text(block.group(1), encoding="utf-8")
    result = evaluate(program, "cartpole", config=EvaluationConfig(episodes=3))
    assert result.failures == 0
    assert result.score is not None
    assert result.score > 400  # the heuristic in the README really balances the pole


def test_readme_sweep_file_is_a_valid_sweep(tmp_path: Path) -> None:
    """The README's sweep file reads and expands to its cells (Benchmark x Agent x seed), in the names it promises."""
    from evoledger.kernel.sweep.cells import expand
    from evoledger.kernel.sweep.spec import read_sweep_file

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[sweep\].*?)```", text, re.S)
    assert block, "README.md lost its example sweep file"
    path = tmp_path / "study.toml"
    path.write_text(block.group(1), encoding="utf-8")
    spec, source = read_sweep_file(path)
    cells = expand(spec, source)
    assert [cell.name for cell in cells] == [
        f"frozen-lake--{agent}--seed-{seed}" for agent in ("hill-climb", "claude-opus") for seed in (0, 1)
    ]
    assert all(cell.run["episode_budget"] == 80 for cell in cells)  # the Benchmark's own run table wins
