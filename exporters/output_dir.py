"""The output directory of an export: refused when in use, built aside, and swapped into place at the end.

An export writes into a hidden staging directory next to ``out`` and renames it to ``out`` only when
everything succeeded, so a failed export leaves ``out`` as it was. ``out`` must be absent or empty;
``overwrite`` replaces it, but only if it holds an earlier evoledger export (its ``README.md`` card
says so), so a mistyped path can never wipe an unrelated directory. Missing parents of ``out`` are
created (and removed again if the export fails); paths are made absolute first, so a relative ``out``
means the same directory to every library an export hands it to (Minari's storage among them).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

from evoledger.ledger.errors import InputError

__all__ = [
    "CARD_NAME",
    "EXPORT_FORMAT",
    "check_output_dir",
    "discard",
    "is_export_card",
    "make_parents",
    "publish",
    "remove_parents",
    "staging_dir",
]

CARD_NAME: Final = "README.md"
EXPORT_FORMAT: Final = "evoledger.dataset/2"
"""Version 2: ``episode_id`` columns, fixed-size list observations and actions, nullable ``submission_id``."""
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
        blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise InputError(f"--out {out} cannot be created: {blocker} is a file; choose a path under a directory")
        return
    entries = sorted(entry.name for entry in out.iterdir())
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise InputError(
            f"output directory {out} is not empty ({len(entries)} entries: {shown}); choose a new or empty "
            "directory, or pass --overwrite to replace an earlier export"
        )
    if not _is_previous_export(out):
        raise InputError(
            f"--overwrite refused: {out} is not empty and does not hold an evoledger export (no {CARD_NAME} "
            "written by `evoledger export`); remove it yourself or choose another directory"
        )


def make_parents(out: Path) -> list[Path]:
    """Create the missing parents of ``out``; returns them, outermost first, for :func:`remove_parents`."""
    missing = [parent for parent in reversed(out.parents) if not parent.exists()]
    try:
        for parent in missing:
            parent.mkdir()
    except OSError as exc:
        remove_parents(missing)
        raise InputError(f"cannot create the parent directories of --out {out}: {exc.strerror or exc}") from None
    return missing


def remove_parents(created: list[Path]) -> None:
    """Remove the directories :func:`make_parents` created, innermost first, where still empty (best effort)."""
    for parent in reversed(created):
        try:
            parent.rmdir()
        except OSError:
            return


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
