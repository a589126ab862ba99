"""Pure folds over the ledger's Events: run state, the Agent mirror, bulk retention, a sweep's cells.

Each projection module offers ``apply(state, event) -> state`` and ``fold(events)``; rebuilding is
folding from zero, and no projection ever writes to the log.

Every name here is imported on first use (PEP 562): a module that needs only ``projections.scoring`` (as the
authoring API does, and so every execution worker) does not pay for the Event schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evoledger.projections import audit, learning_curve, mirror, retention, run_state
    from evoledger.projections.learning_curve import LearningCurve
    from evoledger.projections.mirror import MirrorState
    from evoledger.projections.mirror_files import diff_mirror, sync_mirror
    from evoledger.projections.retention import EvictionDecision, RetentionState
    from evoledger.projections.run_state import RunState
    from evoledger.projections.sweep_state import SweepState

__all__ = [
    "EvictionDecision",
    "LearningCurve",
    "MirrorState",
    "RetentionState",
    "RunState",
    "SweepState",
    "audit",
    "diff_mirror",
    "learning_curve",
    "mirror",
    "retention",
    "run_state",
    "sync_mirror",
]

_LAZY: Final = {
    "MirrorState": "evoledger.projections.mirror",
    "diff_mirror": "evoledger.projections.mirror_files",
    "sync_mirror": "evoledger.projections.mirror_files",
    "EvictionDecision": "evoledger.projections.retention",
    "RetentionState": "evoledger.projections.retention",
    "RunState": "evoledger.projections.run_state",
    "SweepState": "evoledger.projections.sweep_state",
    "LearningCurve": "evoledger.projections.learning_curve",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""

_SUBMODULES: Final = frozenset({"audit", "learning_curve", "mirror", "retention", "run_state"})
"""Projection modules re-exported as modules (``projections.run_state.fold``)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY, _SUBMODULES)
