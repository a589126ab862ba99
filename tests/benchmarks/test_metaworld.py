"""The MetaWorld family on the Host side: names, the missing-environment error, spaces, spec, Episode plan (the task
each Episode of MT10 / MT50 plays), score rule, Feedback words and the shipped Programs, all without ``metaworld``
(the family runs in a venv of its own).

The checks that need the real environments run inside that venv: ``test_metaworld_venv.py``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from evoledger.benchmarks.metaworld_suite import (
    BENCHMARKS,
    CATALOG,
    EXTRA,
    MetaWorldBenchmark,
    MetaWorldConfig,
    observation_space,
)
from evoledger.benchmarks.metaworld_tasks import MT10, TASKS
from evoledger.kernel.authoring import EpisodeRecord, benchmark_programs
from evoledger.kernel.registry import default_registry
from gymnasium import spaces
from pydantic import ValidationError

PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"

_WITHOUT_METAWORLD = """
import json, sys
sys.modules["metaworld"] = None  # as on the Host: find_spec and import both fail
from evoledger.benchmarks import metaworld_suite as family
from evoledger.kernel.registry import default_registry
from evoledger.ledger.errors import MissingExtraError
try:
    default_registry().make("metaworld/pick-place")
except MissingExtraError as exc:
    error = str(exc)
benchmark = family.MetaWorldBenchmark("mt10")  # the Host's side of a Benchmark
print(json.dumps({"names": list(family.BENCHMARKS), "error": error, "spec": benchmark.spec.id,
                  "heavy": sorted(m for m in ("metaworld", "mujoco") if sys.modules.get(m) is not None)}))
