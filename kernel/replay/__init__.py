"""``evoledger replay``: audit a recorded Run end to end (integrity, protocol, projections, execution), or re-execute
one recorded Episode and draw it (``--render``)."""

from evoledger.kernel.replay.checks import check_integrity, check_protocol, replay
from evoledger.kernel.replay.execution_check import RecordedEpisode, check_execution, recorded_episodes
from evoledger.kernel.replay.projection_check import UNFOLDED_KINDS, ProjectionRebuild
from evoledger.kernel.replay.record import RunRecord, open_record
from evoledger.kernel.replay.render import RenderedEpisode, episodes_worth_rendering, render_recorded_episode
from evoledger.kernel.replay.render_frames import RenderMismatchError
from evoledger.kernel.replay.render_target import EpisodeNameError
from evoledger.kernel.replay.report import CHECK_NAMES, CheckResult, CheckStatus, Finding, ReplayReport, Severity

__all__ = [
    "CHECK_NAMES",
    "UNFOLDED_KINDS",
    "CheckResult",
    "CheckStatus",
    "EpisodeNameError",
    "Finding",
    "ProjectionRebuild",
    "RecordedEpisode",
    "RenderMismatchError",
    "RenderedEpisode",
    "ReplayReport",
    "RunRecord",
    "Severity",
    "check_execution",
    "check_integrity",
    "check_protocol",
    "episodes_worth_rendering",
    "open_record",
    "recorded_episodes",
    "render_recorded_episode",
    "replay",
]
