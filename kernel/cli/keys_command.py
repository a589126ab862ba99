"""``evoledger keys``: the Host's signing key (show, create, export), and the ``--signing-key`` option.

Every Run the CLI records is signed (``ledger.sig``) with ``--signing-key PATH`` or, by default, the user's
key (``$EVOLEDGER_HOME/signing-key.pem``, else ``$XDG_CONFIG_HOME/evoledger/`` or ``~/.config/evoledger/``),
created on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity_options

if TYPE_CHECKING:
    from evoledger.ledger.signing_keys import SigningKey

__all__ = ["keys_group", "resolve_signing_key", "signing_key_option"]

_F = TypeVar("_F", bound=Callable[..., Any])


def signing_key_option(command: _F) -> _F:
    """The ``--signing-key PATH`` option of the commands that record (run, resume, evaluate --record-to)."""
    return click.option(
        "--signing-key",
        "signing_key",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="ed25519 key that signs the record's head (default: the user's key, created on first use; "
        "see 'evoledger keys show').",
    )(command)


def resolve_signing_key(path: Path | None) -> SigningKey:
    """The key at ``path``, or the user's default key (created if absent)."""
    # cryptography only now: the commands that take --signing-key import this module before they start work
    from evoledger.ledger.signing_keys import load_key_file, load_or_create_default_key

    return load_key_file(path) if path is not None else load_or_create_default_key()


@click.group("keys")
def keys_group() -> None:
    """The Host's ed25519 signing key: every recorded Run's head is signed with it (ledger.sig).

    A reviewer who has your public key (or its fingerprint) checks that a Run was written by you and not rewritten
    since: 'evoledger ledger verify RUN --trusted-key KEY'. A signature does not prove the Host was honest, nor
    that the key was not stolen.

    \b
    Examples:
      evoledger keys show
      evoledger keys export > my-key.pub
      evoledger keys create --out ~/keys/lab.pem
    """


@keys_group.command("show")
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path), help="A key file (default: yours).")
@click.option("--json", "as_json", is_flag=True, help="Print the fingerprint, public key and path as JSON.")
@verbosity_options
def show_command(key_path: Path | None, as_json: bool) -> None:
    """Show the fingerprint and path of the default signing key (created if absent) or of --key.

    \b
    Example:
      evoledger keys show --json
    """
    key = resolve_signing_key(key_path)
    data = {"fingerprint": key.fingerprint, "path": str(key.path), "public_key": key.public.text}
    if as_json:
        echo_json(data)
    else:
        click.echo(f"fingerprint  {key.fingerprint}\npath         {key.path}\npublic key   {key.public.text}")


@keys_group.command("create")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the new key (default: the default key path). An existing file is never overwritten.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the fingerprint and path as JSON.")
@verbosity_options
def create_command(out: Path | None, as_json: bool) -> None:
    """Create a new ed25519 signing key (mode 0600, its folder 0700); refuses to overwrite any file.

    \b
    Examples:
      evoledger keys create
      evoledger keys create --out ~/keys/lab.pem
    """
    from evoledger.ledger.signing_keys import create_key_file, default_key_path

    key = create_key_file(out if out is not None else default_key_path())
    if as_json:
        echo_json({"fingerprint": key.fingerprint, "path": str(key.path), "public_key": key.public.text})
    else:
        click.echo(f"created {key.path}\nfingerprint  {key.fingerprint}")


@keys_group.command("export")
@click.option("--key", "key_path", type=click.Path(dir_okay=False, path_type=Path), help="A key file (default: yours).")
@verbosity_options
def export_command(key_path: Path | None) -> None:
    """Print the public key in its one-line text form, to give to reviewers (--trusted-key accepts it).

    \b
    Examples:
      evoledger keys export > lab.pub
      evoledger ledger verify runs/cartpole-0 --trusted-key lab.pub
    """
    click.echo(resolve_signing_key(key_path).public.text)
