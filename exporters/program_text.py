"""Program snapshots as exportable text: their files, and a unified diff between two of them.

A Program is the ``files`` mapping of its ``program-snapshotted`` Event (path -> Object digest). Text
is UTF-8; a file that is not UTF-8 is exported without text and diffed as ``Binary files ... differ``.
The diff is git-style (``diff --git a/p b/p`` headers, ``new``/``deleted file mode`` and ``/dev/null``
for added and deleted files) with three lines of context, over the sorted union of both Programs'
paths, so ``git apply`` replays it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from evoledger.ledger.errors import ObjectEvictedError
from evoledger.ledger.store import Ledger

__all__ = ["ProgramFile", "ProgramText", "program_diff", "read_program"]


@dataclass(frozen=True, slots=True)
class ProgramFile:
    """One file of a Program: its path, Object digest, size and text (``None`` when not UTF-8)."""

    path: str
    digest: str
    size: int
    text: str | None


@dataclass(frozen=True, slots=True)
class ProgramText:
    """A Program's files by path (sorted)."""

    digest: str
    files: Mapping[str, ProgramFile]

    def rows(self) -> list[dict[str, object]]:
        """The ``program_files`` cell of a submissions row."""
        return [
            {"path": f.path, "digest": f.digest, "size": f.size, "text": f.text}
            for f in (self.files[p] for p in sorted(self.files))
        ]


EMPTY_PROGRAM = ProgramText("", {})


def read_program(ledger: Ledger, program_digest: str, files: Mapping[str, str]) -> ProgramText:
    """Read every file of a Program from ``ledger`` (a file whose bytes are gone is exported without text)."""
    out: dict[str, ProgramFile] = {}
    for path in sorted(files):
        digest = files[path]
        try:
            data = ledger.objects.get(digest)
        except ObjectEvictedError:
            out[path] = ProgramFile(path, digest, 0, None)
            continue
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        out[path] = ProgramFile(path, digest, len(data), text)
    return ProgramText(program_digest, out)


def _file_diff(path: str, old: ProgramFile | None, new: ProgramFile | None) -> list[str]:
    if old is not None and new is not None and old.digest == new.digest:
        return []
    header = [f"diff --git a/{path} b/{path}"]
    if old is None:
        header.append("new file mode 100644")
    elif new is None:
        header.append("deleted file mode 100644")
    source, target = (f"a/{path}" if old else "/dev/null"), (f"b/{path}" if new else "/dev/null")
    if (old is not None and old.text is None) or (new is not None and new.text is None):
        return [*header, f"Binary files {source} and {target} differ"]
    before, after = (old.text if old else ""), (new.text if new else "")
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile=source,
        tofile=target,
        n=3,
    )
    body = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    return [*header, "".join(body).rstrip("\n")]


def program_diff(old: ProgramText, new: ProgramText) -> str:
    """A unified diff turning ``old`` into ``new`` (empty when they hold the same files)."""
    if old.digest and old.digest == new.digest:
        return ""
    parts: list[str] = []
    for path in sorted(set(old.files) | set(new.files)):
        parts.extend(_file_diff(path, old.files.get(path), new.files.get(path)))
    return "\n".join(parts) + ("\n" if parts else "")
