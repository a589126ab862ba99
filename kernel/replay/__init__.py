"""``evoledger replay``: audit a recorded Run end to end (integrity, protocol, projections, execution)."""

from evoledger.kernel.replay.checks import check_integrity, check_protocol, replay
from evoledger.kernel.replay.execution_check import RecordedEpisode, check_execution, recorded_episodes
from evoledger.kernel.replay.projection_check import UNFOLDED_KINDS, ProjectionRebuild
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.report import CHECK_NAMES, CheckResult, CheckStatus, Finding, ReplayReport, Severity

__all__ = [
    "CHECK_NAMES",
    "UNFOLDED_KINDS",
    "CheckResult",
    "CheckStatus",
    "Finding",
    "ProjectionRebuild",
    "RecordedEpisode",
    "ReplayReport",
    "RunRecord",
    "Severity",
    "check_execution",
    "check_integrity",
    "check_protocol",
    "open_record",
    "recorded_episodes",
    "replay",
]
