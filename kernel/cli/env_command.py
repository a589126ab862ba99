"""``evoledger env``: the venvs of Benchmark families whose dependencies cannot share the main environment.

A family such as dm-control (mujoco<4) or nle (gymnasium 1.2.0) declares an own environment in its catalogue
(``Extra(..., own_environment=OwnEnvironment(requirements, reason))``). ``evoledger env install FAMILY`` makes its
venv (:mod:`evoledger.kernel.family_env`); its workers then start from that venv's interpreter while the Host stays
in the main environment. Commands: ``install``, ``list``, ``remove``, ``path``.
"""

from __future__ import annotations

import time
from typing import Any, Final

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity, verbosity_options

__all__ = ["env_group"]

_HEADLINES: Final = (
    *("creating", "pip install", "linked"),  # the install's own phases
    *("Collecting", "Downloading", "Using cached", "Installing", "Successfully", "ERROR"),  # pip's
)
"""The progress lines shown by default (every line of pip with -v, none with -q)."""


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.0f} MB"


@click.group("env")
def env_group() -> None:
    """Per-family venvs: where families with clashing pins run their Episodes.

    Some families pin versions the main environment cannot hold (dm-control needs mujoco<4, nle pins gymnasium
    1.2.0). Their Benchmarks are listed and built in the Host as usual, but their Episodes run in workers started
    from the family's own venv. Venvs live in $EVOLEDGER_ENVS, else $XDG_CACHE_HOME/evoledger/envs or
    ~/.cache/evoledger/envs. A family that shares the main environment is installed with pip instead
    (pip install 'evoledger[FAMILY]').

    \b
    Examples:
      evoledger env list
      evoledger env install dm-control
      evoledger env path nle
      evoledger env remove dm-control
    """


@env_group.command("install")
@click.argument("family")
@click.option("--force", is_flag=True, help="Rebuild the venv even when it is installed and current.")
@click.option("--json", "as_json", is_flag=True, help="Print the result (path, size, seconds, versions) as JSON.")
@verbosity_options
def install_command(family: str, force: bool, as_json: bool) -> None:
    """Make FAMILY's venv (its requirements and what a worker needs), replacing a stale one once the new one is whole.

    Nothing is left behind when it fails or is interrupted; an existing venv stays until the new one is complete.

    \b
    Examples:
      evoledger env install dm-control
      evoledger env install nle --force
    """
    from evoledger.kernel.family_env import (
        family_benchmarks,
        family_status,
        install_environment,
        own_environment_extra,
        update_benchmarks,
    )

    extra = own_environment_extra(family)
    assert extra.own_environment is not None  # own_environment_extra refuses the others
    requirements = extra.own_environment.requirements
    benchmarks = family_benchmarks(family)
    status = family_status(family, requirements)
    if status.state == "installed" and not force:
        update_benchmarks(status, benchmarks)  # a Benchmark the family added since: its workers find the venv
        if as_json:
            echo_json({"family": family, "state": status.state, "path": str(status.path), "installed_now": False})
        else:
            click.echo(f"{family}: already installed and current at {status.path} (--force rebuilds it)")
        return
    if status.state == "stale" and verbosity() >= 0:
        click.echo(f"{family}: {status.reason.partition(';')[0]}; rebuilding", err=True)

    def _progress(line: str) -> None:
        if verbosity() > 0 or (verbosity() == 0 and line.startswith(_HEADLINES)):
            click.echo(f"  {line}", err=True)

    started = time.monotonic()
    result = install_environment(family, requirements, extra.modules, benchmarks=benchmarks, on_line=_progress)
    seconds = time.monotonic() - started
    marker = result.status.marker
    versions = marker.versions if marker is not None else {}
    if as_json:
        echo_json(
            {
                "family": family,
                "state": result.status.state,
                "path": str(result.status.path),
                "installed_now": True,
                "bytes": result.bytes,
                "seconds": round(seconds, 1),
                "versions": versions,
            }
        )
    else:
        click.echo(f"{family}: installed at {result.status.path}: {_megabytes(result.bytes)} in {seconds:.1f} s")


@env_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print every own-environment family as JSON.")
@verbosity_options
def list_command(as_json: bool) -> None:
    """List every family with its own environment: installed, stale or missing, its path, size and why it has one.

    \b
    Examples:
      evoledger env list
      evoledger env list --json
    """
    from evoledger.kernel.family_env import environments_root, family_status, folder_bytes, own_environment_families

    rows: list[dict[str, Any]] = []
    for name, extra in own_environment_families().items():
        assert extra.own_environment is not None
        status = family_status(name, extra.own_environment.requirements)
        size = folder_bytes(status.path) if status.state != "missing" else None
        rows.append(
            {
                "family": name,
                "state": status.state,
                "path": str(status.path),
                "bytes": size,
                "why_own": extra.own_environment.reason,
                "problem": status.reason or None,
                "requirements": list(extra.own_environment.requirements),
            }
        )
    if as_json:
        echo_json({"root": str(environments_root()), "families": rows})
        return
    click.echo(f"family environments in {environments_root()}")
    if not rows:
        click.echo("  (no family has an own environment)")
    for row in rows:
        shown = "" if row["bytes"] is None else f", {_megabytes(row['bytes'])}"
        click.echo(f"  {row['family']:<14} {row['state']:<9} {row['path']}{shown}")
        click.echo(f"  {'':<14} why: {row['why_own']}")
        if row["problem"]:
            click.echo(f"  {'':<14} {row['problem']}")


@env_group.command("remove")
@click.argument("family")
@verbosity_options
def remove_command(family: str) -> None:
    """Delete FAMILY's venv (its Benchmarks then need 'evoledger env install FAMILY' again to run).

    \b
    Example:
      evoledger env remove dm-control
    """
    from evoledger.kernel.family_env import family_folder, own_environment_extra, remove_environment

    own_environment_extra(family)
    removed = remove_environment(family)
    click.echo(f"{family}: removed {removed}" if removed else f"{family}: no environment at {family_folder(family)}")


@env_group.command("path")
@click.argument("family")
@click.option("--python", "python", is_flag=True, help="Print the venv's interpreter instead of its folder.")
@verbosity_options
def path_command(family: str, python: bool) -> None:
    """Print FAMILY's venv folder (or its interpreter with --python); exit 2 when it is not installed.

    \b
    Examples:
      evoledger env path nle
      $(evoledger env path nle --python) -c 'import gymnasium; print(gymnasium.__version__)'
    """
    from evoledger.kernel.family_env import family_status, own_environment_extra
    from evoledger.ledger.errors import ConfigError

    extra = own_environment_extra(family)
    assert extra.own_environment is not None
    status = family_status(family, extra.own_environment.requirements)
    if status.state == "missing":
        raise ConfigError(f"family {family!r} has no environment: {status.reason}")
    if status.state == "stale":
        click.echo(f"warning: {status.reason}", err=True)
    click.echo(str(status.python if python else status.path))
