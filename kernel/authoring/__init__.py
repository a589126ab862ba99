"""The public authoring API: everything a Benchmark module may import from evoledger.

A Benchmark implements :class:`Benchmark`; its Environments implement :class:`Environment`; its
``feedback()`` returns :class:`Feedback` with :class:`Artifact` files. ``check_benchmark`` checks
conformance. Benchmarks register themselves by name through :mod:`evoledger.kernel.registry`.
"""

from evoledger.kernel.authoring.benchmark import (
    Benchmark,
    BenchmarkPrograms,
    BenchmarkSpec,
    ScoreDirection,
    benchmark_programs,
    parameters_digest,
    score_of,
    starting_program,
)
from evoledger.kernel.authoring.conformance import (
    CONFORMANCE_CODES,
    ConformanceError,
    ConformanceProblem,
    ConformanceReport,
    check_benchmark,
)
from evoledger.kernel.authoring.episodes import (
    SPLITS,
    Environment,
    EpisodeSpec,
    InvalidAction,
    Split,
    Step,
    check_episode_request,
)
from evoledger.kernel.authoring.feedback import (
    FAILURE_CODES,
    Artifact,
    EpisodeRecord,
    EpisodeStatus,
    Feedback,
    FeedbackError,
    Retention,
    Trajectory,
)
from evoledger.kernel.authoring.seeds import derive_seed
from evoledger.kernel.authoring.spaces import describe_space
from evoledger.projections.scoring import ScoreRule, score_episodes

__all__ = [
    "CONFORMANCE_CODES",
    "FAILURE_CODES",
    "SPLITS",
    "Artifact",
    "Benchmark",
    "BenchmarkPrograms",
    "BenchmarkSpec",
    "ConformanceError",
    "ConformanceProblem",
    "ConformanceReport",
    "Environment",
    "EpisodeRecord",
    "EpisodeSpec",
    "EpisodeStatus",
    "Feedback",
    "FeedbackError",
    "InvalidAction",
    "Retention",
    "ScoreDirection",
    "ScoreRule",
    "Split",
    "Step",
    "Trajectory",
    "benchmark_programs",
    "check_benchmark",
    "check_episode_request",
    "derive_seed",
    "describe_space",
    "parameters_digest",
    "score_episodes",
    "score_of",
    "starting_program",
]
