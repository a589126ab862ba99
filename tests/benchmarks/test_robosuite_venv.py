"""The robosuite family inside its own environment: the static table against the real environments,
``check_benchmark``, real Episodes through ``evaluate()``, the heuristic against the baseline and CLI Runs.

What only the family's venv can do (robosuite 1.5.2 on numpy 1.26 and MuJoCo 3.3: compare the static table with
the real environments, ``check_benchmark``) runs in a subprocess with its Python; ``evaluate()`` and the CLI run as
a user runs them, the Host in the main environment and the workers in the venv. Without the venv (``evoledger env
install robosuite``; CI installs it) the tests are skipped with that command; ``EVOLEDGER_TEST_ROBOSUITE_PYTHON``
points them at another interpreter. The default suite runs the quick ones; every environment at full length is under
``pytest -m catalog``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from evoledger.benchmarks.robosuite_manipulation import EXTRA, HEURISTICS, TASKS
from evoledger.tests.support.family_venv import CHECKOUT, FamilyVenv, cli, evaluate_programs, family_venv

PYTHON_VARIABLE: Final = "EVOLEDGER_TEST_ROBOSUITE_PYTHON"


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> FamilyVenv:
    """The family's interpreter (``EVOLEDGER_TEST_ROBOSUITE_PYTHON``, else the installed venv's; skips without one), its
    scripts importing this checkout's ``evoledger`` and nothing else of the main environment."""
    return family_venv(EXTRA, tmp_path_factory.mktemp("robosuite-site"), override=PYTHON_VARIABLE)


_TABLE = """
import json, re
import numpy as np
import robosuite, mujoco
from evoledger.benchmarks.robosuite_manipulation import RobosuiteBenchmark, TASKS, load_upstream
names = {names!r}
problems = []
if sorted(t.env for t in TASKS) != sorted(robosuite.ALL_ENVIRONMENTS):
    problems.append(f"the table's environments are not robosuite's: {{sorted(robosuite.ALL_ENVIRONMENTS)}}")
generic = {{"NutAssemblySingle": "nut", "PickPlaceSingle": "object"}}
for facts in (t for t in TASKS if t.name in names):
    env = load_upstream(facts, 1, 20)
    raw = env.reset()
    groups = {{}}
    for name, observable in env._observables.items():
        if observable.is_enabled() and observable.is_active():
            groups.setdefault(observable.modality, []).append(name)
    proprio = [(n, int(np.asarray(raw[n]).size)) for i in range(facts.robots) for n in groups[f"robot{{i}}_proprio"]]
    objects = [(n, int(np.asarray(raw[n]).size)) for n in groups["object"]]
    if facts.env in generic:  # the object is chosen per Episode: the table names it generically
        chosen = r"^(SquareNut|RoundNut|Milk|Bread|Cereal|Can)"
        objects = [(re.sub(chosen, generic[facts.env], n), s) for n, s in objects]
    if [f for f in proprio if f[1]] != list(facts.proprioception):
        problems.append(f"{{facts.name}}: proprioception {{proprio}}")
    if objects != list(facts.objects):
        problems.append(f"{{facts.name}}: objects {{objects}}")
    for i in range(facts.robots):
        fields = groups[f"robot{{i}}_proprio"]
        values = np.concatenate([np.asarray(raw[n], dtype=np.float64).reshape(-1) for n in fields])
        if not np.allclose(values, raw[f"robot{{i}}_proprio-state"]):
            problems.append(f"{{facts.name}}: robot{{i}}_proprio-state is not its fields in order")
    low, high = env.action_spec
    if low.shape != (facts.actions,) or not (np.all(low == -1.0) and np.all(high == 1.0)):
        problems.append(f"{{facts.name}}: action {{low}} {{high}}")
    if env.control_freq != 20 or env.horizon != 20:
        problems.append(f"{{facts.name}}: control_freq {{env.control_freq}} horizon {{env.horizon}}")
    env.close()
    benchmark = RobosuiteBenchmark(facts, max_episode_steps=20)
    environment = benchmark.make_environment(benchmark.episodes("train", seed=2, count=1)[0])
    first = environment.reset()
    if not benchmark.observation_space.contains(first):
        problems.append(f"{{facts.name}}: the first observation is outside the table's space")
    environment.close()
print(json.dumps({{"checked": len(names), "versions": [robosuite.__version__, mujoco.__version__,
                  np.__version__], "problems": problems}}))
"""

QUICK_TABLE: Final = ["robosuite/lift", "robosuite/two-arm-peg-in-hole"]
"""One arm with a gripper and two arms without (the whole table: ``pytest -m catalog``)."""


def test_the_static_table_matches_the_real_environments(family: FamilyVenv) -> None:
    found = family.json(_TABLE.format(names=QUICK_TABLE))
    assert found["problems"] == []
    assert found["checked"] == 2
    robosuite_version, mujoco_version, numpy_version = found["versions"]
    assert robosuite_version == "1.5.2"
    assert mujoco_version.startswith("3.3.")
    assert numpy_version.startswith("1.26")


_CONFORMANCE = """
import json
from evoledger.kernel.authoring import check_benchmark
from evoledger.kernel.registry import default_registry
names, config, episodes = {names!r}, {config!r}, {episodes!r}
reports = {{n: check_benchmark(default_registry().make(n, config), episodes=episodes, seed=0) for n in names}}
print(json.dumps({{n: [r.ok, r.summary()] for n, r in reports.items()}}))
"""


