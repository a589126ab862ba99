"""``evoledger ledger verify``, ``log`` and ``show``: audit a record directory, read its Events and Objects."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.progress import verbosity_options
from evoledger.kernel.cli.terminal_text import cell, markup, printable
from evoledger.ledger.canonical import is_digest, parse_payload
from evoledger.ledger.errors import EncodingError, InputError, UnknownNameError
from evoledger.ledger.events import EVENT_TYPES
from evoledger.ledger.signature_check import check_signature
from evoledger.ledger.signing_keys import parse_trusted_key
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["ledger_group"]

_RECORD = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group("ledger")
def ledger_group() -> None:
    """Inspect a record directory's ledger (a Run or an evaluation record).

    \b
    Examples:
      evoledger ledger verify runs/cartpole-0
      evoledger ledger log runs/cartpole-0 --kind feedback-published
      evoledger ledger show runs/cartpole-0 sha256:3f1c0e4b9a7d
    """


@ledger_group.command("verify")
@click.argument("record_dir", type=_RECORD)
@click.option(
    "--trusted-key",
    metavar="KEY|FINGERPRINT",
    default=None,
    help="Prove the log was written by this key's holder and not rewritten since: a public key file or its text "
    "form (from 'evoledger keys export'), or a fingerprint ed25519:<32 hex>.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@verbosity_options
def verify_command(record_dir: Path, trusted_key: str | None, as_json: bool) -> None:
    """Check the hash chain, the head manifest, every referenced Object and the signature. Exit 0 only if all hold.

    Without --trusted-key the signature is reported (signed by a fingerprint, unsigned, or invalid) but nothing
    says who holds that key; with it, the Run must be signed by exactly that key.

    \b
    Examples:
      evoledger ledger verify runs/cartpole-0 --json
      evoledger ledger verify runs/cartpole-0 --trusted-key lab.pub
      evoledger ledger verify runs/cartpole-0 --trusted-key ed25519:3f1c0e4b9a7d2e6f8a0b1c2d3e4f5a6b
    """
    trusted = None if trusted_key is None else parse_trusted_key(trusted_key)
    report = verify(record_dir)
    signature = check_signature(record_dir, log_head=report.log_head, trusted=trusted)
    if as_json:
        echo_json({**report.to_dict(), "ok": report.ok and signature.ok, "signature": signature.to_dict()})
    else:
        console = Console()
        verdict = "[green]ok[/green]" if report.ok and signature.ok else "[red]FAILED[/red]"
        console.print(
            f"{verdict}  {report.events_checked} events, {report.objects_checked} objects checked in "
            f"{markup(record_dir)}"
        )
        mark = "[green]" if signature.ok else "[red]"
        console.print(f"{mark}signature {signature.status}[/]  {escape(signature.message)}")
        if report.problems:
            table = Table("check", "code", "seq", "digest", "what it means")
            for p in report.problems[:50]:
                table.add_row(
                    cell(p.check),
                    cell(p.code),
                    "" if p.seq is None else str(p.seq),
                    cell((p.digest or "")[:23]),
                    cell(p.message),
                )
            console.print(table)
    if not (report.ok and signature.ok):
        raise SystemExit(3)


@ledger_group.command("log")
@click.argument("record_dir", type=_RECORD)
@click.option("--kind", "kinds", multiple=True, help="Only Events of this kind (repeatable).")
@click.option("--visibility", type=click.Choice(["public", "host"]), default=None, help="Only public or host Events.")
@click.option("--from-seq", default=0, show_default=True, type=click.IntRange(0))
@click.option("--limit", default=None, type=click.IntRange(1), help="At most this many Events.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per Event (JSON lines).")
@verbosity_options
def log_command(
    record_dir: Path, kinds: tuple[str, ...], visibility: str | None, from_seq: int, limit: int | None, as_json: bool
) -> None:
    """List the Events of a record, oldest first.

    A payload that cannot be read (not UTF-8, nested too deeply, an over-long number or string) is listed
    as a finding naming its seq (with --json: "payload": null and "payload_error") and the exit code is 3.

    \b
    Example:
      evoledger ledger log runs/cartpole-0 --kind submission-accepted --json
    """
    for kind in kinds:
        if kind not in EVENT_TYPES:  # a typo would otherwise list nothing, silently
            raise UnknownNameError("event kind", kind, EVENT_TYPES)
    unreadable: list[tuple[int, str]] = []
    with Ledger.open(record_dir) as book:
        rows = book.records(from_seq, visibility=visibility, kinds=kinds or None)
        table = None if as_json else Table("seq", "kind", "visibility", "recorded at", "payload")
        for n, stored in enumerate(rows):
            if limit is not None and n >= limit:
                break
            try:
                data, error = parse_payload(stored.payload), None
            except EncodingError as exc:
                data, error = None, str(exc)
                unreadable.append((stored.seq, error))
            if as_json:
                line = {
                    "seq": stored.seq,
                    "kind": stored.kind,
                    "version": stored.version,
                    "visibility": stored.visibility,
                    "hash": stored.hash,
                    "recorded_at": stored.recorded_at,
                    "payload": data,
                }
                if error is not None:
                    line["payload_error"] = error
                click.echo(json.dumps(line, sort_keys=True))
            elif table is not None:
                payload = stored.payload[:240].decode("utf-8", errors="backslashreplace")[:80]
                table.add_row(
                    str(stored.seq), cell(stored.kind), cell(stored.visibility), cell(stored.recorded_at), cell(payload)
                )
        if table is not None:
            console = Console()
            console.print(table)
            for seq, error in unreadable:
                console.print(f"[red]unreadable payload[/red] at seq {seq}: {markup(error)}", highlight=False)
    if unreadable:
        if as_json:
            click.echo(f"error: {len(unreadable)} unreadable payload(s), first at seq {unreadable[0][0]}", err=True)
        raise SystemExit(3)


_SHOWN_BYTES = 2 * 1024 * 1024
_PREFIX = re.compile(r"(?:sha256:)?([0-9a-f]{6,64})")


def _find_digest(book: Ledger, digest: str, record_dir: Path) -> str:
    if is_digest(digest):
        return digest
    match = _PREFIX.fullmatch(digest.strip().lower())
    if match is None:
        raise InputError(f"{digest!r} is not an Object digest; give sha256:<64 hex digits> or at least 6 of them")
    found = [e.digest for e in book.objects.entries() if e.digest.removeprefix("sha256:").startswith(match.group(1))]
    if len(found) != 1:
        what = "no Object" if not found else f"{len(found)} Objects"
        raise InputError(
            f"{what} in {record_dir} start with {digest!r}; give more digits (digests are in "
            f"'evoledger ledger log {record_dir} --json')"
        )
    return found[0]


@ledger_group.command("show")
@click.argument("record_dir", type=_RECORD)
@click.argument("digest")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the Object's bytes to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print digest, size and text as JSON.")
@verbosity_options
def show_command(record_dir: Path, digest: str, out: Path | None, as_json: bool) -> None:
    """Print the Object DIGEST of a record: a traceback, a Feedback file, an Agent log, a Program manifest.

    DIGEST is the full sha256:... from an Event (see 'ledger log') or a unique prefix of at least 6 hex digits.
    Text is printed with control characters escaped; JSON is indented; other bytes need --out.

    \b
    Examples:
      evoledger ledger show runs/cartpole-0 sha256:3f1c0e4b9a7d
      evoledger ledger show runs/cartpole-0 3f1c0e4b9a7d --out feedback.json
    """
    with Ledger.open(record_dir) as book:
        found = _find_digest(book, digest, record_dir)
        data = book.objects.get(found)
    if out is not None:
        out.write_bytes(data)
        click.echo(f"wrote {len(data)} bytes of {found} to {printable(out)}")
        return
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        with contextlib.suppress(ValueError, RecursionError):  # not JSON, or nested past what json reads
            text = json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False)
    if as_json:
        echo_json({"digest": found, "size": len(data), "text": text})
        return
    if text is None:
        raise InputError(f"{found} holds {len(data)} bytes that are not text; write them to a file with --out FILE")
    if len(text) > _SHOWN_BYTES:
        text = text[:_SHOWN_BYTES] + f"\n... ({len(data)} bytes in all; --out FILE writes them all)"
    click.echo("\n".join(printable(line) for line in text.splitlines()))
