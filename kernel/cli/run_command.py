"""``evoledger run``: a complete Run with live progress and a summary table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from evoledger.kernel.agents.sandbox import resolve_agent_isolation
from evoledger.kernel.cli.agent_isolation import agent_isolation_option
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import ISOLATION_HELP, echo_json, isolation_choice, parse_config_pairs
from evoledger.kernel.cli.run_summary import print_summary, seed_line
from evoledger.kernel.execution import PolicyLimits, resolve_isolation
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import RunConfig, run
from evoledger.kernel.run.config import AgentConfig, AssessmentConfig, ValidationConfig
from evoledger.projections.run_state import RunState
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["run_command"]


@click.command("run")
@click.argument("benchmark", default="cartpole")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Benchmark configuration (repeatable).")
@click.option(
    "--agent",
    default="hill-climb",
    show_default=True,
    help="hill-climb, baseline, codex, claude-code, kimi-code, qoder, or command:...",
)
@click.option("--agent-model", default=None, help="Model name passed to a coding-agent CLI.")
@click.option("--agent-arg", "agent_args", multiple=True, help="Extra argument for the agent CLI (repeatable).")
@click.option(
    "--program",
    "initial_program",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Initial Program directory (default: the packaged one).",
)
@click.option(
    "--record-to",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory (default: runs/<benchmark>, or runs/<benchmark>-<seed> with --seed).",
)
@click.option("--episode-budget", default=100, show_default=True, type=click.IntRange(1))
@click.option(
    "--episode-pool-size", default=None, type=click.IntRange(1), help="Training pool size (default: the budget)."
)
@click.option("--max-submissions", default=None, type=click.IntRange(1), help="Default: the budget.")
@click.option("--max-episodes-per-submission", default=None, type=click.IntRange(1))
@click.option(
    "--finish-budget-policy",
    type=click.Choice(["allow_early", "require_budget_exhaustion"]),
    default="allow_early",
    show_default=True,
)
@click.option("--bulk-feedback-retention-bytes", default=1 << 30, show_default=True, type=click.IntRange(0))
@click.option("--validation-episodes", default=10, show_default=True, type=click.IntRange(0))
@click.option("--max-candidates", default=3, show_default=True, type=click.IntRange(1))
@click.option("--assessment-episodes", default=20, show_default=True, type=click.IntRange(0))
@click.option(
    "--seed",
    default=None,
    type=click.IntRange(0, 2**63 - 1),
    help="Derive the Run's secret key from this seed, for a reproducible plan. WARNING: anyone who knows the seed "
    "can predict every held-out Validation and Assessment Episode. Default: a random secret key (unpredictable).",
)
@click.option(
    "--act-timeout", default=2.0, show_default=True, type=click.FloatRange(min=0.001), help="Seconds per act()."
)
@click.option("--episode-policy-seconds", default=600.0, show_default=True, type=click.FloatRange(min=0.001))
@click.option("--agent-timeout", default=3600.0, show_default=True, type=click.FloatRange(min=0.001), help="Seconds.")
@click.option("--finish-grace", default=5.0, show_default=True, type=click.FloatRange(min=0))
@click.option("--workers", "-w", default=1, show_default=True, type=click.IntRange(1, 256))
@click.option("--isolation", type=isolation_choice(), default="auto", show_default=True, help=ISOLATION_HELP)
@agent_isolation_option
@click.option("--fallback", type=click.Choice(["none", "best_public"]), default="none", show_default=True)
@signing_key_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def run_command(**options: Any) -> None:
    """Run an Agent against a Benchmark under an Episode budget, then validate, select and assess.

    With no arguments: a complete CartPole Run with the built-in hill-climb Agent (offline, no API key).

    \b
    Examples:
      evoledger run
      evoledger run frozen-lake --set map_name=8x8 --agent baseline --episode-budget 40
      evoledger run cartpole --agent claude-code --episode-budget 200 --record-to runs/cc-1
    """
    name = options["benchmark"]
    isolation = resolve_isolation(options["isolation"])  # ConfigError (with the install hint) for unusable bwrap
    agent_isolation = resolve_agent_isolation(options["agent_isolation"])  # likewise for --agent-isolation bwrap
    config = RunConfig(
        benchmark=BenchmarkRef(name=name, config=parse_config_pairs(options["settings"])),
        episode_budget=options["episode_budget"],
        episode_pool_size=options["episode_pool_size"],
        max_submissions=options["max_submissions"],
        max_episodes_per_submission=options["max_episodes_per_submission"],
        finish_budget_policy=options["finish_budget_policy"],
        bulk_feedback_retention_bytes=options["bulk_feedback_retention_bytes"],
        validation=ValidationConfig(episodes=options["validation_episodes"], max_candidates=options["max_candidates"]),
        assessment=AssessmentConfig(episodes=options["assessment_episodes"]),
        seed=options["seed"],
        limits=PolicyLimits(
            act_timeout_seconds=options["act_timeout"], episode_policy_seconds=options["episode_policy_seconds"]
        ),
        agent_timeout_seconds=options["agent_timeout"],
        finish_grace_seconds=options["finish_grace"],
        workers=options["workers"],
        isolation=isolation.isolation,
        agent_isolation=agent_isolation.isolation,
        fallback=options["fallback"],
        agent=AgentConfig(name=options["agent"], model=options["agent_model"], args=tuple(options["agent_args"])),
    )
    signing_key = resolve_signing_key(options["signing_key"])  # a bad key is refused before anything is created
    stem = name if options["seed"] is None else f"{name}-{options['seed']}"
    record_to = options["record_to"] or _fresh_dir(Path("runs"), stem)
    console = Console(stderr=True)
    as_json = options["as_json"]
    if not as_json:  # JSON output stays one document; run-created records the isolation used
        console.print(f"Run {record_to}: seed {seed_line(options['seed'])}")
        console.print(f"isolation: {isolation.describe()}", highlight=False)
        console.print(f"agent isolation: {agent_isolation.describe()}", highlight=False)
    with Progress(
        TextColumn("[bold]budget"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
        disable=as_json or not console.is_terminal,
    ) as progress:
        task = progress.add_task("budget", total=config.episode_budget, info="")

        def _update(state: RunState) -> None:
            latest = state.submissions[state.submission_order[-1]] if state.submission_order else None
            score = "" if latest is None or latest.score is None else f"latest score {latest.score:.2f}"
            progress.update(
                task, completed=state.charged - state.refunded, info=f"{state.submissions_used} subs {score}"
            )

        result = run(
            config,
            record_to=record_to,
            initial_program=options["initial_program"],
            on_update=_update,
            signing_key=signing_key,
        )
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        print_summary(result, Console())


def _fresh_dir(parent: Path, stem: str) -> Path:
    """``parent/stem``, or ``parent/stem-2``, ... when taken (a default never overwrites a Run)."""
    candidate, n = parent / stem, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{stem}-{n}"
    return candidate