@pytest.mark.catalog  # ~18 s even on 8-step Episodes (robosuite builds an Environment in 0.1-1 s): too long by default
def test_check_benchmark_passes_on_short_episodes(family: FamilyVenv) -> None:
    names = ["robosuite/lift"]  # every environment at full length: test_every_environment_conforms
    found = family.json(_CONFORMANCE.format(names=names, config={"max_episode_steps": 8}, episodes=1))
    assert {name: ok for name, (ok, _) in found.items()} == dict.fromkeys(names, True), found


def test_real_episodes_through_evaluate_score_and_explain(family: FamilyVenv, tmp_path: Path) -> None:
    found = evaluate_programs("robosuite/lift", episodes=1, config={"max_episode_steps": 100}, record=tmp_path)
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["statuses"] == heuristic["statuses"] == ["ok"]
    assert baseline["steps"] == heuristic["steps"] == [100]
    assert 0.0 <= baseline["score"] < 5.0  # the arm holds still above the cube: a small reaching reward
    assert heuristic["score"] > baseline["score"] + 30.0  # lifted after about 45 steps: 1 per step from then on
    assert baseline["content"]["outcome_counts"] == {"not_succeeded": 1}
    assert heuristic["content"]["outcome_counts"] == {"succeeded": 1}
    notes = heuristic["content"]["per_episode"]["0"]["notes"]
    assert notes["success"] == notes["success_at_end"] == 1.0
    assert 20.0 < notes["first_success_step"] < 90.0
    assert notes["min_gripper_to_cube_pos_distance"] < 0.02
    assert baseline["content"]["per_episode"]["0"]["notes"]["eef_path"] < 0.01  # the zero action holds the pose
    assert (tmp_path / "heuristic").is_dir()


# The catalogue: every environment at full length ----------------------------------------------------------------


@pytest.mark.catalog
def test_the_whole_static_table_matches(family: FamilyVenv) -> None:
    names = [t.name for t in TASKS]
    found = family.json(_TABLE.format(names=names))
    assert found["problems"] == []
    assert found["checked"] == 19


@pytest.mark.catalog
@pytest.mark.parametrize("name", [t.name for t in TASKS])
def test_every_environment_conforms(family: FamilyVenv, name: str) -> None:
    found = family.json(_CONFORMANCE.format(names=[name], config={}, episodes=2))
    ok, summary = found[name]
    assert ok, summary


SUCCEEDS: Final = {"Lift": 5, "Stack": 4, "PickPlaceCan": 5, "PickPlaceBread": 4, "TwoArmTransport": 2}
"""Successes of the heuristic in the 5 Episodes of seed 3, as measured through ``evaluate``; the other environments
are held to beating the zero action (the wider cereal box and milk carton often slip out of the unaligned grasp).
TwoArmTransport (sparse: 1 per step of success) measured 35.6 against 0, successes from steps 398 and 425; at seed 11
one success, 21.2: the hammer is lost at the handover in the other Episodes."""
SHORT: Final = dict.fromkeys(("PickPlaceSingle", "NutAssemblySingle", "NutAssemblySquare", "NutAssemblyRound"), 300) | {
    "Door": 300,
    "Wipe": 300,
    "TwoArmLift": 300,
    "TwoArmHandover": 300,
    "TwoArmPegInHole": 300,
}
"""``max_episode_steps`` where a shorter Episode still tells the heuristic from the zero action (the others: 500)."""


@pytest.mark.catalog
@pytest.mark.parametrize("env", sorted(HEURISTICS))
def test_the_pick_heuristic_beats_the_zero_action(family: tuple[str, Path], env: str) -> None:
    name = next(t.name for t in TASKS if t.env == env)
    found = evaluate_programs(name, episodes=5, config={"max_episode_steps": SHORT[env]} if env in SHORT else {})
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["failures"] == heuristic["failures"] == 0
    assert heuristic["score"] > baseline["score"] + 10.0, (heuristic["score"], baseline["score"])
    assert heuristic["content"]["outcome_counts"].get("succeeded", 0) >= SUCCEEDS.get(env, 0), heuristic["content"]


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.catalog
def test_evaluate_run_and_replay_execute_from_the_cli(family: FamilyVenv, run_root: Path) -> None:
    """The CLI as a user runs it (the Host in the main environment, the workers in the venv): the built-in Agent's
    Run and its ``replay --execute``, a Run of the heuristic and its replay."""
    name = "robosuite/lift"
    heuristic = str(CHECKOUT / "benchmarks" / "programs" / "robosuite-pick-heuristic")
    short = ["--set", "max_episode_steps=120"]
    small = ["--episode-budget", "4", "--validation-episodes", "1", "--assessment-episodes", "1"]
    evaluated = json.loads(
        cli("evaluate", heuristic, "--benchmark", name, *short, "--episodes", "2", "--json", cwd=run_root)
    )
    assert [e["status"] for e in evaluated["episodes"]] == ["ok", "ok"]
    assert evaluated["score"] > 40.0  # lifted within about 45 steps: the zero action earns about 1
    cli("run", name, *short, *small, "--seed", "5", "--agent-isolation", "local", "--record-to", "agent", cwd=run_root)
    agent = json.loads((run_root / "agent" / "host" / "report.json").read_text())
    assert [agent["reason"], agent["selected"] is not None, agent["assessment_score"] is not None] == [
        "finished",
        True,
        True,
    ]
    for record in ("agent", "given"):
        if record == "given":
            cli("run", name, *short, "--program", heuristic, *small, "--seed", "7", "--record-to", record, cwd=run_root)
        replayed = json.loads(cli("replay", record, "--execute", "--json", cwd=run_root))
        assert replayed["ok"] is True, (record, replayed)
        execution = next(c for c in replayed["checks"] if c["name"] == "execution")
        assert "Episodes reproduced" in execution["summary"], execution
