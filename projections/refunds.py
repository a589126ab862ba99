"""How many infra faults are given back: the one rule the Host applies and the protocol audit re-derives.

An infra fault (the Environment or the machine failed, not the Policy) is refunded: its budget unit
comes back. Nothing proves that a fault was not provoked by the Policy (with the local backend a
Policy can kill its own worker), so refunds are bounded. With ``minimum`` m and ``fraction`` f
(``RunConfig.infra_refunds``, default m = 2, f = 0.1), ``limit(n) = max(m, floor(f * n))``, and an infra
fault of a Submission is refunded only while

* the Submission has had fewer than ``limit(its Episodes)`` refunds, and
* the Run has had fewer than ``limit(episode_budget)`` refunds.

Past either limit the fault is **charged** (the unit is spent, the Episode has no result) and recorded
as ``suspicious``. So a Policy can gain at most ``limit(episode_budget)`` Episodes over a whole Run by
faulting on purpose (10 of a budget of 100), however it splits its Submissions.

In Validation and Assessment the same ``limit`` bounds the retries of one Candidate's faulted private
Episodes (``limit(the split's Episodes)``); a Validation Episode still faulting past it is scored as
that Candidate's failure (``kernel.run.judging``).

Pure and free of I/O: ``kernel.run.host`` decides with it, ``projections.audit_protocol`` checks every
recorded ``infra-fault`` against it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["DEFAULT_REFUND_FRACTION", "DEFAULT_REFUND_MINIMUM", "RefundRule", "refund_units"]

DEFAULT_REFUND_MINIMUM: Final = 2
DEFAULT_REFUND_FRACTION: Final = 0.1


@dataclass(frozen=True, slots=True)
class RefundRule:
    """``limit(n) = max(minimum, floor(fraction * n))`` refunds (or judged retries) for ``n`` Episodes."""

    minimum: int = DEFAULT_REFUND_MINIMUM
    fraction: float = DEFAULT_REFUND_FRACTION

    def limit(self, episodes: int) -> int:
        """How many refunds ``episodes`` Episodes allow.

        >>> RefundRule().limit(5), RefundRule().limit(100), RefundRule(minimum=0, fraction=0.0).limit(100)
        (2, 10, 0)
        """
        return max(self.minimum, math.floor(self.fraction * episodes + 1e-9))

    @classmethod
    def recorded(cls, config: Mapping[str, Any]) -> RefundRule | None:
        """The rule a recorded Run configuration names (``None`` if it records none, as older Runs do)."""
        raw = config.get("infra_refunds")
        if not isinstance(raw, Mapping):
            return None
        minimum, fraction = raw.get("minimum"), raw.get("fraction")
        if type(minimum) is not int or minimum < 0:
            return None
        if not isinstance(fraction, int | float) or isinstance(fraction, bool) or not 0.0 <= fraction <= 1.0:
            return None
        return cls(minimum, float(fraction))


def refund_units(
    rule: RefundRule, *, submission_episodes: int, submission_refunds: int, run_refunds: int, budget: int
) -> int:
    """1 if the next infra fault of a Submission is refunded, 0 if it is charged (and suspicious).

    ``submission_refunds`` / ``run_refunds``: the units already refunded to this Submission / in this Run.

    >>> [refund_units(RefundRule(), submission_episodes=4, submission_refunds=n, run_refunds=n, budget=100)
    ...  for n in range(4)]
    [1, 1, 0, 0]
    """
    if submission_refunds >= rule.limit(submission_episodes) or run_refunds >= rule.limit(budget):
        return 0
    return 1
