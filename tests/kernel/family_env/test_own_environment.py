"""A family with its own environment, for real: ``evoledger env install`` makes its venv with pip, and its Episodes
run in workers started from that venv while the Host stays in the main environment.

The family (tests/support/own_env_family.py) pins ``gymnasium==1.2.0``, older than the main environment's, and
reports where each side ran: every Episode's reward is 102 from the venv (gymnasium 1.2) and 4 from the main
environment (gymnasium 1.4), and its Feedback (made by the Host) carries the Host's figure. One venv is made per
module (some 15-60 s: pip, with its cache); every test runs the real CLI in real processes. The Run, its
``replay --execute`` and the renders are under ``-m catalog``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import pytest
from evoledger.kernel.authoring import Extra, OwnEnvironment
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.tests.support.family_venv import run_in_family_venv
from evoledger.tests.support.own_env_family import (
    OWN_ENV_FAMILY,
    OWN_ENV_NAME,
    VENV_GYMNASIUM,
    OwnEnvFamily,
    install_own_env_family,
    reward_for,
)

pytestmark = pytest.mark.slow

_CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]
_SMALL_RUN = ["--agent", "baseline", "--validation-episodes", "0", "--assessment-episodes", "1"]
_SMALL_RUN += ["--episode-budget", "2"]
IN_VENV = reward_for(venv=True, gymnasium_version=VENV_GYMNASIUM)
IN_MAIN = reward_for(venv=False, gymnasium_version=gymnasium.__version__)


@dataclass(frozen=True)
class Installed:
    root: Path
    family: OwnEnvFamily
    environ: dict[str, str]
    install: subprocess.CompletedProcess[str]

    def cli(self, *args: str, shared: bool = False, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.environ, "PYTHONPATH": pythonpath or self.family.pythonpath(shared=shared)}
        return _run([*_CLI, *args], env, self.root)


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    """The family, and its venv made by the real ``evoledger env install`` under a private EVOLEDGER_ENVS."""
    assert IN_MAIN != IN_VENV, f"the main environment has gymnasium {gymnasium.__version__}: no contrast"
    root = Path(tempfile.mkdtemp(prefix="evenv-", dir="/tmp"))  # short: Unix socket paths are limited
    family = install_own_env_family(root / "family")
    bin_dir = Path(sys.executable).parent  # evoledger-session for the Agent of a Run
    environ = {
        **os.environ,
        "EVOLEDGER_ENVS": str(root / "envs"),
        "COLUMNS": "200",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env = {**environ, "PYTHONPATH": family.pythonpath()}
    done = _ok(_run([*_CLI, "env", "install", OWN_ENV_FAMILY], env, root))
    yield Installed(root, family, environ, done)
    shutil.rmtree(root, ignore_errors=True)


def test_env_install_reports_pips_progress_the_size_and_the_time(installed: Installed) -> None:
    assert f"  Collecting gymnasium=={VENV_GYMNASIUM}" in installed.install.stderr
    assert installed.install.stdout.startswith(f"{OWN_ENV_FAMILY}: installed at {installed.root / 'envs'}/")
    assert " MB in " in installed.install.stdout
    again = _ok(installed.cli("env", "install", OWN_ENV_FAMILY))
    assert "already installed and current" in again.stdout


def test_env_list_and_path_show_the_venv_whose_python_has_the_pinned_gymnasium_and_this_evoledger(
    installed: Installed,
) -> None:
    listed = json.loads(_ok(installed.cli("env", "list", "--json")).stdout)
    (row,) = [r for r in listed["families"] if r["family"] == OWN_ENV_FAMILY]
    assert (row["state"], row["problem"]) == ("installed", None)
    assert row["bytes"] > 10_000_000
    assert row["why_own"].startswith("tests: pins gymnasium")
    python = _ok(installed.cli("env", "path", OWN_ENV_FAMILY, "--python")).stdout.strip()
    assert python == str(installed.root / "envs" / OWN_ENV_FAMILY / "bin" / "python")
    probe = "import evoledger, gymnasium; print(gymnasium.__version__, evoledger.__file__)"
    seen = _ok(_run([python, "-I", "-c", probe], installed.environ, installed.root)).stdout.split()
    assert seen[0] == VENV_GYMNASIUM  # -I: no PYTHONPATH; evoledger comes from the venv's link to this source
    assert Path(seen[1]).resolve() == (Path(__file__).resolve().parents[3] / "__init__.py")


_VENV_ONLY_POLICY = f"""
import sys

import gymnasium


class Guess:
    def act(self, observation):
        return 0


def make_policy(context):
    if sys.prefix == sys.base_prefix or gymnasium.__version__ != {VENV_GYMNASIUM!r}:
        where = f"{{sys.prefix}}, gymnasium {{gymnasium.__version__}}"
        raise RuntimeError(f"the Policy runs outside the family venv: {{where}}")
    return Guess()
"""
"""A Policy that fails unless it runs in the family's venv (with bwrap, in a sandbox started from it)."""


def _evaluate(installed: Installed, *extra: str, shared: bool = False) -> dict[str, object]:
    program = installed.root / "venv-only-policy"
    program.mkdir(exist_ok=True)
    (program / "policy.py").write_text(_VENV_ONLY_POLICY)
    where = [] if shared else [str(program)]
    done = _ok(installed.cli("evaluate", *where, "-b", OWN_ENV_NAME, "-n", "2", "--json", *extra, shared=shared))
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_episodes_run_in_the_family_venv_while_the_host_stays_in_the_main_environment(installed: Installed) -> None:
    result = _evaluate(installed)
    episodes: list[dict[str, object]] = result["episodes"]  # type: ignore[assignment]
    assert [(e["status"], e["failure"]) for e in episodes] == [("ok", None)] * 2  # the Policy: in the venv
    assert [e["episode_return"] for e in episodes] == [IN_VENV, IN_VENV]  # the Environment: in the venv
    assert result["feedback_content"]["host"] == IN_MAIN  # type: ignore[index]  # the Host: in the main one


