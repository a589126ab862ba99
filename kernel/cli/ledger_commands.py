"""``evoledger ledger verify`` and ``evoledger ledger log``: audit and read a record directory."""

from __future__ import annotations

import json
from pathlib import Path

import click
from evoledger.kernel.cli.options import echo_json
from evoledger.kernel.cli.terminal_text import cell, markup
from evoledger.ledger.canonical import parse_payload
from evoledger.ledger.errors import EncodingError, UnknownNameError
from evoledger.ledger.events import EVENT_TYPES
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify
from rich.console import Console
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
    """


@ledger_group.command("verify")
@click.argument("record_dir", type=_RECORD)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
def verify_command(record_dir: Path, as_json: bool) -> None:
    """Check the hash chain, the head manifest and every referenced Object. Exit 0 only if all hold.

    \b
    Example:
      evoledger ledger verify runs/cartpole-0 --json
    """
    report = verify(record_dir)
    if as_json:
        echo_json(report.to_dict())
    else:
        console = Console()
        verdict = "[green]ok[/green]" if report.ok else "[red]FAILED[/red]"
        console.print(
            f"{verdict}  {report.events_checked} events, {report.objects_checked} objects checked in "
            f"{markup(record_dir)}"
        )
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
    if not report.ok:
        raise SystemExit(3)


@ledger_group.command("log")
@click.argument("record_dir", type=_RECORD)
@click.option("--kind", "kinds", multiple=True, help="Only Events of this kind (repeatable).")
@click.option("--visibility", type=click.Choice(["public", "host"]), default=None, help="Only public or host Events.")
@click.option("--from-seq", default=0, show_default=True, type=click.IntRange(0))
@click.option("--limit", default=None, type=click.IntRange(1), help="At most this many Events.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per Event (JSON lines).")
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
