"""`evoledger run` / `resume` through the CLI: relative paths, refusals that leave nothing behind, JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from evoledger.kernel.cli import cli

SMALL = ["--validation-episodes", "0", "--assessment-episodes", "2", "--episode-budget", "4"]


def test_a_relative_record_directory_works_for_every_process(cwd: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/fl", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["reason"] == "finished"
    assert Path(data["run_dir"]).is_absolute()
    assert (cwd / "runs" / "fl" / "ledger.sqlite").exists()
    again = CliRunner().invoke(cli, ["resume", "runs/fl", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["reason"] == "finished"


def test_an_unknown_agent_is_refused_before_anything_is_created(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "--agent", "claud", "--record-to", "runs/x"])
    assert result.exit_code == 2
    assert "Did you mean 'claude-code'" in result.output
    assert not (cwd / "runs" / "x").exists()


def test_an_invalid_initial_program_leaves_no_half_created_run(cwd: Path) -> None:
    (cwd / "prog").mkdir()
    (cwd / "prog" / "notpolicy.py").write_text("x = 1\n")
    result = CliRunner().invoke(cli, ["run", "--program", "prog", "--record-to", "runs/y"])
    assert result.exit_code == 2
    assert "policy.py" in result.output
    assert not (cwd / "runs" / "y").exists()


def test_an_unspendable_strict_budget_is_a_usage_error(cwd: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["run", "--finish-budget-policy", "require_budget_exhaustion", "--max-submissions", "2",
         "--max-episodes-per-submission", "3", "--record-to", "runs/z"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "require_budget_exhaustion" in result.output
    assert not (cwd / "runs" / "z").exists()


def test_the_default_record_directory_never_overwrites_a_run(cwd: Path) -> None:
    for _ in range(2):
        result = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--json"])
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (cwd / "runs").iterdir()) == ["frozen-lake", "frozen-lake-2"]
    seeded = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--seed", "5", "--json"])
    assert seeded.exit_code == 0, seeded.output
    assert (cwd / "runs" / "frozen-lake-5").is_dir()


def test_run_says_plainly_what_a_known_seed_gives_away(cwd: Path) -> None:
    help_text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert "anyone who knows the seed can predict every held-out Validation and Assessment Episode" in help_text
    assert "Default: a random secret key" in help_text
    secret = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/a"])
    assert secret.exit_code == 0, secret.output
    assert "seed random (secret key): held-out Episodes are unpredictable" in " ".join(secret.output.split())
    seeded = CliRunner().invoke(
        cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--seed", "7", "--record-to", "runs/b"]
    )
    assert seeded.exit_code == 0, seeded.output
    assert "held-out Episodes are predictable by anyone who knows it" in " ".join(seeded.output.split())
    reports = [json.loads((cwd / "runs" / d / "host" / "report.json").read_text()) for d in ("a", "b")]
    assert [(r["seed"], r["held_out_episodes"]) for r in reports] == [(None, "secret"), (7, "predictable")]
