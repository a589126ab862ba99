"""Pure folds over the ledger's Events: run state, the Agent mirror, bulk retention.

Each projection module offers ``apply(state, event) -> state`` and ``fold(events)``; rebuilding is
folding from zero, and no projection ever writes to the log.
"""

from evoledger.projections import audit, mirror, retention, run_state
from evoledger.projections.mirror import MirrorState
from evoledger.projections.mirror_files import diff_mirror, sync_mirror
from evoledger.projections.retention import EvictionDecision, RetentionState
from evoledger.projections.run_state import RunState

__all__ = [
    "EvictionDecision",
    "MirrorState",
    "RetentionState",
    "RunState",
    "audit",
    "diff_mirror",
    "mirror",
    "retention",
    "run_state",
    "sync_mirror",
]
