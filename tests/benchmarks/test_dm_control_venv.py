"""The DeepMind Control Suite family inside its own environment: the static table against the real environments,
``check_benchmark``, real Episodes through ``evaluate()``, heuristics against the baseline and CLI Runs.

Everything here runs in a subprocess with the family's Python (dm-control 1.0.50, MuJoCo 3), named by the
environment variable ``EVOLEDGER_TEST_DMC_PYTHON``; without it the tests are skipped. The default suite runs the
quick ones (a few seconds in all); every task at full length is under ``pytest -m catalog``.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from evoledger.benchmarks.dm_control_suite import HEURISTICS, TASKS

PYTHON_VARIABLE: Final = "EVOLEDGER_TEST_DMC_PYTHON"
FAMILY_PYTHON: Final = os.environ.get(PYTHON_VARIABLE, "")
needs_family_python = pytest.mark.skipif(
    not FAMILY_PYTHON,
    reason=f"needs the dm-control family's environment: run `evoledger env install dm-control` and point "
    f"{PYTHON_VARIABLE} at its python",
)
pytestmark = needs_family_python

REPO: Final = Path(__file__).resolve().parents[2]
HEURISTIC_TASKS: Final = [t.name for t in TASKS if t.domain in HEURISTICS]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only ``evoledger`` (a link to this checkout): the family's Python imports it from there and
    nothing else of the main environment."""
    folder = tmp_path_factory.mktemp("dmc-site")
    (folder / "evoledger").symlink_to(REPO, target_is_directory=True)
    return folder


def _in_family(site: Path, code: str, *, timeout: float = 600.0, cwd: Path | None = None) -> Any:
    """Run ``code`` with the family's Python; it prints one JSON document last, which is returned."""
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [FAMILY_PYTHON, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or site,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def test_the_static_table_matches_the_real_environments(site: Path) -> None:
    found = _in_family(site, _TABLE)
    assert found == {"checked": 28, "problems": []}


_CONFORMANCE = """
import json, sys
from evoledger.kernel.authoring import check_benchmark
from evoledger.kernel.registry import default_registry
names, config, episodes = {names!r}, {config!r}, {episodes!r}
reports = {{n: check_benchmark(default_registry().make(n, config), episodes=episodes, seed=0) for n in names}}
print(json.dumps({{n: [r.ok, r.summary()] for n, r in reports.items()}}))
"""


def test_check_benchmark_passes_on_short_episodes(site: Path) -> None:
    names = ["dm-control/cartpole-swingup", "dm-control/manipulator-bring-ball"]
    found = _in_family(site, _CONFORMANCE.format(names=names, config={"max_episode_steps": 8}, episodes=2))
    assert {name: ok for name, (ok, _) in found.items()} == dict.fromkeys(names, True), found


_EVALUATE = """
import json
from pathlib import Path
from evoledger.kernel.authoring import benchmark_programs
from evoledger.kernel.evaluation import EvaluationConfig, evaluate
from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, default_registry
name, config, episodes, record = {name!r}, {config!r}, {episodes!r}, {record!r}
programs = benchmark_programs(default_registry().make(name, config))
scores = {{}}
with LocalExecutor(BenchmarkRef(name=name, config=config)) as executor:
    for kind in ("baseline", "heuristic"):
        program = getattr(programs, kind)
        if program is None:
            continue
        result = evaluate(program, BenchmarkRef(name=name, config=config), executor=executor,
                          config=EvaluationConfig(episodes=episodes, seed=3),
                          record_to=Path(record) / kind if record else None)
        scores[kind] = {{"score": result.score, "failures": result.failures,
                        "statuses": [e.status for e in result.episodes], "steps": [e.steps for e in result.episodes],
                        "content": result.feedback_content}}
print(json.dumps(scores))
"""


def _evaluate(site: Path, name: str, *, episodes: int, config: dict[str, Any], record: Path | None = None) -> Any:
    code = _EVALUATE.format(name=name, config=config, episodes=episodes, record=str(record) if record else None)
    return _in_family(site, code)


def test_real_episodes_through_evaluate_score_and_explain(site: Path, tmp_path: Path) -> None:
    found = _evaluate(
        site, "dm-control/cartpole-swingup", episodes=1, config={"max_episode_steps": 300}, record=tmp_path
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
def test_every_task_conforms(site: Path, name: str) -> None:
    found = _in_family(site, _CONFORMANCE.format(names=[name], config={}, episodes=3))
    ok, summary = found[name]
    assert ok, summary


EPISODES: Final = {"dm-control/reacher-hard": 10, "dm-control/reacher-easy": 10}
"""Episodes per Program when comparing heuristic and baseline (5 unless named)."""


@pytest.mark.catalog
@pytest.mark.parametrize("name", HEURISTIC_TASKS)
def test_the_heuristic_beats_the_zero_action(site: Path, name: str) -> None:
    found = _evaluate(site, name, episodes=EPISODES.get(name, 5), config={})
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["failures"] == heuristic["failures"] == 0
    assert heuristic["score"] > baseline["score"], (name, heuristic["score"], baseline["score"])


_CLI = """
import json, subprocess, sys
cli = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]
def run(*args):
    done = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
    return done.stdout
name, heuristic = {name!r}, {heuristic!r}
small = ["--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1"]
evaluated = json.loads(run("evaluate", heuristic, "--benchmark", name, "--episodes", "2", "--json"))
run("run", name, *small, "--seed", "5", "--agent-isolation", "local", "--record-to", "agent")
agent = json.load(open("agent/host/report.json"))
run("run", name, "--program", heuristic, *small, "--seed", "7", "--record-to", "given")
replayed = json.loads(run("replay", "given", "--execute", "--json"))
execution = next(c for c in replayed["checks"] if c["name"] == "execution")
print(json.dumps({{"evaluated": evaluated["score"], "statuses": [e["status"] for e in evaluated["episodes"]],
                  "agent": [agent["reason"], agent["selected"] is not None, agent["assessment_score"] is not None],
                  "replayed": replayed["ok"], "execution": execution["summary"]}}))
"""


@pytest.mark.catalog
def test_evaluate_run_and_replay_execute_from_the_cli(site: Path, run_root: Path) -> None:
    """The CLI inside the family's environment: the built-in Agent's Run, a Run of the heuristic and its replay."""
    name = "dm-control/pendulum-swingup"
    heuristic = str(REPO / "benchmarks" / "programs" / "dm-control-pendulum-heuristic")
    found = _in_family(site, _CLI.format(name=name, heuristic=heuristic), timeout=1800, cwd=run_root)
    assert found["statuses"] == ["ok", "ok"]
    assert found["evaluated"] > 500.0  # held upright most of the Episode: the zero action earns 0
    assert found["agent"] == ["finished", True, True]
    assert found["replayed"] is True
    assert "6 of 6 Episodes reproduced" in found["execution"]
