"""The output directory of an export: refused when in use, built aside, and swapped into place at the end.

An export writes into a hidden staging directory next to ``out`` and renames it to ``out`` only when
everything succeeded, so a failed export leaves ``out`` as it was. ``out`` must be absent or empty;
``overwrite`` replaces it, but only if it holds an earlier evoledger export (its ``README.md`` card
says so), so a mistyped path can never wipe an unrelated directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import InputError

__all__ = ["CARD_NAME", "EXPORT_FORMAT", "check_output_dir", "discard", "is_export_card", "publish", "staging_dir"]

CARD_NAME: Final = "README.md"
EXPORT_FORMAT: Final = "evoledger.dataset/1"
_CARD_MARKER: Final = "\nevoledger:\n  export_format: "


def is_export_card(text: str) -> bool:
    """Whether ``text`` is a dataset card written by evoledger's exporter."""
    return text.startswith("---\n") and _CARD_MARKER in text


def _is_previous_export(out: Path) -> bool:
    card = out / CARD_NAME
    try:
        return card.is_file() and is_export_card(card.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def check_output_dir(out: Path, *, overwrite: bool) -> None:
    """Refuse ``out`` unless it is absent, empty, or (with ``overwrite``) an earlier export."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; choose a directory path for the dataset")
    if not out.exists():
        if not out.parent.is_dir():
            raise InputError(f"the parent of --out {out} does not exist; create {out.parent} first")
        return
    entries = sorted(entry.name for entry in out.iterdir())
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise InputError(
            f"output directory {out} is not empty ({len(entries)} entries: {shown}); choose a new or empty "
            "directory, or pass --overwrite (overwrite=True) to replace an earlier export"
        )
    if not _is_previous_export(out):
        raise InputError(
            f"--overwrite refused: {out} is not empty and does not hold an evoledger export (no {CARD_NAME} "
            "written by `evoledger export`); remove it yourself or choose another directory"
        )


def staging_dir(out: Path) -> Path:
    """A fresh, empty staging directory beside ``out``."""
    staging = out.parent / f".{out.name}.export-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    return staging


def publish(staging: Path, out: Path, *, overwrite: bool) -> None:
    """Move ``staging`` into place as ``out`` (checking ``out`` again: it may have changed meanwhile)."""
    check_output_dir(out, overwrite=overwrite)
    if out.exists():
        if any(out.iterdir()):
            shutil.rmtree(out)
        else:
            out.rmdir()
    staging.rename(out)


def discard(staging: Path) -> None:
    """Remove a staging directory after a failure (best effort)."""
    shutil.rmtree(staging, ignore_errors=True)
