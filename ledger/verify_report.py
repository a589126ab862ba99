"""What :func:`evoledger.ledger.verify.verify` reports: :class:`Problem` findings in a :class:`VerifyReport`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from evoledger.ledger.head import Head

__all__ = ["Check", "Problem", "ProblemList", "VerifyReport"]

Check = Literal["database", "chain", "manifest", "object"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding of :func:`verify`."""

    check: Check
    code: str
    message: str
    seq: int | None = None
    digest: str | None = None
    severity: Literal["error", "warning"] = "error"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify` found. ``ok`` is true when no problem is an error."""

    run_dir: str
    problems: tuple[Problem, ...]
    events_checked: int
    objects_checked: int
    log_head: Head | None
    manifest_head: Head | None
    problems_omitted: int = 0

    @property
    def ok(self) -> bool:
        return self.first_problem is None and self.problems_omitted == 0

    @property
    def first_problem(self) -> Problem | None:
        """The first error (in check order: database, chain, manifest, objects)."""
        return next((p for p in self.problems if p.severity == "error"), None)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        data["first_problem"] = None if self.first_problem is None else asdict(self.first_problem)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2)


@dataclass
class ProblemList:
    """Problems collected by one verify, at most ``limit`` of them (the rest are only counted)."""

    limit: int
    problems: list[Problem] = field(default_factory=list)
    omitted: int = 0

    def add(self, problem: Problem) -> None:
        if len(self.problems) < self.limit:
            self.problems.append(problem)
        else:
            self.omitted += 1
