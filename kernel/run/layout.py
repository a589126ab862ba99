"""Where a Run lives on disk (DESIGN.md "A Run on disk")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunLayout"]


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

    def create_dirs(self) -> None:
        """Create the workspace and Host folders (the Program copy is made by the caller)."""
        for path in (self.workspace, self.analysis, self.feedback, self.host, self.control):
            path.mkdir(parents=True, exist_ok=True)
