"""``evoledger export``: Runs -> a rollout dataset (HuggingFace-style Parquet + card, or Minari).

The exporter is loaded by import string (docs/architecture.md: what is loaded by name goes through a registry of
import strings), so the kernel never imports ``evoledger.exporters`` statically. Missing optional
packages become an :class:`InputError` naming the extra to install.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Final

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import bar, counter, verbosity_options
from evoledger.kernel.cli.terminal_text import cell, markup
from evoledger.kernel.registry import load_object
from evoledger.kernel.sweep.record import runs_of
from evoledger.ledger.errors import InputError
from rich.console import Console
from rich.table import Table

__all__ = ["EXPORTER", "export_command"]

EXPORTER: Final = "evoledger.exporters.dataset:export_dataset"
"""The import string of the export entry point."""

_UNITS: Final = {"submissions": "rows (Submissions)", "messages": "rows (Runs)"}
"""What each config's progress counts (``steps``, ``episodes`` and ``minari``: Episodes)."""

_NEEDS: Final = {
    "hf": (("pyarrow",), "pip install 'evoledger[export]'"),
    "minari": (("pyarrow", "PIL", "minari"), "pip install 'evoledger[minari]'"),
}


def _require(output_format: str) -> None:
    modules, hint = _NEEDS[output_format]
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise InputError(
                f"`evoledger export --format {output_format}` needs the Python package {module!r}, which is not "
                f"installed; {hint}"
            ) from None


def _print(report: Any) -> None:
    console = Console()
    table = Table(title=cell(f"dataset {report.out} ({report.output_format}, visibility {report.visibility})"))
    for column in ("config", "split", "rows", "file", "bytes"):
        table.add_column(column)
    for config in report.configs:
        for split in config.splits:
            files = cell(", ".join(split.files))
            table.add_row(cell(config.name), cell(split.split), str(split.rows), files, str(split.file_bytes))
    if report.minari_dataset_id is not None:
        table.add_row("minari", cell(report.visibility), str(report.steps), cell(report.minari_dataset_id), "")
    console.print(table)
    runs = ", ".join(f"{r.run_id} ({r.head_hash[:19]}…)" for r in report.runs)
    console.print(f"runs: {markup(runs)}", highlight=False)
    console.print(
        f"observations {report.observation_encoding}, actions {report.action_encoding}; "
        f"{report.steps} steps in {report.seconds:.2f} s ({report.steps_per_second:,.0f} steps/s)"
    )


@click.command("export")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Dataset directory (new or empty; missing parents are created).",
)
@click.option(
    "--config",
    "configs",
    multiple=True,
    help="steps, episodes, submissions or messages (repeatable or comma-separated; default: all).",
)
@click.option("--visibility", type=click.Choice(["public", "all"]), default="public", show_default=True)
@click.option("--format", "output_format", type=click.Choice(["hf", "minari"]), default="hf", show_default=True)
@click.option(
    "--reward",
    type=click.Choice(["assessment", "validation", "best-public"]),
    default="assessment",
    show_default=True,
    help="Final reward of the messages config.",
)
@click.option("--json-spaces", is_flag=True, help="Store observations and actions as JSON text, never typed.")
@click.option("--minari-id", default=None, help="Minari dataset id (default: evoledger/<benchmark>/<visibility>-v0).")
@click.option("--overwrite", is_flag=True, help="Replace an earlier export in --out.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
def export_command(
    run_dirs: tuple[Path, ...],
    out: Path,
    configs: tuple[str, ...],
    visibility: str,
    output_format: str,
    reward: str,
    json_spaces: bool,
    minari_id: str | None,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Export Runs (or `evaluate --record-to` records) as a rollout dataset for RL and post-training.

    Writes Parquet (zstd) configs `steps`, `episodes`, `submissions` and `messages` with a README
    dataset card that `datasets.load_dataset(OUT, CONFIG)` reads offline; `--format minari` writes
    the steps as a Minari dataset instead. `--visibility public` (default) keeps only what the Agent
    could see plus outcome labels; `all` adds the Validation and Assessment Episodes. Every step and
    Episode row has a globally unique `episode_id`. A sweep's folder (evoledger sweep ... --out DIR) stands
    for every Run it holds: one dataset of the whole sweep, each `episode_id` starting with its cell's name.

    \b
    Examples:
      evoledger export runs/cartpole-0 --out datasets/cartpole
      evoledger export runs/a runs/b --out datasets/ab --config steps --visibility all --json
      evoledger export runs/cartpole-0 --out datasets/cartpole-minari --format minari
      evoledger export runs/eval-1 --out datasets/eval-1   (a record of evaluate --record-to runs/eval-1)
      evoledger export sweeps/study --out datasets/study   (every Run of a sweep)
    """
    from evoledger.kernel.cli.export_spaces import registered_spec

    _require(output_format)
    run_dirs = tuple(runs_of(run_dirs))  # a sweep's folder: its Runs
    export = load_object(EXPORTER)
    console = Console(stderr=True)
    with bar(console, as_json=as_json) as progress:
        opening = progress.add_task(f"exporting {len(run_dirs)} Run(s)", total=None, info="")
        report = export(
            list(run_dirs),
            out,
            configs=list(configs) or None,
            visibility=visibility,
            output_format=output_format,
            reward=reward.replace("-", "_"),
            overwrite=overwrite,
            json_spaces=json_spaces,
            minari_dataset_id=minari_id,
            spec_for=registered_spec,
            on_progress=counter(progress, console, units=_UNITS, replaces=opening),
        )
    if as_json:
        echo_json(report.to_dict())
    else:
        _print(report)
