"""The one end-of-Run summary that ``evoledger run``, ``resume`` and ``replay`` print.

Every figure comes from a :class:`~evoledger.kernel.run.RunResult`, which ``summarize`` derives from the
run-state projection alone: ``run`` and ``resume`` print the Run they just drove (or found ended),
``replay`` the Run its log rebuilds, so the three show the same rows for the same log. Without Validation
(``--validation-episodes 0``) the Candidate's row shows its public score, and says so.
"""

from __future__ import annotations

from evoledger.kernel.cli.terminal_text import cell, markup
from evoledger.kernel.run import RunResult
from rich.console import Console
from rich.table import Table

__all__ = ["print_summary", "seed_line"]


def print_summary(result: RunResult, console: Console, *, audit_hint: bool = True) -> None:
    """The end-of-Run tables: Submissions, then the verdict (``audit_hint``: end with the replay command)."""
    table = Table(title=cell(f"Run {result.run_dir.name}: submissions"))
    for column in ("submission", "episodes", "public score", "policy failures", "selected"):
        table.add_column(column)
    for s in result.submissions:
        score = "n/a" if s.score is None else f"{s.score:.3f}"
        mark = "★" if s.submission_id == result.selected else ""
        table.add_row(cell(s.submission_id), str(s.episodes), score, str(s.policy_failures), mark)
    console.print(table)
    verdict = Table(title="verdict", show_header=False)
    verdict.add_column("what")
    verdict.add_column("value")
    verdict.add_row("terminal reason", cell(result.reason))
    verdict.add_row("selected Candidate", cell(result.selected or "none"))
    for v in result.validation:
        score = "n/a" if v.score is None else f"{v.score:.3f}"
        if result.validated:
            verdict.add_row(cell(f"validation {v.submission_id}"), f"{score} ({v.policy_failures} failures)")
        else:
            verdict.add_row(
                cell(f"candidate {v.submission_id}"),
                f"public score {score} ({v.policy_failures} failures; no Validation configured)",
            )
    assessed = "n/a" if result.assessment_score is None else f"{result.assessment_score:.3f}"
    verdict.add_row("assessment score", assessed)
    verdict.add_row("budget used", f"{result.budget_used} of {result.budget_total}")
    verdict.add_row("seed", seed_line(result.seed))
    verdict.add_row("signed by", result.signer or "unsigned")
    console.print(verdict)
    if audit_hint:
        console.print(f"audit it: evoledger replay {markup(result.run_dir)}")


def seed_line(seed: int | None) -> str:
    """How the Run's Host seeds were made, said plainly (for the header and the summary)."""
    if seed is None:
        return "random (secret key): held-out Episodes are unpredictable"
    return f"{seed} (key derived from it): reproducible, and held-out Episodes are predictable by anyone who knows it"
