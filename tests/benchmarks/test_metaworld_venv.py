"""The MetaWorld family inside its own environment: the static table against the real package, ``check_benchmark``,
real Episodes through ``evaluate()``, upstream's expert against the zero action and CLI Runs.

What only the family's venv can do (metaworld 3.1.1, MuJoCo 3.3: compare the static table with the real tasks,
``check_benchmark``) runs in a subprocess with its Python; ``evaluate()`` and the CLI run as a user runs them, the Host
in the main environment and the workers in the venv. Without the venv (``evoledger env install metaworld``; CI
installs it) the tests are skipped with that command; ``EVOLEDGER_TEST_METAWORLD_PYTHON`` points them at another
interpreter. The default suite runs the quick ones; every profile at full length is under ``pytest -m catalog``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from evoledger.benchmarks.metaworld_suite import BENCHMARKS, EXTRA
from evoledger.tests.support.family_venv import CHECKOUT, FamilyVenv, cli, evaluate_programs, family_venv

PYTHON_VARIABLE: Final = "EVOLEDGER_TEST_METAWORLD_PYTHON"


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> FamilyVenv:
    """The family's interpreter (``EVOLEDGER_TEST_METAWORLD_PYTHON``, else the installed venv's; skips without one), its
    scripts importing this checkout's ``evoledger`` and nothing else of the main environment."""
    return family_venv(EXTRA, tmp_path_factory.mktemp("metaworld-site"), override=PYTHON_VARIABLE)


_TABLE = """
import json
import numpy as np
import metaworld
from metaworld.env_dict import ALL_V3_ENVIRONMENTS, MT10_V3
from metaworld.policies import ENV_POLICY_MAP
from metaworld.sawyer_xyz_env import SawyerXYZEnv
from evoledger.benchmarks.metaworld_suite import load_upstream, observation_space
from evoledger.benchmarks.metaworld_tasks import HAND_HIGH, HAND_LOW, MT10, STEP_LIMIT, TASKS
problems = []
if [t.upstream for t in TASKS] != list(ALL_V3_ENVIRONMENTS):
    problems.append("the table's tasks are not ALL_V3_ENVIRONMENTS in its order")
if [f"{{t}}-v3" for t in MT10] != list(MT10_V3):
    problems.append("MT10 is not upstream's MT10_V3 in its order")
if set(ENV_POLICY_MAP) != set(ALL_V3_ENVIRONMENTS):
    problems.append("upstream's experts do not cover every task")
if (tuple(SawyerXYZEnv._HAND_SPACE.low), tuple(SawyerXYZEnv._HAND_SPACE.high)) != (HAND_LOW, HAND_HIGH):
    problems.append("hand space differs")
space = observation_space()
rng = np.random.default_rng(0)
checked = 0
for task in [t for t in TASKS if t.task in {checked_tasks}]:
    env = load_upstream(task, 7)
    upstream = env.unwrapped
    if upstream.max_path_length != STEP_LIMIT:
        problems.append(f"{{task.name}}: max_path_length {{upstream.max_path_length}}")
    action = env.action_space
    if action.shape != (4,) or action.low.tolist() != [-1.0] * 4 or action.high.tolist() != [1.0] * 4:
        problems.append(f"{{task.name}}: action space {{action}}")
    observation, _ = env.reset(seed=7)
    for step in range({steps}):
        if observation.dtype != np.float64 or not space.contains(observation):
            problems.append(f"{{task.name}}: observation {{step}} outside the table's space: {{observation.tolist()}}")
            break
        observation, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, 4))
        keys = {{"success", "near_object", "grasp_success", "grasp_reward", "in_place_reward", "obj_to_target"}}
        missing = keys - set(info)
        if missing or terminated:
            problems.append(f"{{task.name}}: info lacks {{sorted(missing)}} or terminated early")
            break
    env.close()
    checked += 1
print(json.dumps({{"checked": checked, "problems": problems}}))
"""


def test_the_static_table_matches_the_real_package(family: FamilyVenv) -> None:
    tasks = {"reach", "pick-place", "assembly"}
    found = family.json(_TABLE.format(checked_tasks=tasks, steps=60))
    assert found == {"checked": 3, "problems": []}


_CONFORMANCE = """
import json
from evoledger.kernel.authoring import check_benchmark
from evoledger.kernel.registry import default_registry
names, config, episodes = {names!r}, {config!r}, {episodes!r}
reports = {{n: check_benchmark(default_registry().make(n, config), episodes=episodes, seed=0) for n in names}}
print(json.dumps({{n: [r.ok, r.summary()] for n, r in reports.items()}}))
"""


