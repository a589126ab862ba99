"""``evoledger evaluate``: evaluate a Policy Program on a Benchmark."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click
from evoledger.kernel.cli.backend_options import backend_options, chosen_backend
from evoledger.kernel.cli.benchmark_limits import apply_benchmark_limits
from evoledger.kernel.cli.config_options import (
    POLICY_LIMIT_FLAGS,
    config_option_decorator,
    config_options,
    config_values,
)
from evoledger.kernel.cli.episode_failures import EVALUATE_EXIT_CODES_HELP, exit_if_all_failed
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import echo_json, parse_config_pairs
from evoledger.kernel.cli.progress import bar, note, step, verbosity_options
from evoledger.kernel.evaluation import EpisodeResult, EvaluationConfig, EvaluationResult, evaluate
from evoledger.kernel.execution import PolicyLimits, resolve_isolation
from evoledger.kernel.execution.backend import open_executor
from evoledger.kernel.registry import BenchmarkRef, default_registry

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["evaluate_command"]


def _table(result: EvaluationResult, shown: int) -> Table:
    from rich.table import Table

    table = Table(title=f"{result.benchmark_id} · {result.split} · {len(result.episodes)} Episodes")
    for column in ("episode", "status", "return", "steps", "failure"):
        table.add_column(column, justify="right" if column in ("episode", "return", "steps") else "left")
    for e in result.episodes[:shown]:
        table.add_row(str(e.index), e.status, f"{e.episode_return:.3f}", str(e.steps), (e.failure or "")[:60])
    if len(result.episodes) > shown:
        table.add_row("…", f"{len(result.episodes) - shown} more", "", "", "")
    return table


_SINGLE_THREADED: Final = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
"""Read once, when numpy loads its BLAS: unless the user set them, the caller's numpy starts without a thread pool."""


@contextlib.contextmanager
def _loading() -> Iterator[None]:
    """Load the command's modules (the Benchmarks with numpy and gymnasium, the ledger, rich) as cheaply as they go.

    The cyclic garbage collector is paused: what loading allocates (modules, classes, schemas) lives as long as the
    process, yet the collector would walk it again and again as it grows (a full collection took tens of milliseconds
    on the way to the first Episode). Afterwards it is frozen out of the collector's sight (:func:`gc.freeze`), and
    the collector resumes as before: only imports run paused, not a Benchmark's factory.

    numpy's BLAS starts single-threaded, as in the workers: this process does no linear algebra worth a thread pool,
    and starting one cost 20-60 ms. The environment is restored afterwards (the workers set their own).
    """
    enabled = gc.isenabled()
    gc.disable()
    unset = [name for name in _SINGLE_THREADED if name not in os.environ]
    os.environ.update(dict.fromkeys(unset, "1"))
    try:
        yield
    finally:
        for name in unset:
            os.environ.pop(name, None)
        gc.freeze()
        if enabled:
            gc.enable()


EVALUATE_OPTIONS: Final = config_options(
    EvaluationConfig,
    flags={**POLICY_LIMIT_FLAGS, "episodes": ("--episodes", "-n"), "workers": ("--workers", "-w")},
    flatten=("limits",),
)
"""One option per :class:`EvaluationConfig` field."""


@click.command("evaluate", epilog=EVALUATE_EXIT_CODES_HELP)
@click.argument("program_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--benchmark", "-b", default="cartpole", show_default=True, help="Registry name or pkg.module:factory.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Benchmark configuration (repeatable).")
@config_option_decorator(EVALUATE_OPTIONS)
@backend_options
@click.option(
    "--record-to",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the ledger in this new directory (default: a temporary ledger, discarded).",
)
@signing_key_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@verbosity_options
def evaluate_command(
    program_dir: Path | None,
    benchmark: str,
    settings: tuple[str, ...],
    backend: str,
    ray_address: str | None,
    record_to: Path | None,
    signing_key: Path | None,
    as_json: bool,
    **config_args: Any,
) -> None:
    """Evaluate the Policy Program in PROGRAM_DIR on a Benchmark and record every Episode.

    PROGRAM_DIR defaults to the Benchmark's starting Program (the one 'evoledger run' starts from). A record kept
    with --record-to is signed (--signing-key, default: your key).

    \b
    Examples:
      evoledger evaluate --benchmark cartpole --episodes 20
      evoledger evaluate my_program/ -b frozen-lake --set map_name=8x8 -n 100 -w 2 --record-to runs/fl8
      evoledger evaluate -b cartpole -n 1000 -w 16 --backend ray --ray-address auto
    """
    values = config_values(EVALUATE_OPTIONS, config_args)
    chosen = resolve_isolation(values["isolation"])  # ConfigError (with the install hint) for an unusable bwrap
    where = chosen_backend(backend, ray_address)  # ConfigError (with the install hint) when Ray is missing
    config = EvaluationConfig.model_validate({**values, "isolation": chosen.isolation})
    ref = BenchmarkRef(name=benchmark, config=parse_config_pairs(settings))
    # The workers start first and are waited for at the first Episode: their start-up overlaps all that follows,
    # including the imports below (rich; the Benchmarks with numpy and gymnasium), which this module does not pay.
    executor = click.get_current_context().with_resource(
        open_executor(
            where,
            ref,
            workers=config.workers,
            isolation=config.isolation,
            wait_until_ready=False,
            policy_abi=config.policy_abi,
        )
    )
    with _loading():
        from evoledger.kernel.authoring import starting_program
        from evoledger.kernel.evaluation_run import run_evaluation  # noqa: F401  (what evaluate() loads first)
        from rich.console import Console

        default_registry().factory(benchmark)  # loads the Benchmarks' modules; an unknown name fails here
    limits = config.limits.model_dump()
    own_limits = apply_benchmark_limits(benchmark, limits, click.get_current_context())  # the tasks' limits only
    if own_limits:
        config = config.model_copy(update={"limits": PolicyLimits.model_validate(limits)})
    built, program = None, program_dir
    if program is None:  # built here to find its starting Program, then handed on: never built twice
        built = default_registry().make(benchmark, ref.config)
        program = starting_program(built)
    key = resolve_signing_key(signing_key) if record_to is not None else None
    console = Console(stderr=True)
    if not as_json:  # JSON output stays one document; the record keeps the isolation used
        note(console, f"isolation: {chosen.describe()}")
        if where.name == "ray":
            note(console, f"backend: ray ({where.ray_address or 'a local Ray instance'})")
        if own_limits:
            note(console, f"limits: {', '.join(own_limits)} ({benchmark}'s own defaults; a flag overrides them)")
    with bar(console, as_json=as_json, info="last") as progress:
        task = progress.add_task("evaluating", total=config.episodes, last="")

        def _advance(result: EpisodeResult) -> None:
            progress.update(task, advance=1, last=f"return {result.episode_return:.2f}")
            failure = "" if result.status == "ok" else f" ({result.status}: {result.failure})"
            step(console, f"Episode {result.index}: return {result.episode_return:.3f}, {result.steps} steps{failure}")

        result = evaluate(
            program,
            ref,
            config=config,
            record_to=record_to,
            executor=executor,
            on_episode=_advance,
            signing_key=key,
            built_benchmark=built,
        )
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        out = Console()
        out.print(_table(result, shown=20))
        score = "n/a" if result.score is None else f"{result.score:.4f}"
        out.print(f"[bold]score[/bold] {score}   failures {result.failures}   program {result.program_digest[:19]}…")
        if result.ledger_path is not None:
            out.print(f"recorded to {result.ledger_path}  (check it: evoledger ledger verify {result.ledger_path})")
    exit_if_all_failed(result, program, console)
