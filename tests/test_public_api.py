"""The package's face: ``evoledger.__all__`` is curated, every name resolves lazily, and the import stays cheap."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import evoledger
import pytest

EXPECTED = {
    "__version__",
    # running, evaluating, auditing and exporting
    "run",
    "resume",
    "RunConfig",
    "AgentConfig",
    "evaluate",
    "EvaluationConfig",
    "replay",
    "export",
    "Ledger",
    # the Benchmark authoring API (evoledger.kernel.authoring)
    "CONFORMANCE_CODES",
    "FAILURE_CODES",
    "SPLITS",
    "Artifact",
    "Benchmark",
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
    "MAX_FRAME_PIXELS",
    "CAPTION_CHAR_WIDTH",
    "action_caption",
    "fit_caption",
    "NotAFrame",
    "OwnEnvironment",
    "plain_value",
    "rgb_frame",
    "same_observation",
    "Retention",
    "ScoreDirection",
    "ScoreRule",
    "Split",
    "Step",
    "Trajectory",
    "check_benchmark",
    "check_episode_request",
    "derive_seed",
    "describe_space",
    "parameters_digest",
    "score_episodes",
    "score_of",
    "BenchmarkPrograms",
    "benchmark_programs",
    "starting_program",
}

HOMES = {
    "run": "evoledger.kernel.run.runner:run",
    "resume": "evoledger.kernel.run.resume:resume",
    "evaluate": "evoledger.kernel.evaluation:evaluate",
    "replay": "evoledger.kernel.replay:replay",
    "export": "evoledger.exporters:export_dataset",
    "Ledger": "evoledger.ledger.store:Ledger",
    "RunConfig": "evoledger.kernel.run.config:RunConfig",
    "Benchmark": "evoledger.kernel.authoring:Benchmark",
}

HEAVY = ("pydantic", "gymnasium", "numpy", "sqlite_utils", "pandas", "rich", "click", "ray")


def test_the_exported_names_are_exactly_the_curated_ones() -> None:
    assert set(evoledger.__all__) == EXPECTED
    assert len(evoledger.__all__) == len(EXPECTED)


def test_the_authoring_names_are_the_authoring_api() -> None:
    authoring = importlib.import_module("evoledger.kernel.authoring")
    assert set(authoring.__all__) <= EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(evoledger, name) is not None
    assert name in dir(evoledger)


@pytest.mark.parametrize(("name", "home"), sorted(HOMES.items()))
def test_a_name_is_the_object_it_re_exports(name: str, home: str) -> None:
    module, attribute = home.split(":")
    assert getattr(evoledger, name) is getattr(importlib.import_module(module), attribute)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = evoledger.not_a_name


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(done.stdout))


def test_importing_the_package_imports_no_heavy_dependency() -> None:
    assert _imported_after("import evoledger; evoledger.__version__; dir(evoledger)") == []


def test_the_probe_sees_a_heavy_import() -> None:
    assert "pydantic" in _imported_after("import evoledger; evoledger.Benchmark")
