"""The DeepMind Control Suite family inside its own environment: the static table against the real environments,
``check_benchmark``, real Episodes through ``evaluate()``, heuristics against the baseline and CLI Runs.

What only the family's venv can do (dm-control 1.0.50, MuJoCo 3: compare the static table with the real tasks,
``check_benchmark``) runs in a subprocess with its Python; ``evaluate()`` and the CLI run as a user runs them, the Host
in the main environment and the workers in the venv. Without the venv (``evoledger env install dm-control``; CI
installs it) the tests are skipped with that command; ``EVOLEDGER_TEST_DMC_PYTHON`` points them at another
interpreter. The default suite runs the quick ones; every task at full length is under ``pytest -m catalog``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from evoledger.benchmarks.dm_control_suite import EXTRA, HEURISTICS, TASKS
from evoledger.tests.support.family_venv import CHECKOUT, FamilyVenv, cli, evaluate_programs, family_venv

PYTHON_VARIABLE: Final = "EVOLEDGER_TEST_DMC_PYTHON"


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> FamilyVenv:
    """The family's interpreter (``EVOLEDGER_TEST_DMC_PYTHON``, else the installed venv's; skips without one), its
    scripts importing this checkout's ``evoledger`` and nothing else of the main environment."""
    return family_venv(EXTRA, tmp_path_factory.mktemp("dmc-site"), override=PYTHON_VARIABLE)


HEURISTIC_TASKS: Final = [t.name for t in TASKS if t.profile in HEURISTICS]


_TABLE = """
import json, math
import numpy as np
from dm_control import suite
from evoledger.benchmarks.dm_control_suite import DmControlBenchmark, READINGS, TASKS, load_upstream
from evoledger.benchmarks.dm_control_tasks import STEP_LIMIT
problems = []
if [(t.domain, t.task) for t in TASKS] != list(suite.BENCHMARKING):
    problems.append("the table's tasks are not suite.BENCHMARKING in its order")
for facts in TASKS:
    env = load_upstream(facts, 1)
    spec = env.observation_spec()
    found = [(name, tuple(s.shape), str(s.dtype)) for name, s in spec.items()]
    table = [(name, shape, "float64") for name, shape in facts.observation]
    if found != table:
        problems.append(f"{facts.name}: observation {found} != table {table}")
    action = env.action_spec()
    if (action.shape, str(action.dtype)) != ((facts.actions,), "float64"):
        problems.append(f"{facts.name}: action {action.shape} {action.dtype}")
    if not (np.all(action.minimum == -1.0) and np.all(action.maximum == 1.0)):
        problems.append(f"{facts.name}: action bounds {action.minimum} {action.maximum}")
    if not math.isclose(env.control_timestep(), facts.control_timestep):
        problems.append(f"{facts.name}: control timestep {env.control_timestep()}")
    if env._step_limit != STEP_LIMIT:
        problems.append(f"{facts.name}: step limit {env._step_limit}")
    benchmark = DmControlBenchmark(facts)
    first = env.reset().observation
    if not benchmark.observation_space.contains({k: np.asarray(v) for k, v in first.items()}):
        problems.append(f"{facts.name}: the first observation is outside the table's space")
    env.step(np.zeros(facts.actions))
    for metric in facts.metrics:
        value = READINGS[f"{facts.domain}.{metric}"](env.physics)
        if not (isinstance(value, float) and math.isfinite(value)):
            problems.append(f"{facts.name}: metric {metric} read {value!r}")
    env.close()
print(json.dumps({"checked": len(TASKS), "problems": problems}))
"""


def test_the_static_table_matches_the_real_environments(family: FamilyVenv) -> None:
    found = family.json(_TABLE)
    assert found == {"checked": 28, "problems": []}


_CONFORMANCE = """
import json, sys
from evoledger.kernel.authoring import check_benchmark
from evoledger.kernel.registry import default_registry
names, config, episodes = {names!r}, {config!r}, {episodes!r}
reports = {{n: check_benchmark(default_registry().make(n, config), episodes=episodes, seed=0) for n in names}}
print(json.dumps({{n: [r.ok, r.summary()] for n, r in reports.items()}}))
"""


def test_check_benchmark_passes_on_short_episodes(family: FamilyVenv) -> None:
    names = ["dm-control/cartpole-swingup", "dm-control/manipulator-bring-ball"]
    found = family.json(_CONFORMANCE.format(names=names, config={"max_episode_steps": 8}, episodes=2))
    assert {name: ok for name, (ok, _) in found.items()} == dict.fromkeys(names, True), found


def test_real_episodes_through_evaluate_score_and_explain(family: FamilyVenv, tmp_path: Path) -> None:
    found = evaluate_programs(
        "dm-control/cartpole-swingup", episodes=1, config={"max_episode_steps": 300}, record=tmp_path
    )
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["statuses"] == heuristic["statuses"] == ["ok"]
    assert baseline["steps"] == heuristic["steps"] == [300]
    assert 0.0 <= baseline["score"] < 5.0  # the pole hangs: about 0 per step
    assert heuristic["score"] > baseline["score"] + 20.0  # swung up after about 150 steps
    assert baseline["content"]["outcome_counts"] == {"unsolved": 1}
    assert heuristic["content"]["outcome_counts"] == {"solved": 1}
    notes = heuristic["content"]["per_episode"]["0"]["notes"]
    assert notes["final_pole_cos"] > 0.95
    assert 50.0 < notes["first_rewarded_step"] < 200.0  # the last 100 steps were all upright
    assert (tmp_path / "heuristic").is_dir()


