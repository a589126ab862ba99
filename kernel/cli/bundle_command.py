"""``evoledger bundle`` and ``evoledger unbundle``: share a Run as one file, and unpack one as hostile input."""

from __future__ import annotations

from pathlib import Path

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity_options
from evoledger.ledger.bundle import DEFAULT_MAX_BYTES, bundle, unbundle
from evoledger.ledger.signing_keys import parse_trusted_key

__all__ = ["bundle_command", "unbundle_command"]


@click.command("bundle")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The new bundle file.")
@click.option("--json", "as_json", is_flag=True, help="Print what was bundled as JSON.")
@verbosity_options
def bundle_command(run_dir: Path, out: Path, as_json: bool) -> None:
    """Pack a Run into one file: its ledger, head manifest, signature and large Objects.

    Nothing a replay can rebuild is included (workspace, Agent mirror, host reports): unpack it with
    'evoledger unbundle', then 'evoledger replay DIR --rebuild'. An existing file is never overwritten.

    \b
    Example:
      evoledger bundle runs/cartpole-0 --out cartpole-0.evoledger
    """
    summary = bundle(run_dir, out)
    if as_json:
        echo_json({"path": summary.path, "members": summary.members, "bytes": summary.bytes, "signed": summary.signed})
    else:
        signed = "signed" if summary.signed else "unsigned"
        click.echo(f"bundled {run_dir} into {summary.path}: {summary.members} files, {summary.bytes} bytes, {signed}")


@click.command("unbundle")
@click.argument("bundle_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="A new folder for the Run."
)
@click.option(
    "--trusted-key",
    metavar="KEY|FINGERPRINT",
    default=None,
    help="Unpack only a Run signed by this key (a public key file, its text form or a fingerprint).",
)
@click.option(
    "--max-bytes", default=DEFAULT_MAX_BYTES, show_default=True, type=click.IntRange(1), help="Cap on unpacked size."
)
@click.option("--json", "as_json", is_flag=True, help="Print what was unpacked and the signature verdict as JSON.")
@verbosity_options
def unbundle_command(bundle_file: Path, out: Path, trusted_key: str | None, max_bytes: int, as_json: bool) -> None:
    """Unpack a bundle into a new folder, refusing it whole before writing anything if any member is suspect.

    Only regular files with the names a bundle holds are accepted (no links, devices, folders, absolute paths or
    '..'), sizes are capped, and the ledger must verify (and, with --trusted-key, be signed by that key) before
    the folder appears.

    \b
    Examples:
      evoledger unbundle cartpole-0.evoledger --out runs/from-lab
      evoledger unbundle cartpole-0.evoledger --out runs/from-lab --trusted-key lab.pub
    """
    trusted = None if trusted_key is None else parse_trusted_key(trusted_key)
    summary, signature = unbundle(bundle_file, out, max_bytes=max_bytes, trusted=trusted)
    if as_json:
        echo_json({"path": summary.path, "members": summary.members, "bytes": summary.bytes, **signature.to_dict()})
    else:
        click.echo(f"unpacked {summary.members} files into {summary.path}; signature {signature.status}")
        click.echo(f"audit it: evoledger replay {summary.path} --rebuild")
