"""The one end-of-Run summary: `run`, `resume` of the ended Run and `replay` print the same Validation rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli

SMALL = ["--assessment-episodes", "2", "--episode-budget", "6", "--max-candidates", "3"]
VERDICT = ("validation ", "candidate ", "selected Candidate", "assessment score", "terminal reason", "budget used")


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wide tables, so that each row of the summary is one line."""
    monkeypatch.setenv("COLUMNS", "200")


def _rows(output: str, *prefixes: str) -> list[str]:
    """The verdict rows whose first cell starts with one of ``prefixes``, with their cells stripped."""
    rows = []
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 2 and cells[0].startswith(prefixes):
            rows.append(" | ".join(cells))
    return rows


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_run_resume_and_replay_print_the_same_validation_rows(cwd: Path) -> None:
    ran = _invoke("run", "frozen-lake", "--agent", "baseline", *SMALL, "--validation-episodes", "2", "--record-to", "r")
    assert _rows(ran, "validation submission-"), ran
    verdict = _rows(ran, *VERDICT)
    assert _rows(_invoke("resume", "r"), *VERDICT) == verdict  # the Run has ended: resume only summarizes it
    replayed = _invoke("replay", "r")
    assert _rows(replayed, *VERDICT) == verdict
    assert "ok: every check passed" in replayed


def test_without_validation_the_public_score_is_not_called_a_validation_score(cwd: Path) -> None:
    ran = _invoke("run", "frozen-lake", "--agent", "baseline", *SMALL, "--validation-episodes", "0", "--record-to", "r")
    assert not _rows(ran, "validation "), ran
    candidate = _rows(ran, "candidate submission-")
    assert len(candidate) == 1, ran
    assert "public score" in candidate[0]
    assert "no Validation configured" in candidate[0]
    verdict = _rows(ran, *VERDICT)
    assert _rows(_invoke("resume", "r"), *VERDICT) == verdict
    assert _rows(_invoke("replay", "r"), *VERDICT) == verdict
