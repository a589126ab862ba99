"""``evoledger evaluate``: evaluate a Policy Program on a Benchmark."""

from __future__ import annotations

from pathlib import Path

import click
from evoledger.kernel.authoring import starting_program
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import ISOLATION_HELP, echo_json, isolation_choice, parse_config_pairs
from evoledger.kernel.evaluation import EpisodeResult, EvaluationConfig, EvaluationResult, evaluate
from evoledger.kernel.execution import PolicyLimits, resolve_isolation
from evoledger.kernel.registry import BenchmarkRef, default_registry
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

__all__ = ["evaluate_command"]


def _table(result: EvaluationResult, shown: int) -> Table:
    table = Table(title=f"{result.benchmark_id} · {result.split} · {len(result.episodes)} Episodes")
    for column in ("episode", "status", "return", "steps", "failure"):
        table.add_column(column, justify="right" if column in ("episode", "return", "steps") else "left")
    for e in result.episodes[:shown]:
        table.add_row(str(e.index), e.status, f"{e.episode_return:.3f}", str(e.steps), (e.failure or "")[:60])
    if len(result.episodes) > shown:
        table.add_row("…", f"{len(result.episodes) - shown} more", "", "", "")
    return table


@click.command("evaluate")
@click.argument("program_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--benchmark", "-b", default="cartpole", show_default=True, help="Registry name or pkg.module:factory.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Benchmark configuration (repeatable).")
@click.option("--episodes", "-n", default=20, show_default=True, type=click.IntRange(1))
@click.option("--split", type=click.Choice(["train", "validation", "assessment"]), default="train", show_default=True)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(0),
    help="Plans the Episodes (a public hash of it: anyone who knows the seed can compute them).",
)
@click.option("--workers", "-w", default=1, show_default=True, type=click.IntRange(1, 256))
@click.option("--act-timeout", default=None, type=click.FloatRange(min=0.001), help="Seconds per act() call.")
@click.option("--isolation", type=isolation_choice(), default="auto", show_default=True, help=ISOLATION_HELP)
@click.option(
    "--record-to",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the ledger in this new directory (default: a temporary ledger, discarded).",
)
@signing_key_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def evaluate_command(
    program_dir: Path | None,
    benchmark: str,
    settings: tuple[str, ...],
    episodes: int,
    split: str,
    seed: int,
    workers: int,
    act_timeout: float | None,
    isolation: str,
    record_to: Path | None,
    signing_key: Path | None,
    as_json: bool,
) -> None:
    """Evaluate the Policy Program in PROGRAM_DIR on a Benchmark and record every Episode.

    PROGRAM_DIR defaults to the Benchmark's starting Program (the one 'evoledger run' starts from). A record kept
    with --record-to is signed (--signing-key, default: your key).

    \b
    Examples:
      evoledger evaluate --benchmark cartpole --episodes 20
      evoledger evaluate my_program/ -b frozen-lake --set map_name=8x8 -n 100 -w 2 --record-to runs/fl8
    """
    default_registry().factory(benchmark)  # an unknown name fails here, with a suggestion
    program = program_dir or starting_program(default_registry().make(benchmark, parse_config_pairs(settings)))
    limits = PolicyLimits() if act_timeout is None else PolicyLimits(act_timeout_seconds=act_timeout)
    chosen = resolve_isolation(isolation)  # ConfigError (with the install hint) for an unusable bwrap
    config = EvaluationConfig(
        split=split, episodes=episodes, seed=seed, workers=workers, limits=limits, isolation=chosen.isolation
    )
    ref = BenchmarkRef(name=benchmark, config=parse_config_pairs(settings))
    key = resolve_signing_key(signing_key) if record_to is not None else None
    console = Console(stderr=True)
    if not as_json:  # JSON output stays one document; the record keeps the isolation used
        console.print(f"isolation: {chosen.describe()}", highlight=False)
    with Progress(
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        TimeElapsedColumn(),
        console=console,
        disable=as_json or not console.is_terminal,
    ) as progress:
        task = progress.add_task("episodes", total=episodes, last="")

        def _advance(result: EpisodeResult) -> None:
            progress.update(task, advance=1, last=f"return {result.episode_return:.2f}")

        result = evaluate(program, ref, config=config, record_to=record_to, on_episode=_advance, signing_key=key)
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    out = Console()
    out.print(_table(result, shown=20))
    score = "n/a" if result.score is None else f"{result.score:.4f}"
    out.print(f"[bold]score[/bold] {score}   failures {result.failures}   program {result.program_digest[:19]}…")
    if result.ledger_path is not None:
        out.print(f"recorded to {result.ledger_path}  (check it: evoledger ledger verify {result.ledger_path})")
