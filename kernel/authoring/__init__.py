"""The public authoring API: everything a Benchmark module may import from evoledger.

A Benchmark implements :class:`Benchmark`; its Environments implement :class:`Environment`; its
``feedback()`` returns :class:`Feedback` with :class:`Artifact` files. ``check_benchmark`` checks
conformance. Benchmarks register themselves by name through :mod:`evoledger.kernel.registry`.

Every name here is imported on first use (PEP 562): an execution worker that needs ``EpisodeSpec`` does not
import the conformance checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from evoledger.ledger.lazy_exports import lazy_exports

if TYPE_CHECKING:
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
    from evoledger.kernel.authoring.catalog import CatalogEntry, Extra, OwnEnvironment
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
    from evoledger.kernel.authoring.frames import (
        CAPTION_CHAR_WIDTH,
        MAX_FRAME_PIXELS,
        NotAFrame,
        action_caption,
        fit_caption,
        plain_value,
        rgb_frame,
        same_observation,
    )
    from evoledger.kernel.authoring.json_space import JsonSpace
    from evoledger.kernel.authoring.seeds import derive_seed
    from evoledger.kernel.authoring.spaces import describe_space
    from evoledger.projections.scoring import ScoreRule, score_episodes

__all__ = [
    "CAPTION_CHAR_WIDTH",
    "CONFORMANCE_CODES",
    "FAILURE_CODES",
    "MAX_FRAME_PIXELS",
    "SPLITS",
    "Artifact",
    "Benchmark",
    "BenchmarkPrograms",
    "BenchmarkSpec",
    "CatalogEntry",
    "ConformanceError",
    "ConformanceProblem",
    "ConformanceReport",
    "Environment",
    "EpisodeRecord",
    "EpisodeSpec",
    "EpisodeStatus",
    "Extra",
    "Feedback",
    "FeedbackError",
    "InvalidAction",
    "JsonSpace",
    "NotAFrame",
    "OwnEnvironment",
    "Retention",
    "ScoreDirection",
    "ScoreRule",
    "Split",
    "Step",
    "Trajectory",
    "action_caption",
    "benchmark_programs",
    "check_benchmark",
    "check_episode_request",
    "derive_seed",
    "describe_space",
    "fit_caption",
    "parameters_digest",
    "plain_value",
    "rgb_frame",
    "same_observation",
    "score_episodes",
    "score_of",
    "starting_program",
]

_LAZY: Final = {
    "Benchmark": "evoledger.kernel.authoring.benchmark",
    "BenchmarkPrograms": "evoledger.kernel.authoring.benchmark",
    "benchmark_programs": "evoledger.kernel.authoring.benchmark",
    "starting_program": "evoledger.kernel.authoring.benchmark",
    "BenchmarkSpec": "evoledger.kernel.authoring.benchmark",
    "ScoreDirection": "evoledger.kernel.authoring.benchmark",
    "parameters_digest": "evoledger.kernel.authoring.benchmark",
    "score_of": "evoledger.kernel.authoring.benchmark",
    "CatalogEntry": "evoledger.kernel.authoring.catalog",
    "CAPTION_CHAR_WIDTH": "evoledger.kernel.authoring.frames",
    "MAX_FRAME_PIXELS": "evoledger.kernel.authoring.frames",
    "action_caption": "evoledger.kernel.authoring.frames",
    "fit_caption": "evoledger.kernel.authoring.frames",
    "NotAFrame": "evoledger.kernel.authoring.frames",
    "plain_value": "evoledger.kernel.authoring.frames",
    "rgb_frame": "evoledger.kernel.authoring.frames",
    "same_observation": "evoledger.kernel.authoring.frames",
    "Extra": "evoledger.kernel.authoring.catalog",
    "OwnEnvironment": "evoledger.kernel.authoring.catalog",
    "CONFORMANCE_CODES": "evoledger.kernel.authoring.conformance",
    "ConformanceError": "evoledger.kernel.authoring.conformance",
    "ConformanceProblem": "evoledger.kernel.authoring.conformance",
    "ConformanceReport": "evoledger.kernel.authoring.conformance",
    "check_benchmark": "evoledger.kernel.authoring.conformance",
    "SPLITS": "evoledger.kernel.authoring.episodes",
    "Environment": "evoledger.kernel.authoring.episodes",
    "EpisodeSpec": "evoledger.kernel.authoring.episodes",
    "InvalidAction": "evoledger.kernel.authoring.episodes",
    "Split": "evoledger.kernel.authoring.episodes",
    "Step": "evoledger.kernel.authoring.episodes",
    "check_episode_request": "evoledger.kernel.authoring.episodes",
    "FAILURE_CODES": "evoledger.kernel.authoring.feedback",
    "Artifact": "evoledger.kernel.authoring.feedback",
    "EpisodeRecord": "evoledger.kernel.authoring.feedback",
    "EpisodeStatus": "evoledger.kernel.authoring.feedback",
    "Feedback": "evoledger.kernel.authoring.feedback",
    "FeedbackError": "evoledger.kernel.authoring.feedback",
    "Retention": "evoledger.kernel.authoring.feedback",
    "Trajectory": "evoledger.kernel.authoring.feedback",
    "JsonSpace": "evoledger.kernel.authoring.json_space",
    "derive_seed": "evoledger.kernel.authoring.seeds",
    "describe_space": "evoledger.kernel.authoring.spaces",
    "ScoreRule": "evoledger.projections.scoring",
    "score_episodes": "evoledger.projections.scoring",
}
"""Re-exported name -> the module defining it, imported on first access (PEP 562)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
