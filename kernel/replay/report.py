"""What ``evoledger replay`` reports: one :class:`CheckResult` per check and the :class:`ReplayReport` over them.

A check ``pass``-es, ``fail``-s (at least one error finding) or is ``skipped`` (not asked for, or it
could not run; the summary says why). Every :class:`Finding` names the first Event (``seq``),
Object (``digest``) or file (``path``) that shows it and says what it means.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from evoledger.kernel.run.runner import RunResult

__all__ = ["CHECK_NAMES", "CheckResult", "CheckStatus", "Finding", "ReplayReport", "Severity"]

CHECK_NAMES: Final = ("integrity", "protocol", "projections", "execution")
CheckStatus = Literal["pass", "fail", "skipped"]
Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found. Only ``error`` findings fail a check."""

    code: str
    message: str
    seq: int | None = None
    digest: str | None = None
    path: str | None = None
    severity: Severity = "error"

    @property
    def where(self) -> str:
        """``seq 47`` / ``sha256:...`` / ``workspace/feedback/x`` (whichever are known), for tables."""
        parts = [f"seq {self.seq}" if self.seq is not None else "", self.digest or "", self.path or ""]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of one check, its findings (errors first, bounded) and how long it took."""

    name: str
    status: CheckStatus
    summary: str
    findings: tuple[Finding, ...] = ()
    findings_omitted: int = 0
    seconds: float = 0.0

    @classmethod
    def of(
        cls, name: str, summary: str, findings: list[Finding], *, seconds: float = 0.0, limit: int = 200
    ) -> CheckResult:
        """``fail`` if any finding is an error, else ``pass``; errors are listed first (stable order)."""
        ordered = sorted(findings, key=lambda f: f.severity != "error")
        status: CheckStatus = "fail" if any(f.severity == "error" for f in findings) else "pass"
        return cls(name, status, summary, tuple(ordered[:limit]), max(0, len(ordered) - limit), seconds)

    @classmethod
    def skipped(cls, name: str, why: str, *, seconds: float = 0.0) -> CheckResult:
        return cls(name, "skipped", why, seconds=seconds)

    @property
    def first_error(self) -> Finding | None:
        return next((f for f in self.findings if f.severity == "error"), None)


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Every check's result for one Run directory. ``ok`` when no check failed."""

    run_dir: str
    checks: tuple[CheckResult, ...]
    rebuilt: dict[str, Any] | None = None
    """What ``--rebuild`` did to ``workspace/feedback/`` (files written and deleted), if asked."""
    signature: dict[str, Any] | None = None
    """The signature verdict (``ledger.signature_check.SignatureReport.to_dict``): status, fingerprint, message."""
    run_result: RunResult | None = None
    """The Run's summary rebuilt from the log (what ``run`` and ``resume`` print); ``None``: the log is unreadable.
    Not part of :meth:`to_dict`."""

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 when every check passed (or was skipped), 3 otherwise (the ledger family's exit code)."""
        return 0 if self.ok else 3

    def check(self, name: str) -> CheckResult:
        """The result of check ``name`` (one of :data:`CHECK_NAMES`)."""
        for result in self.checks:
            if result.name == name:
                return result
        raise KeyError(name)

    @property
    def first_failure(self) -> tuple[str, Finding] | None:
        """The first error finding in check order (integrity, protocol, projections, execution)."""
        for result in self.checks:
            first = result.first_error
            if first is not None:
                return result.name, first
        return None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(replace(self, run_result=None))
        del data["run_result"]
        data["ok"] = self.ok
        failure = self.first_failure
        data["first_failure"] = None if failure is None else {"check": failure[0], **asdict(failure[1])}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)
