"""``evoledger run``: a complete Run with live progress and a summary table."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import click
from evoledger.kernel.agents.registry import check_agent_program, make_agent
from evoledger.kernel.agents.sandbox import resolve_agent_isolation
from evoledger.kernel.cli.agent_options import AGENT_OPTION_FIELDS, agent_option_flag, apply_agent_options
from evoledger.kernel.cli.backend_options import backend_options, chosen_backend
from evoledger.kernel.cli.benchmark_limits import apply_benchmark_limits
from evoledger.kernel.cli.config_options import (
    POLICY_LIMIT_FLAGS,
    config_option_decorator,
    config_options,
    config_values,
)
from evoledger.kernel.cli.keys_command import resolve_signing_key, signing_key_option
from evoledger.kernel.cli.options import echo_json, parse_config_pairs
from evoledger.kernel.cli.progress import bar, counter, judging_text, note, run_watcher, verbosity_options
from evoledger.kernel.cli.run_outcome import EXIT_CODES_HELP, exit_for_run, resume_hint_on_interrupt
from evoledger.kernel.cli.run_report import leave_host_report
from evoledger.kernel.cli.run_summary import print_summary, seed_line
from evoledger.kernel.cli.terminal_text import markup
from evoledger.kernel.execution import resolve_isolation
from evoledger.kernel.registry import BenchmarkRef, default_registry
from evoledger.kernel.run import RunConfig, run
from rich.console import Console

__all__ = ["RUN_FLAGS", "RUN_OPTIONS", "run_command"]


RUN_FLAGS: Final[dict[str, tuple[str, ...]]] = {
    "agent.name": ("--agent",),
    "agent.args": ("--agent-arg",),
    "validation.max_candidates": ("--max-candidates",),
    **POLICY_LIMIT_FLAGS,
    "agent_timeout_seconds": ("--agent-timeout",),
    "finish_grace_seconds": ("--finish-grace",),
    "workers": ("--workers", "-w"),
}
"""Flags shorter than their field's path; every other flag is the path (``validation.episodes`` ->
``--validation-episodes``; the fields of ``limits`` are not prefixed)."""

RUN_OPTIONS: Final = config_options(
    RunConfig, flags=RUN_FLAGS, flatten=("limits",), skip=("benchmark", *AGENT_OPTION_FIELDS)
)
"""One option per :class:`RunConfig` field (the Benchmark is the argument and ``--set``)."""


@click.command("run", epilog=EXIT_CODES_HELP)
@click.argument("benchmark", default="cartpole")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Benchmark configuration (repeatable).")
@click.option(
    "--program",
    "initial_program",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Initial Program directory (default: the Benchmark's starting Program, e.g. its tunable one).",
)
@click.option(
    "--record-to",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory (default: runs/<benchmark>, or runs/<benchmark>-<seed> with --seed; '/' becomes '-').",
)
@config_option_decorator(RUN_OPTIONS)
@backend_options
@agent_option_flag
@signing_key_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@verbosity_options
def run_command(
    benchmark: str,
    settings: tuple[str, ...],
    initial_program: Path | None,
    record_to: Path | None,
    backend: str,
    ray_address: str | None,
    agent_options: tuple[str, ...],
    signing_key: Path | None,
    as_json: bool,
    **config_args: Any,
) -> None:
    """Run an Agent against a Benchmark under an Episode budget, then validate, select and assess.

    With no arguments: a complete CartPole Run with the built-in hill-climb Agent (offline, no API key).

    \b
    Examples:
      evoledger run
      evoledger run frozen-lake --set map_name=8x8 --agent baseline --episode-budget 40
      evoledger run cartpole --agent claude-code --episode-budget 200 --record-to runs/cc-1
    """
    values = config_values(RUN_OPTIONS, config_args)
    values["agent"] = apply_agent_options(values["agent"], agent_options)
    own_limits = apply_benchmark_limits(benchmark, values["limits"], click.get_current_context())
    isolation = resolve_isolation(values["isolation"])  # ConfigError (with the install hint) for unusable bwrap
    agent_isolation = resolve_agent_isolation(values["agent_isolation"])  # likewise for --agent-isolation bwrap
    where = chosen_backend(backend, ray_address)  # likewise when Ray is missing
    config = RunConfig.model_validate(
        {
            **values,
            "benchmark": BenchmarkRef(name=benchmark, config=parse_config_pairs(settings)),
            "isolation": isolation.isolation,
            "agent_isolation": agent_isolation.isolation,
        }
    )
    agent = make_agent(config.agent.name, config.agent.adapter_options())
    check_agent_program(agent, model=config.agent.model, extra_args=config.agent.args)
    default_registry().check_installed(benchmark)  # a missing extra: one line with its install command, first
    key = resolve_signing_key(signing_key)  # a bad key is refused before anything is created
    flat = benchmark.replace("/", "-")  # family/task: runs/family-task, one folder
    stem = flat if config.seed is None else f"{flat}-{config.seed}"
    taken = record_to is None and (Path("runs") / stem).exists()
    record_to = record_to or _fresh_dir(Path("runs"), stem)
    console = Console(stderr=True)
    if not as_json:  # JSON output stays one document; run-created records the isolation used
        held = f" (runs/{stem} already holds a Run)" if taken else ""
        note(console, f"run directory: {markup(record_to)}{held}")
        note(console, f"seed {seed_line(config.seed)}")
        note(console, f"isolation: {isolation.describe()}")
        note(console, f"agent isolation: {agent_isolation.describe()}")
        if where.name == "ray":
            note(console, f"backend: ray ({where.ray_address or 'a local Ray instance'})")
        if own_limits:
            note(console, f"limits: {', '.join(own_limits)} ({benchmark}'s own defaults; a flag overrides them)")
    with bar(console, as_json=as_json) as progress:
        judging = judging_text(config.validation.episodes, config.candidate_limit, config.assessment.episodes)
        _update = run_watcher(progress, console, judging=judging)
        with resume_hint_on_interrupt(record_to, console):
            result = run(
                config,
                record_to=record_to,
                initial_program=initial_program,
                on_update=_update,
                signing_key=key,
                on_judged=counter(progress, console),
                backend=where,
            )
    report = leave_host_report(result.run_dir, console)
    if as_json:
        echo_json(
            {
                **result.model_dump(mode="json"),
                "message": result.message,
                "report_html": None if report is None else str(report),
            }
        )
    else:
        print_summary(result, Console())
        if report is not None:
            Console().print(f"report: {markup(report)}", highlight=False, soft_wrap=True)
    exit_for_run(result.run_dir, result.reason, result.selected, Console(stderr=True), result.message)


def _fresh_dir(parent: Path, stem: str) -> Path:
    """``parent/stem``, or ``parent/stem-2``, ... when taken (a default never overwrites a Run)."""
    candidate, n = parent / stem, 1
    while candidate.exists():
        n += 1
        candidate = parent / f"{stem}-{n}"
    return candidate
