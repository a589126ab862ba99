"""Feedback a Benchmark publishes about a set of Episodes, and the records it is computed from."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from evoledger.kernel.authoring.episodes import EpisodeSpec, Split
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.errors import InputError
from evoledger.ledger.trajectories import Trajectory

__all__ = [
    "ARTIFACT_NAME_PATTERN",
    "FAILURE_CODES",
    "MAX_ARTIFACT_BYTES",
    "Artifact",
    "EpisodeRecord",
    "EpisodeStatus",
    "Feedback",
    "FeedbackError",
    "Retention",
    "Trajectory",
]

Retention = Literal["permanent", "bulk"]
EpisodeStatus = Literal["ok", "exception", "timeout", "invalid_action", "protocol_error", "memory", "infra_fault"]
FAILURE_CODES: Final[frozenset[str]] = frozenset({"exception", "timeout", "invalid_action", "protocol_error", "memory"})
"""Policy failure codes. ``infra_fault`` is not among them: it is never the Policy's fault."""

ARTIFACT_NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,3}$")
MAX_ARTIFACT_BYTES: Final = 64 * 1024 * 1024
MAX_CONTENT_BYTES: Final = 1024 * 1024


class FeedbackError(InputError):
    """A Benchmark produced Feedback that cannot be published (bad Artifact name, too large, not JSON)."""


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """What a Benchmark's ``feedback()`` sees of one finished Episode.

    ``episode`` is the Episode's Host-private spec (seed, scenario), given only where the Host lets a Benchmark
    re-simulate a training Episode for its Feedback (a Run's Submissions, on the records that carry a trajectory):
    use it to rebuild the Environment, never publish its seed or scenario.
    """

    split: Split
    index: int
    status: EpisodeStatus
    episode_return: float
    steps: int
    terminated: bool
    truncated: bool
    metrics: Mapping[str, float] = field(default_factory=dict)
    failure_message: str | None = None
    trajectory: Trajectory | None = None
    episode: EpisodeSpec | None = None

    @property
    def failed(self) -> bool:
        """Whether the Policy failed this Episode (infra faults are not Policy failures)."""
        return self.status in FAILURE_CODES

    @property
    def final_metrics(self) -> Mapping[str, Any]:
        """The Episode's last-step metrics: :attr:`metrics`, else (a record built without them, as a test's or a
        conformance runner's may be) its trajectory's last entry; empty when neither has any."""
        if self.metrics:
            return self.metrics
        if self.trajectory is not None and self.trajectory.metrics:
            last = self.trajectory.metrics[-1]
            return last if isinstance(last, Mapping) else {}
        return {}


@dataclass(frozen=True, slots=True)
class Artifact:
    """A named file published with Feedback. ``bulk`` Artifacts may be evicted by retention; ``permanent`` never."""

    name: str
    media_type: str
    data: bytes
    retention: Retention = "permanent"

    def __post_init__(self) -> None:
        if not ARTIFACT_NAME_PATTERN.match(self.name) or ".." in self.name.split("/"):
            raise FeedbackError(
                f"artifact name {self.name!r} is not a safe relative name; use letters, digits, '_', '-', '.' "
                "and at most 3 '/' separators, e.g. 'traces/episode-000.jsonl'"
            )
        if self.retention not in ("permanent", "bulk"):
            raise FeedbackError(f"artifact retention {self.retention!r} must be 'permanent' or 'bulk'")
        if len(self.data) > MAX_ARTIFACT_BYTES:
            raise FeedbackError(
                f"artifact {self.name!r} is {len(self.data)} bytes; the limit is {MAX_ARTIFACT_BYTES} bytes"
            )


@dataclass(frozen=True, slots=True)
class Feedback:
    """The public result of an Evaluation: a score, JSON content for the Agent, and Artifacts."""

    score: float | None
    content: Mapping[str, Any]
    artifacts: tuple[Artifact, ...] = ()

    def __post_init__(self) -> None:
        if self.score is not None and (not isinstance(self.score, (int, float)) or not math.isfinite(self.score)):
            raise FeedbackError(f"feedback score must be a finite number or None, got {self.score!r}")
        encoded = canonical_json(dict(self.content))  # raises EncodingError on non-JSON content
        if len(encoded) > MAX_CONTENT_BYTES:
            raise FeedbackError(
                f"feedback content is {len(encoded)} bytes; the limit is {MAX_CONTENT_BYTES}: "
                "move detail into an Artifact"
            )
        names = [a.name for a in self.artifacts]
        if len(names) != len(set(names)):
            raise FeedbackError(f"duplicate artifact names in feedback: {sorted(names)}")