"""


def test_the_family_lists_and_builds_on_the_host_without_importing_metaworld(tmp_path: Path) -> None:
    no_venvs = {**os.environ, "EVOLEDGER_ENVS": str(tmp_path)}  # the family's venv, if installed here, is not found
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_METAWORLD],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=no_venvs,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["names"] == list(BENCHMARKS)
    assert found["spec"] == "metaworld/mt10"
    assert found["heavy"] == []
    assert "metaworld/pick-place" in found["error"]
    assert "evoledger env install metaworld" in found["error"]


def test_names_catalog_and_the_own_environment() -> None:
    names = list(BENCHMARKS)
    assert len(names) == 52
    assert names[:3] == ["metaworld/assembly", "metaworld/basketball", "metaworld/bin-picking"]
    assert names[-2:] == ["metaworld/mt10", "metaworld/mt50"]
    assert {"metaworld/reach", "metaworld/pick-place", "metaworld/button-press-topdown-wall"} <= set(names)
    assert all(re.fullmatch(r"metaworld/[a-z0-9]+(-[a-z0-9]+)*", name) for name in names)
    assert [t.upstream for t in TASKS][:2] == ["assembly-v3", "basketball-v3"]
    assert len({t.task for t in TASKS}) == 50
    assert set(MT10) <= {t.task for t in TASKS}
    assert [e.name for e in CATALOG] == names
    assert all(e.family == "metaworld" and e.extra == EXTRA for e in CATALOG)
    assert CATALOG[30].summary.startswith("pick-place-v3: ")
    assert EXTRA.name == "metaworld"
    assert EXTRA.modules == ("metaworld",)
    assert EXTRA.own_environment is not None
    assert EXTRA.own_environment.requirements[:2] == ("metaworld==3.1.1", "mujoco==3.3.0")
    assert "mujoco 3.3.0" in EXTRA.own_environment.reason
    assert set(names) <= set(default_registry().names())
    assert "metaworld" in default_registry().families()
    assert all(getattr(f, "config_model", None) is MetaWorldConfig for f in BENCHMARKS.values())


def test_spaces_and_spec_of_a_task_and_of_a_collection() -> None:
    single = MetaWorldBenchmark("pick-place")
    box = single.observation_space
    assert isinstance(box, spaces.Box)
    assert box.shape == (39,)
    assert box.dtype == np.float64
    assert box.low[:4].tolist() == [-0.525, 0.348, -0.0525, -1.0]
    assert box.high[18:22].tolist() == [0.525, 1.025, 0.7, 1.0]
    assert np.isinf(box.low[4:18]).all()
    assert np.isinf(box.high[36:]).all()
    assert single.action_space == spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float64)
    spec = single.spec
    assert spec.environment_parameters == {"max_episode_steps": 500, "task": "pick-place"}
    assert spec.max_episode_steps == 500
    assert spec.scoring is not None
    assert spec.scoring.failure_return == 0.0
    assert spec.metadata["requirements"][:2] == ["metaworld==3.1.1", "mujoco==3.3.0"]
    assert "success rate" in spec.description
    assert "evoledger env install metaworld" in spec.description
    assert "36:39 goal position" in spec.description
    collection = MetaWorldBenchmark("mt10", max_episode_steps=50)
    assert isinstance(collection.observation_space, spaces.Dict)
    assert list(collection.observation_space.spaces) == ["state", "task"]
    assert collection.observation_space.spaces["state"] == observation_space()
    assert collection.observation_space.spaces["task"] == spaces.MultiBinary(10)
    assert collection.spec.environment_parameters == {
        "max_episode_steps": 50,
        "collection": "mt10",
        "tasks": list(MT10),
    }
    assert collection.spec.parameters_digest != MetaWorldBenchmark("mt10").spec.parameters_digest
    assert len(MetaWorldBenchmark("mt50").spec.environment_parameters["tasks"]) == 50


@pytest.mark.parametrize("steps", [0, 501, 2.5])
def test_max_episode_steps_is_bounded_by_upstreams_limit(steps: object) -> None:
    with pytest.raises(ValidationError):
        MetaWorldConfig.model_validate({"max_episode_steps": steps})
    with pytest.raises(ValidationError, match="extra"):
        MetaWorldConfig.model_validate({"max_steps": 10})
    assert MetaWorldConfig.model_validate({"max_episode_steps": 500}).max_episode_steps == 500


def test_collection_episodes_go_round_the_tasks_from_a_hidden_offset() -> None:
    benchmark = MetaWorldBenchmark("mt10")
    first = benchmark.episodes("train", seed=4, count=25)
    assert first == benchmark.episodes("train", seed=4, count=25)
    assert len({e.seed for e in first}) == 25
    tasks = [benchmark.task_of(e) for e in first]
    assert all(b == (a + 1) % 10 for a, b in itertools.pairwise(tasks))  # round robin
    assert Counter(tasks[:10]) == Counter(range(10))  # ten consecutive indices play each task once
    offsets = {benchmark.task_of(benchmark.episodes("train", seed=s, count=1)[0]) for s in range(40)}
    assert len(offsets) > 3  # the start depends on the Host seed
    assert {e.seed for e in first}.isdisjoint(e.seed for e in benchmark.episodes("assessment", seed=4, count=25))
    single = MetaWorldBenchmark("reach").episodes("validation", seed=1, count=3)
    assert [e.scenario for e in single] == [{"task_index": 0, "upstream_seed": e.seed % 2**32} for e in single]


def _record(index: int, *, status: str = "ok", succeeded: float = 0.0, **metrics: float) -> EpisodeRecord:
    values = {"success": succeeded, "success_steps": 0.0, "upstream_return": 800.0, "obj_to_target": 0.2, **metrics}
    return EpisodeRecord(
        split="train",
        index=index,
        status=status,  # type: ignore[arg-type]
        episode_return=1.0 if status == "ok" and values["success_steps"] > 0 else 0.0,
        steps=500,
        terminated=False,
        truncated=status == "ok",
        metrics=values if status == "ok" else {},
        failure_message=None if status == "ok" else "Traceback ...\nKeyError: 'task'",
    )


def test_feedback_names_outcomes_components_and_scores_the_success_rate() -> None:
    benchmark = MetaWorldBenchmark("pick-place")
    records = [
        _record(0, succeeded=1.0, success_steps=300.0, first_success_step=120.0, first_grasp_step=40.0,
                near_object=0.01, grasp_reward=0.9, in_place_reward=1.0, min_obj_to_target=0.01),
        _record(1, success_steps=5.0, first_success_step=400.0),  # reached, then lost: still a success
        _record(2, min_obj_to_target=0.15),
        _record(3, status="exception"),
    ]  # fmt: skip
    feedback = benchmark.feedback(records)
    content = feedback.content
    assert feedback.score == pytest.approx(2 / 4)  # the failed Episode counts 0
    assert content["outcome_counts"] == {"lost_success": 1, "never_succeeded": 1, "succeeded": 1}
    assert content["per_episode"]["0"]["notes"] == {
        "succeeded": 1.0,
        "first_success_step": 120.0,
        "success_steps": 300.0,
        "first_grasp_step": 40.0,
        "upstream_return": 800.0,
        "final_near_object": 0.01,
        "final_grasp_reward": 0.9,
        "final_in_place_reward": 1.0,
        "final_obj_to_target": 0.2,
        "min_obj_to_target": 0.01,
    }
    assert content["per_episode"]["2"]["notes"]["succeeded"] == 0.0
    assert "first_success_step" not in content["per_episode"]["2"]["notes"]
    assert "KeyError: 'task'" in content["failure_messages"]["3"]
    collection = MetaWorldBenchmark("mt10").feedback(
        [_record(0, task_index=2.0, succeeded=1.0, success_steps=9.0), _record(1, task_index=0.0)]
    )
    assert collection.content["outcome_counts"] == {"pick-place: succeeded": 1, "reach: never_succeeded": 1}
    assert collection.content["per_episode"]["0"]["notes"]["task_index"] == 2.0


def test_the_shipped_programs_are_the_zero_action_and_upstreams_expert() -> None:
    for profile in ("reach", "mt50"):
        programs = benchmark_programs(MetaWorldBenchmark(profile))
        assert programs.baseline == PROGRAMS / "metaworld-baseline"
        assert programs.heuristic == PROGRAMS / "metaworld-heuristic"
    heuristic = (PROGRAMS / "metaworld-heuristic" / "policy.py").read_text(encoding="utf-8")
    assert "upstream's scripted expert" in heuristic
    assert "from metaworld.policies import ENV_POLICY_MAP" in heuristic