def test_check_benchmark_passes_on_short_episodes(family: FamilyVenv) -> None:
    names = ["metaworld/mt10"]  # the collection's path; every profile at full length: test_every_profile_conforms
    found = family.json(_CONFORMANCE.format(names=names, config={"max_episode_steps": 8}, episodes=2))
    assert {name: ok for name, (ok, _) in found.items()} == dict.fromkeys(names, True), found


def test_real_episodes_through_evaluate_score_and_explain(family: FamilyVenv, tmp_path: Path) -> None:
    found = evaluate_programs("metaworld/reach", episodes=2, config={"max_episode_steps": 120}, record=tmp_path)
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["statuses"] == heuristic["statuses"] == ["ok", "ok"]
    assert baseline["steps"] == heuristic["steps"] == [120, 120]
    assert baseline["score"] == 0.0  # the hand stays put, away from the goal
    assert heuristic["score"] == 1.0  # upstream's expert reaches the goal in about 40 steps
    assert baseline["content"]["outcome_counts"] == {"never_succeeded": 2}
    assert heuristic["content"]["outcome_counts"] == {"succeeded": 2}
    notes = heuristic["content"]["per_episode"]["0"]["notes"]
    assert 10.0 < notes["first_success_step"] < 100.0
    assert notes["final_obj_to_target"] < 0.05
    assert notes["upstream_return"] > baseline["content"]["per_episode"]["0"]["notes"]["upstream_return"]
    assert (tmp_path / "heuristic").is_dir()


# The catalogue: every profile at full length --------------------------------------------------------------------


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evm-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.catalog
def test_the_static_table_matches_every_task(family: FamilyVenv) -> None:
    from evoledger.benchmarks.metaworld_tasks import TASKS

    found = family.json(_TABLE.format(checked_tasks={t.task for t in TASKS}, steps=200))
    assert found == {"checked": 50, "problems": []}


@pytest.mark.catalog
@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_every_profile_conforms(family: FamilyVenv, name: str) -> None:
    found = family.json(_CONFORMANCE.format(names=[name], config={}, episodes=2))
    ok, summary = found[name]
    assert ok, summary


COMPARED: Final = {
    "metaworld/reach": 5,
    "metaworld/push": 5,
    "metaworld/pick-place": 5,
    "metaworld/door-open": 5,
    "metaworld/drawer-close": 5,
    "metaworld/button-press-topdown": 5,
    "metaworld/window-open": 5,
    "metaworld/assembly": 5,
    "metaworld/mt10": 10,
    "metaworld/mt50": 50,
}
"""Profiles whose heuristic (upstream's expert) is compared with the zero action, and the Episodes per Program."""


@pytest.mark.catalog
@pytest.mark.parametrize("name", list(COMPARED))
def test_upstreams_expert_beats_the_zero_action(family: FamilyVenv, name: str) -> None:
    found = evaluate_programs(name, episodes=COMPARED[name], config={})
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["failures"] == heuristic["failures"] == 0
    assert heuristic["score"] > baseline["score"], (name, heuristic["score"], baseline["score"])


@pytest.mark.catalog
def test_evaluate_run_and_replay_execute_from_the_cli(family: FamilyVenv, run_root: Path) -> None:
    """The CLI as a user runs it (the Host in the main environment, the workers in the venv): the built-in Agent's
    Run, a Run of the heuristic on MT10 and its replay."""
    heuristic = str(CHECKOUT / "benchmarks" / "programs" / "metaworld-heuristic")
    small = ["--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1"]
    evaluated = json.loads(
        cli("evaluate", heuristic, "--benchmark", "metaworld/mt10", "--episodes", "2", "--json", cwd=run_root)
    )
    assert [e["status"] for e in evaluated["episodes"]] == ["ok", "ok"]
    cli("run", "metaworld/reach", *small, "--seed", "5", "--agent-isolation", "local", "--record-to", "agent",
        cwd=run_root)  # fmt: skip
    agent = json.loads((run_root / "agent" / "host" / "report.json").read_text())
    assert [agent["reason"], agent["selected"] is not None, agent["assessment_score"] is not None] == [
        "finished",
        True,
        True,
    ]
    cli("run", "metaworld/mt10", "--program", heuristic, *small, "--seed", "7", "--record-to", "given", cwd=run_root)
    replayed = json.loads(cli("replay", "given", "--execute", "--json", cwd=run_root))
    assert replayed["ok"] is True
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert "6 of 6 Episodes reproduced" in execution["summary"]
