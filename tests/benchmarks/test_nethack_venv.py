"""NLE NetHackScore inside the family's own environment: the Host's static tables against NLE itself, and Episodes.

The family's venv (``evoledger env install nle``) holds nle 1.3.0 and gymnasium 1.2.0. What only the venv can do
(compare the static tables with NLE, step Environments in-process, ``check_benchmark``) runs in a script started with
its interpreter, importing this checkout's ``evoledger``; ``evaluate()`` and the CLI run as a user runs them, the
Host in the main environment and the workers in the venv. Without the venv the tests are skipped with the command
that installs it (CI installs it); ``EVOLEDGER_TEST_NLE_PYTHON`` points them at another interpreter. Quick checks run
in the default suite; whole Episodes and a built-in-Agent Run with ``replay --execute`` under ``pytest -m catalog``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.benchmarks.nethack import EXTRA
from evoledger.tests.support.family_venv import FamilyVenv, cli, evaluate_programs, family_venv

PYTHON_VARIABLE = "EVOLEDGER_TEST_NLE_PYTHON"
NAME = "nle/nethack-score"


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> FamilyVenv:
    """The family's interpreter (``EVOLEDGER_TEST_NLE_PYTHON``, else the installed venv's; skips without one), its
    scripts importing this checkout's ``evoledger``."""
    return family_venv(EXTRA, tmp_path_factory.mktemp("nle-site"), override=PYTHON_VARIABLE)


def test_the_static_tables_are_nles(family: FamilyVenv) -> None:
    """The Host builds the spaces, the stat names and the action names from tables: they must be NLE 1.3.0's."""
    found = family.json(
        """
        import json
        from importlib.metadata import version
        import gymnasium as gym
        import nle  # noqa: F401
        import nle.nethack as nethack
        from nle.env.tasks import TASK_ACTIONS
        from evoledger.benchmarks import nethack as ours
        from evoledger.kernel.authoring import describe_space
        env = gym.make("NetHackScore-v0", observation_keys=tuple(ours.OBSERVATION_SPACES))
        indices = {
            "x": "X", "y": "Y", "strength_percentage": "STR25", "strength": "STR125", "dexterity": "DEX",
            "constitution": "CON", "intelligence": "INT", "wisdom": "WIS", "charisma": "CHA", "score": "SCORE",
            "hitpoints": "HP", "max_hitpoints": "HPMAX", "depth": "DEPTH", "gold": "GOLD", "energy": "ENE",
            "max_energy": "ENEMAX", "armor_class": "AC", "monster_level": "HD", "experience_level": "XP",
            "experience_points": "EXP", "time": "TIME", "hunger_state": "HUNGER", "carrying_capacity": "CAP",
            "dungeon_number": "DNUM", "level_number": "DLEVEL", "condition": "CONDITION", "alignment": "ALIGN",
        }
        print(json.dumps({
            "observation": describe_space(env.observation_space) == describe_space(ours.observation_space()),
            "actions": [int(a) for a in TASK_ACTIONS] == [int(a) for a in env.unwrapped.actions],
            "action_count": int(env.action_space.n),
            "blstats": [getattr(nethack, "NLE_BL_" + indices[n]) for n in ours.BLSTATS],
            "blstats_size": nethack.NLE_BLSTATS_SIZE,
            "versions": [version("nle"), gym.__version__],
            "pins": [ours.NLE_VERSION, ours.GYMNASIUM_VERSION],
        }))
        """,
    )
    assert found["observation"] is True
    assert found["actions"] is True
    assert found["action_count"] == 23
    assert found["blstats"] == list(range(27)) == list(range(found["blstats_size"]))
    assert found["versions"] == found["pins"] == ["1.3.0", "1.2.0"]


def test_episodes_follow_their_seed_and_the_step_limit_truncates(family: FamilyVenv) -> None:
    found = family.json(
        """
        import json
        from evoledger.kernel.registry import default_registry
        benchmark = default_registry().make("nle/nethack-score", {"max_episode_steps": 12})
        def play(episode):
            env = benchmark.make_environment(episode)
            try:
                first = env.reset()
                steps = [env.step(22) for _ in range(12)]  # SEARCH
            finally:
                env.close()
            maps = [first["chars"].tolist()] + [s.observation["chars"].tolist() for s in steps]
            return maps, steps[-1].terminated, steps[-1].truncated, steps[-1].metrics
        one, two = benchmark.episodes("train", seed=5, count=2)
        a, b, c = play(one), play(one), play(two)
        print(json.dumps({
            "same": a[0] == b[0], "other": a[0][0] != c[0][0], "ended": [a[1], a[2]], "metrics": a[3],
        }))
        """,
    )
    assert found["same"] is True
    assert found["other"] is True  # another Episode seed: another first level
    assert found["ended"] == [False, True]  # NLE's own limit would have said terminated
    assert found["metrics"]["depth"] == 1.0
    assert found["metrics"]["experience_level"] == 1.0


@pytest.mark.catalog
def test_the_benchmark_conforms_in_its_environment(family: FamilyVenv) -> None:
    found = family.json(
        """
        import json
        from evoledger.kernel.authoring import check_benchmark
        from evoledger.kernel.registry import default_registry
        short = default_registry().make("nle/nethack-score", {"max_episode_steps": 100})
        report = check_benchmark(short, episodes=3, seed=0)
        print(json.dumps([report.ok, report.summary(), report.episodes_checked]))
        """,
        timeout=1800,
    )
    ok, summary, checked = found
    assert ok, summary
    assert checked == 3


@pytest.mark.catalog
def test_the_heuristic_beats_the_random_baseline_through_evaluate(family: FamilyVenv) -> None:
    """The Host (this process, main environment) evaluates; the Episodes run in workers started from the venv."""
    found = evaluate_programs(NAME, episodes=6, config={})
    baseline, heuristic = found["baseline"], found["heuristic"]
    assert baseline["failures"] == heuristic["failures"] == 0
    assert baseline["score"] is not None
    assert heuristic["score"] is not None
    assert heuristic["score"] > baseline["score"] + 50.0, (heuristic["score"], baseline["score"])  # about 206 vs 40
    assert heuristic["content"]["notes"]["max_depth"]["max"] >= 3.0
    assert heuristic["content"]["deaths"]  # the games that ended say how


@pytest.fixture
def run_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evr-nle-", dir="/tmp"))  # short: Unix socket paths are limited
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.catalog
def test_run_with_the_builtin_agent_then_replay_execute_from_the_cli(family: FamilyVenv, run_root: Path) -> None:
    """The CLI as a user runs it: the Host in the main environment, the workers in the family's venv."""
    small = ["--episode-budget", "3", "--validation-episodes", "1", "--assessment-episodes", "1", "--seed", "5"]
    size = ["--set", "max_episode_steps=600"]
    cli("run", NAME, *size, *small, "--agent-isolation", "local", "--record-to", "run", cwd=run_root)
    report = json.loads((run_root / "run" / "host" / "report.json").read_text())
    assert report["reason"] == "finished"
    assert report["assessment_score"] is not None
    replayed = json.loads(cli("replay", "run", "--execute", "--json", cwd=run_root))
    execution = next(c for c in replayed["checks"] if c["name"] == "execution")
    assert execution["status"] == "pass"
