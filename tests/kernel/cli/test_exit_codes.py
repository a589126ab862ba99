"""Exit codes that tell the truth: a Run that did not finish with a selected Candidate, an evaluation all failed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from evoledger.kernel.cli import cli

SMALL = ["--validation-episodes", "0", "--assessment-episodes", "1", "--episode-budget", "4"]
FAILING_AGENT = "command:python3 -c 'import sys; print(\"the agent gave up here\", file=sys.stderr); sys.exit(3)'"


def test_a_run_whose_agent_failed_exits_6_with_the_reason_and_the_agents_log(cwd: Path) -> None:
    args = ["run", "frozen-lake", "--agent", FAILING_AGENT, "--agent-isolation", "local", *SMALL]
    result = CliRunner().invoke(cli, [*args, "--record-to", "runs/f"])
    assert result.exit_code == 6, result.output
    assert "the Run ended agent_failed: the Agent exited with an error" in result.output
    assert "last lines of host/agent-1/stderr.log:" in result.output
    assert "the agent gave up here" in result.output
    as_json = CliRunner().invoke(cli, ["resume", "runs/f", "--json", "--trust-recorded-agent"])
    assert as_json.exit_code == 6, as_json.output  # resume of the ended Run tells the same truth
    assert json.loads(as_json.stdout)["reason"] == "agent_failed"


def test_a_finished_run_exits_0(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "frozen-lake", "--agent", "baseline", *SMALL, "--record-to", "runs/ok"])
    assert result.exit_code == 0, result.output
    assert "error:" not in result.output


def test_run_resume_and_evaluate_document_their_exit_codes() -> None:
    for command in ("run", "resume", "evaluate"):
        text = " ".join(CliRunner().invoke(cli, [command, "--help"]).output.split())
        assert "Exit codes: 0" in text, command
        assert "6 every Episode failed" in text if command == "evaluate" else "6 it ended otherwise" in text


def test_an_evaluation_whose_every_episode_failed_exits_6_with_the_first_traceback(cwd: Path) -> None:
    (cwd / "bad").mkdir()
    (cwd / "bad" / "policy.py").write_text(
        "def helper(x):\n    return x['missing']\n\n\n"
        "def make_policy(context):\n    class P:\n        def act(self, observation):\n"
        "            return helper({})\n\n"
        "    return P()\n"
    )
    result = CliRunner().invoke(cli, ["evaluate", "bad", "-n", "3"])
    assert result.exit_code == 6, result.output
    assert "all 3 Episodes failed" in result.output
    assert "3 Episodes (exception, first: Episode 0): KeyError: 'missing'" in result.output  # repeats grouped
    assert 'File "bad/policy.py", line 2, in helper' in result.output  # the user's own file and line
    assert result.output.count("Traceback (most recent call last)") == 1


def test_an_evaluation_with_one_good_episode_exits_0(cwd: Path) -> None:
    result = CliRunner().invoke(cli, ["evaluate", "-n", "2"])
    assert result.exit_code == 0, result.output