# The catalogue: every task at full length -----------------------------------------------------------------------


@pytest.fixture
def run_root() -> Iterator[Path]:
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.catalog
@pytest.mark.parametrize("name", [t.name for t in TASKS])
def test_every_task_conforms(family: FamilyVenv, name: str) -> None:
    found = family.json(_CONFORMANCE.format(names=[name], config={}, episodes=3))
    ok, summary = found[name]
    assert ok, summary


EPISODES: Final = {"dm-control/reacher-hard": 10, "dm-control/reacher-easy": 10}
"""Episodes per Program when comparing heuristic and baseline (5 unless named here or in :data:`COMPARISONS`)."""
COMPARISONS: Final[dict[str, tuple[int, int | None, float]]] = {
    "dm-control/acrobot-swingup": (8, None, 10.0),  # seed 3: heuristic 26.6, baseline 1.7
    "dm-control/ball-in-cup-catch": (8, 500, 200.0),  # seed 3: 419.5 (every Episode 307-493) against 0.0
    "dm-control/finger-spin": (5, 300, 30.0),  # seed 3: 61.6 (50-76) against 0.0
    "dm-control/finger-turn-easy": (24, 500, 100.0),  # seed 3: 221.4 (12 of 24 solved) against 62.5 (3 start solved)
    "dm-control/finger-turn-hard": (24, 500, 60.0),  # seed 3: 164.4 (8 of 24 solved) against 41.7 (2 start solved)
    "dm-control/fish-swim": (8, None, 150.0),  # seed 3: 360.1 against 68.2
    "dm-control/fish-upright": (8, 500, 150.0),  # seed 3: 344.8 (every Episode 208-495) against 90.6 (0-442)
    "dm-control/hopper-stand": (16, None, 40.0),  # seed 3: 84.3 (0-876: one Episode stands) against 3.8 (0-18)
    "dm-control/swimmer-swimmer6": (8, None, 200.0),  # seed 3: 547.7 against 80.4
    "dm-control/swimmer-swimmer15": (8, None, 150.0),  # seed 3: 364.7 against 36.4
    "dm-control/walker-run": (8, None, 40.0),  # seed 3: 89.6 (every Episode 64-157) against 13.3 (10-22)
    "dm-control/walker-stand": (8, None, 200.0),  # seed 3: 488.5 (274-932) against 79.4 (61-132)
    "dm-control/walker-walk": (8, None, 60.0),  # seed 3: 131.4 (84-167) against 13.8 (10-22)
}
"""Episodes, ``max_episode_steps`` (``None``: the full 1000) and the margin (in return) by which the heuristic must
beat the baseline, where they differ from the default (5 Episodes, full length, any margin): shorter where that
still tells the two apart, longer where Episodes vary much; measured with the test's seed (in each comment)."""


@pytest.mark.catalog
@pytest.mark.parametrize("name", HEURISTIC_TASKS)
def test_the_heuristic_beats_the_zero_action(family: tuple[str, Path], name: str) -> None:
    episodes, steps, margin = COMPARISONS.get(name, (EPISODES.get(name, 5), None, 0.0))
    found = evaluate_programs(name, episodes=episodes, config={} if steps is None else {"max_episode_steps": steps})
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["failures"] == heuristic["failures"] == 0
    assert heuristic["score"] > baseline["score"] + margin, (name, heuristic["score"], baseline["score"])


@pytest.mark.catalog
def test_evaluate_run_and_replay_execute_from_the_cli(family: FamilyVenv, run_root: Path) -> None:
    """The CLI as a user runs it (the Host in the main environment, the workers in the venv): the built-in Agent's
    Run, a Run of the heuristic and its replay."""
    name = "dm-control/pendulum-swingup"
    heuristic = str(CHECKOUT / "benchmarks" / "programs" / "dm-control-pendulum-heuristic")
    small = ["--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1"]
    evaluated = json.loads(cli("evaluate", heuristic, "--benchmark", name, "--episodes", "2", "--json", cwd=run_root))
    assert [e["status"] for e in evaluated["episodes"]] == ["ok", "ok"]
    assert evaluated["score"] > 500.0  # held upright most of the Episode: the zero action earns 0
    cli("run", name, *small, "--seed", "5", "--agent-isolation", "local", "--record-to", "agent", cwd=run_root)
    agent = json.loads((run_root / "agent" / "host" / "report.json").read_text())
    assert [agent["reason"], agent["selected"] is not None, agent["assessment_score"] is not None] == [
        "finished",
        True,
        True,
    ]
    cli("run", name, "--program", heuristic, *small, "--seed", "7", "--record-to", "given", cwd=run_root)
    replayed = json.loads(cli("replay", "given", "--execute", "--json", cwd=run_root))
    assert replayed["ok"] is True
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert "6 of 6 Episodes reproduced" in execution["summary"]