def test_with_the_familys_modules_in_the_main_environment_its_workers_stay_there(installed: Installed) -> None:
    result = _evaluate(installed, shared=True)  # the probe package on PYTHONPATH: the main environment wins
    assert [e["episode_return"] for e in result["episodes"]] == [IN_MAIN, IN_MAIN]  # type: ignore[attr-defined]


@pytest.mark.skipif(probe_bwrap()[0] is None, reason=f"bubblewrap cannot run here: {probe_bwrap()[1]}")
def test_a_sandboxed_worker_keeps_the_family_venv(installed: Installed) -> None:
    result = _evaluate(installed, "--isolation", "bwrap")
    episodes: list[dict[str, object]] = result["episodes"]  # type: ignore[assignment]
    assert [(e["status"], e["failure"]) for e in episodes] == [("ok", None)] * 2  # the sandboxed Policy: in the venv
    assert [e["episode_return"] for e in episodes] == [IN_VENV, IN_VENV]


@pytest.mark.catalog  # some 15 s: a Run, its audit and two renders (evaluate covers the executor by default)
def test_run_and_replay_execute_run_in_the_venv_and_host_side_rendering_says_why_it_cannot(
    installed: Installed,
) -> None:
    run = installed.root / "run"
    _ok(installed.cli("run", OWN_ENV_NAME, *_SMALL_RUN, "--seed", "1", "--record-to", str(run)))
    report = json.loads((run / "host" / "report.json").read_text())
    assert report["assessment_score"] == IN_VENV, report
    _ok(installed.cli("replay", str(run), "--execute"))
    episode = "train/submission-000001/0"
    chart = _ok(installed.cli("replay", str(run), "--render", episode, "--out", str(installed.root / "e.gif")))
    why = f"{OWN_ENV_NAME}'s Environments run only in workers started from the {OWN_ENV_FAMILY!r} family's own"
    assert "a reward chart" in chart.stdout
    assert why in " ".join(chart.stdout.split()), chart.stdout
    video = installed.cli("replay", str(run), "--render", episode, "--out", str(installed.root / "e.mp4"))
    assert video.returncode == 2, video.stderr
    assert "Traceback" not in video.stderr
    assert why in video.stderr
    assert "write --out with .gif or .png" in video.stderr


def test_check_benchmark_runs_inside_the_venv_and_says_why_not_outside_it(
    installed: Installed, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = (
        "from evoledger import check_benchmark\n"
        "from evoledger.kernel.registry import default_registry\n"
        "from evoledger.ledger.errors import OwnEnvironmentError\n"
        f"benchmark = default_registry().make({OWN_ENV_NAME!r})\n"
        "try:\n"
        "    print(check_benchmark(benchmark, episodes=1).ok)\n"
        "except OwnEnvironmentError as exc:\n"
        "    print('OwnEnvironmentError', exc)\n"
    )
    for key, value in {**installed.environ, "PYTHONPATH": installed.family.pythonpath()}.items():
        monkeypatch.setenv(key, value)
    outside = _ok(_run([sys.executable, "-c", check], dict(os.environ), installed.root)).stdout
    assert outside.startswith("OwnEnvironmentError check_benchmark makes Environments in this process, but")
    assert f"evoledger env path {OWN_ENV_FAMILY} --python" in outside
    extra = Extra(OWN_ENV_FAMILY, (), own_environment=OwnEnvironment(installed.family.requirements, "tests"))
    assert run_in_family_venv(extra, check).strip() == "True"  # tests/support/family_venv.py, as a family's tests


def test_a_family_that_declares_other_requirements_finds_its_venv_stale(installed: Installed) -> None:
    changed = installed.root / "changed-site"
    shutil.copytree(installed.family.site, changed)
    module = changed / "evoledger_own_env_family.py"
    module.write_text(module.read_text().replace("REQUIREMENTS = (", "REQUIREMENTS = ('cloudpickle>=1', "))
    pythonpath = os.pathsep.join([*os.environ.get("PYTHONPATH", "").split(os.pathsep), str(changed)]).strip(os.pathsep)
    listed = json.loads(_ok(installed.cli("env", "list", "--json", pythonpath=pythonpath)).stdout)
    (row,) = [r for r in listed["families"] if r["family"] == OWN_ENV_FAMILY]
    assert row["state"] == "stale"
    assert row["problem"].startswith("stale: the family's requirements changed since it was installed")
    refused = installed.cli("evaluate", "-b", OWN_ENV_NAME, "-n", "1", pythonpath=pythonpath)
    assert refused.returncode == 2, refused.stderr
    was = ", ".join((*installed.family.requirements, "pydantic>=2.6", "gymnasium>=1.0", "numpy>=1.26", "orjson>=3.8"))
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: {OWN_ENV_NAME} needs the optional extra {OWN_ENV_FAMILY!r} (module 'evoledger_own_env_probe' is not "
        f"installed; its workers run in a venv of their own: stale: the family's requirements changed since it was "
        f"installed ({was})); install it with: evoledger env install {OWN_ENV_FAMILY}"
    )
