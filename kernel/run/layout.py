"""Where a Run lives on disk (docs/architecture.md, "The record"), and the check that it holds nothing to follow.

A run directory may come from someone else. Before ``resume`` or ``replay --rebuild`` creates, writes
or deletes anything in it, :meth:`RunLayout.check_safe` refuses (naming the entry;
:class:`~evoledger.ledger.errors.UnsafePathError`) a ``workspace``, ``host`` or ``control`` that is a
link or not a folder, and any file the Host writes there (``host/report.json``, ``host/task.md``, the
Agent logs, ``control/session.sock``) that is a link, fifo or device: nothing is created or deleted
through a link. ``host/report.json`` is written and read relative to a descriptor of ``host/`` with
``O_NOFOLLOW`` (:func:`write_report`, :func:`read_report`); so is ``host/report.html`` (``evoledger run`` and
``resume`` write it with ``write_report(layout, body, name=REPORT_HTML_NAME)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evoledger.ledger.run_files import (
    EntryKind,
    check_entry,
    check_entry_kind,
    open_dir_at,
    open_root,
    read_file_at,
    write_file_at,
)

__all__ = ["MAX_REPORT_BYTES", "REPORT_HTML_NAME", "REPORT_NAME", "RunLayout", "read_report", "write_report"]

REPORT_NAME: Final = "report.json"
REPORT_HTML_NAME: Final = "report.html"
MAX_REPORT_BYTES: Final = 64 * 1024 * 1024
_AGENT_LOG_FILES: Final = ("stdout.log", "stderr.log", "stdout.log.tmp", "stderr.log.tmp", "stdin.bin", "task.md")
_MAX_HOST_ENTRIES: Final = 10_000


@dataclass(frozen=True, slots=True)
class RunLayout:
    """The paths of one Run directory.

    ``ledger.sqlite`` and ``ledger.head`` are the only truth; ``workspace/`` is the Agent's cwd with
    ``program/`` (editable), ``analysis/`` (Agent-owned, never touched) and ``feedback/`` (a projection of
    public Events, rebuildable); ``host/`` holds Host-only reports and Agent logs, never shown to the Agent;
    ``control/session.sock`` exists while the Run is live.
    """

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def program(self) -> Path:
        return self.workspace / "program"

    @property
    def analysis(self) -> Path:
        return self.workspace / "analysis"

    @property
    def feedback(self) -> Path:
        return self.workspace / "feedback"

    @property
    def host(self) -> Path:
        return self.root / "host"

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def socket(self) -> Path:
        return self.control / "session.sock"

    @property
    def task_file(self) -> Path:
        return self.host / "task.md"

    @property
    def report(self) -> Path:
        return self.host / REPORT_NAME

    @property
    def report_html(self) -> Path:
        return self.host / REPORT_HTML_NAME

    def create_dirs(self) -> None:
        """Create the workspace and Host folders (the Program copy is made by the caller); no link is followed."""
        self.check_safe()
        root = open_root(self.root)
        try:
            for parts in (("workspace", "analysis"), ("workspace", "feedback"), ("host",), ("control",)):
                parent = open_dir_at(root, parts[:-1], self.root, create=True)
                assert parent is not None  # created
                try:
                    if check_entry_kind(parent, parts[-1]) is None:  # whatever the Agent put there is its own
                        os.mkdir(parts[-1], 0o755, dir_fd=parent)
                finally:
                    os.close(parent)
        finally:
            os.close(root)

    def check_safe(self) -> None:
        """Refuse a run directory whose Host-written entries are links, fifos, devices or of the wrong kind.

        Checked: ``workspace``, ``host``, ``control`` (folders),
        ``host/report.json``, ``host/report.html``, ``host/task.md`` (files), every ``host/agent-N`` (a folder) and
        the files the Host writes in it, and ``control/session.sock`` (a socket). Absent entries are fine. Raises
        :class:`~evoledger.ledger.errors.UnsafePathError` naming the first offending entry.
        """
        try:
            root = open_root(self.root)
        except FileNotFoundError:
            return
        try:
            _check(root, (), "workspace", "dir", self.root)
            _check(root, (), "control", "dir", self.root)
            _check(root, ("control",), self.socket.name, "socket", self.root)
            if _check(root, (), "host", "dir", self.root):
                _check(root, ("host",), REPORT_NAME, "file", self.root)
                _check(root, ("host",), REPORT_HTML_NAME, "file", self.root)
                _check(root, ("host",), self.task_file.name, "file", self.root)
                self._check_agent_logs(root)
        finally:
            os.close(root)

    def _check_agent_logs(self, root: int) -> None:
        host = open_dir_at(root, ("host",), self.root)
        if host is None:
            return
        try:
            with os.scandir(host) as listing:
                names = [e.name for _, e in zip(range(_MAX_HOST_ENTRIES), listing, strict=False)]
        finally:
            os.close(host)
        for name in names:
            if name.startswith("agent-") and _check(root, ("host",), name, "dir", self.root):
                for log in _AGENT_LOG_FILES:
                    _check(root, ("host", name), log, "file", self.root)


def write_report(layout: RunLayout, body: bytes, *, name: str = REPORT_NAME) -> None:
    """Atomically write ``host/report.json`` (or ``name``, ``host/report.html``) under a descriptor of ``host/``,
    never through a link."""
    if name not in (REPORT_NAME, REPORT_HTML_NAME):
        raise ValueError(f"the Host writes host/{REPORT_NAME} or host/{REPORT_HTML_NAME}, not host/{name}")
    layout.check_safe()
    root = open_root(layout.root)
    try:
        host = open_dir_at(root, ("host",), layout.root, create=True)
        assert host is not None  # created
        try:
            write_file_at(host, name, body, layout.host / name)
        finally:
            os.close(host)
    finally:
        os.close(root)


def read_report(layout: RunLayout) -> bytes | None:
    """``host/report.json`` (``None`` when absent), at most :data:`MAX_REPORT_BYTES`, never through a link or fifo."""
    root = open_root(layout.root)
    try:
        host = open_dir_at(root, ("host",), layout.root)
        if host is None:
            return None
        try:
            return read_file_at(host, REPORT_NAME, layout.report, limit=MAX_REPORT_BYTES)
        finally:
            os.close(host)
    finally:
        os.close(root)


def _check(root: int, parents: tuple[str, ...], name: str, kind: EntryKind, shown: Path) -> bool:
    """Whether ``parents/name`` exists below ``root`` as a ``kind``; absent is ``False``; anything else refused."""
    folder = open_dir_at(root, parents, shown)
    if folder is None:
        return False
    try:
        return check_entry(folder, name, kind, shown.joinpath(*parents, name))
    finally:
        os.close(folder)
