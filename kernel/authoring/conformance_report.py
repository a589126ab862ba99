"""What the conformance checker reports: problems with stable codes, the report, and the error it can raise.

:class:`Findings` is the collector the checks write into while they run; :class:`ConformanceReport` is the frozen
result of :func:`~evoledger.kernel.authoring.conformance.check_benchmark`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, TypeVar

from evoledger.ledger.errors import InputError

__all__ = [
    "CONFORMANCE_CODES",
    "ConformanceError",
    "ConformanceProblem",
    "ConformanceReport",
    "Findings",
    "describe_error",
]

CONFORMANCE_CODES: Final[frozenset[str]] = frozenset(
    {
        "protocol.missing",
        "spec.invalid",
        "spec.not_json",
        "spec.digest_mismatch",
        "spec.space_mismatch",
        "episodes.failed",
        "episodes.malformed",
        "episodes.nondeterministic",
        "episodes.prefix_unstable",
        "episodes.seed_ignored",
        "episodes.duplicate",
        "episodes.split_collision",
        "environment.failed",
        "environment.protocol",
        "observation.outside_space",
        "step.invalid",
        "episode.too_long",
        "replay.nondeterministic",
        "action.valid_rejected",
        "action.invalid_accepted",
        "action.invalid_wrong_error",
        "close.failed",
        "feedback.failed",
        "feedback.invalid",
        "feedback.nondeterministic",
        "feedback.leaks_seed",
        "feedback.leaks_scenario",
        "feedback.score_rule",
    }
)
"""Every problem code the checker can report (documented in :mod:`evoledger.kernel.authoring.conformance`)."""

MAX_PROBLEMS_PER_CODE: Final = 3
"""Repeats of one code beyond this many are dropped (one broken step tends to break every step)."""

_T = TypeVar("_T")


class ConformanceError(InputError):
    """A Benchmark failed :func:`~evoledger.kernel.authoring.conformance.check_benchmark`; lists every problem."""


@dataclass(frozen=True, slots=True)
class ConformanceProblem:
    """One finding: a stable ``code`` (see :mod:`evoledger.kernel.authoring.conformance`) and what to fix."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """The result of checking one Benchmark."""

    benchmark_id: str
    problems: tuple[ConformanceProblem, ...]
    episodes_checked: int
    steps_checked: int

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    @property
    def codes(self) -> frozenset[str]:
        """The distinct problem codes."""
        return frozenset(p.code for p in self.problems)

    def summary(self) -> str:
        """A human-readable account, one problem per line."""
        head = (
            f"benchmark {self.benchmark_id!r}: {len(self.problems)} conformance problem(s) "
            f"({self.episodes_checked} Episodes, {self.steps_checked} steps checked)"
        )
        return "\n".join([head, *(f"  [{p.code}] {p.message}" for p in self.problems)])

    def raise_for_problems(self) -> None:
        """Raise :class:`ConformanceError` listing the problems, if there are any."""
        if self.problems:
            raise ConformanceError(self.summary())


def describe_error(exc: BaseException) -> str:
    """``Type: message``, bounded, for problem messages."""
    return f"{type(exc).__name__}: {exc}"[:300]


@dataclass(slots=True)
class Findings:
    """Problems and counters collected while the checks run."""

    problems: list[ConformanceProblem] = field(default_factory=list)
    episodes_checked: int = 0
    steps_checked: int = 0

    def add(self, code: str, message: str) -> None:
        """Record a problem (repeats of a code beyond :data:`MAX_PROBLEMS_PER_CODE` are dropped)."""
        if sum(1 for p in self.problems if p.code == code) < MAX_PROBLEMS_PER_CODE:
            self.problems.append(ConformanceProblem(code, message))

    def guarded(self, code: str, what: str, call: Callable[[], _T]) -> _T | None:
        """``call()``, or None after recording ``code`` if it raised (a broken Benchmark must not stop the check)."""
        try:
            return call()
        except Exception as exc:
            self.add(code, f"{what} raised {describe_error(exc)}")
            return None

    def report(self, benchmark_id: str) -> ConformanceReport:
        """The frozen report of everything found so far."""
        return ConformanceReport(benchmark_id, tuple(self.problems), self.episodes_checked, self.steps_checked)
