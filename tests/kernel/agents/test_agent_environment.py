"""The Agent's environment through the real CLI: its PATH, a start that fails, a long run directory, the task text.

Every test runs ``python -m evoledger run`` as a subprocess with a minimal environment whose ``PATH`` lacks the
interpreter's ``bin`` folder (as for a user who did not activate the virtual environment), and an Agent that is a
small shell script calling ``evoledger-session``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.agents.agent_skills import (
    GENERAL_SKILL,
    SKILLS_DIR,
    SKILLS_VERSION,
    skill_families,
    skills_for,
    skills_object,
)
from evoledger.kernel.agents.task_text import TaskFacts, render_task_text, selector_examples
from evoledger.kernel.authoring import BenchmarkSpec, parameters_digest
from evoledger.kernel.execution.isolation import probe_bwrap
from evoledger.kernel.registry import default_registry
from evoledger.kernel.session.selectors import parse_selector
from evoledger.ledger.events import AgentStarted, RunEnded
from evoledger.ledger.store import Ledger

BARE_PATH = "/usr/bin:/bin"
"""The Agent's parent PATH in these tests: no virtual environment, no ``evoledger-session``."""

# An Agent that finds the session client on its PATH, reads its guides, tries to change one and to submit them,
# selects a plain index, and finishes.
AGENT = """#!/bin/sh
command -v evoledger-session >&2 || exit 40
cat skills/README.md > analysis/seen-readme.md
if echo changed >> skills/README.md 2>/dev/null; then echo wrote > analysis/write.txt; fi
evoledger-session status > analysis/status.json || exit 41
evoledger-session submit . --episodes 0 2> analysis/submit-dot.json
evoledger-session submit program --episodes 1 > analysis/submit.json || exit 42
evoledger-session finish submission-000001 > analysis/finish.json || exit 43
"""


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="evenv-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _script(root: Path, name: str, text: str | bytes) -> Path:
    path = root / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def _run(record_to: Path, agent: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``evoledger run`` for a tiny Run, with a PATH that lacks the interpreter's folder."""
    env = {"HOME": os.environ.get("HOME", "/root"), "PATH": BARE_PATH, "LANG": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:  # the Host imports the evoledger under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    argv = [sys.executable, "-m", "evoledger", "run", "toy/counter", "--agent", f"command:{agent}"]
    argv += ["--episode-budget", "4", "--validation-episodes", "0", "--assessment-episodes", "1"]
    argv += ["--isolation", "local", "--record-to", str(record_to), *options]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)


def _replay(record_to: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "evoledger", "replay", str(record_to)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def _long_dir(root: Path) -> Path:
    path = root / ("r" * 80) / ("u" * 80)
    assert len(str(path / "control" / "session.sock")) > 150
    return path


def _ended(record_to: Path) -> RunEnded:
    with Ledger.open(record_to) as ledger:
        ended = [r.event for r in ledger.events(kinds=["run-ended"])]
    assert len(ended) == 1
    assert isinstance(ended[0], RunEnded)
    return ended[0]


def _agent_isolations() -> list[str]:
    return ["local", "bwrap"] if probe_bwrap()[0] is not None else ["local"]


@pytest.mark.parametrize("isolation", _agent_isolations())
def test_agent_environment_without_the_venv_from_a_long_run_directory(root: Path, isolation: str) -> None:
    """One Run covers the environment an Agent gets: the Host's ``evoledger-session`` first on a PATH that lacks the
    venv, a socket that fits although the run directory is long, a plain index as selector, and the Skills (placed
    read-only, recorded in ``agent-started``, refused as a Program)."""
    assert shutil.which("evoledger-session", path=BARE_PATH) is None  # the premise: not found on the bare PATH
    record_to = _long_dir(root)
    done = _run(record_to, _script(root, "agent.sh", AGENT), "--agent-isolation", isolation)
    assert done.returncode == 0, done.stderr + (record_to / "host" / "agent-1" / "stderr.log").read_text()
    found = (record_to / "host" / "agent-1" / "stderr.log").read_text().strip().splitlines()[0]
    assert found.endswith("/bin/evoledger-session")  # the Host's launcher, in the Session's private folder
    assert not found.startswith(str(record_to))
    workspace = record_to / "workspace"
    submitted = json.loads((workspace / "analysis" / "submit.json").read_text())
    assert submitted["submission_id"] == "submission-000001"
    feedback = json.loads((workspace / "feedback" / "submission-000001" / "feedback.json").read_text())
    assert [e["index"] for e in feedback["episodes"]] == [1]  # the plain index 1 selected Episode 1 alone
    assert _ended(record_to).reason == "finished"
    private = Path(found).parent.parent  # the Session's private folder (socket, launcher): gone once the Run ends
    assert private.name.startswith("evoledger-"), private
    assert not private.exists(), private
    assert not (record_to / "control" / "session.sock").exists()
    _check_skills(record_to, isolation)
    replayed = _replay(record_to)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def _check_skills(record_to: Path, isolation: str) -> None:
    workspace = record_to / "workspace"
    expected = skills_for("toy")
    placed = {p.name: p.read_text(encoding="utf-8") for p in (workspace / SKILLS_DIR).iterdir()}
    assert placed == expected
    assert (workspace / "analysis" / "seen-readme.md").read_text(encoding="utf-8") == expected[GENERAL_SKILL]
    assert stat.S_IMODE((workspace / SKILLS_DIR).stat().st_mode) == 0o555
    assert {stat.S_IMODE(p.stat().st_mode) for p in (workspace / SKILLS_DIR).iterdir()} == {0o444}
    if isolation == "bwrap" or os.geteuid() != 0:  # root ignores file modes; the sandbox's bind does not
        assert not (workspace / "analysis" / "write.txt").exists()
    refused = json.loads((workspace / "analysis" / "submit-dot.json").read_text())
    assert refused["error"]["code"] == "program_invalid"
    assert "skills/" in refused["error"]["message"]
    with Ledger.open(record_to) as ledger:
        started = [r.event for r in ledger.events(kinds=["agent-started"])]
        snapshots = [r.event for r in ledger.events(kinds=["program-snapshotted"])]
        assert isinstance(started[0], AgentStarted)
        assert started[0].skills_digest is not None
        assert ledger.objects.get(started[0].skills_digest) == skills_object(expected)
        assert started[0].task_digest is not None
        task = ledger.objects.get(started[0].task_digest).decode("utf-8")
    assert json.loads(skills_object(expected))["version"] == SKILLS_VERSION
    assert "`skills/README.md`, `skills/toy.md`" in task
    assert snapshots
    assert not [path for s in snapshots for path in getattr(s, "files", {}) if path.startswith(SKILLS_DIR)]


@pytest.mark.parametrize(
    ("name", "body", "words"),
    [
        ("bad-format", b"\x7fELF-not-really\x00\x01", "Exec format error"),
        ("bad-interpreter", "#!/nonexistent/interpreter\n", "No such file or directory"),
    ],
)
def test_agent_that_cannot_be_executed_ends_the_run_agent_failed(
    root: Path, name: str, body: str | bytes, words: str
) -> None:
    agent = _script(root, name, body)
    record_to = root / "run"
    done = _run(record_to, agent, "--agent-isolation", "local")
    assert done.returncode == 6, done.stderr
    assert "the Run ended agent_failed" in done.stderr
    assert "could not be started" in done.stderr
    assert words in done.stderr
    ended = _ended(record_to)
    assert ended.reason == "agent_failed"
    assert "could not be started" in ended.message
    assert words in ended.message
    with Ledger.open(record_to) as ledger:
        assert not [r for r in ledger.events(kinds=["agent-started"])]  # no half-recorded attempt
    if name == "bad-format":  # one replay is enough: both Runs end the same way
        replayed = _replay(record_to)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_agent_that_exits_at_once_with_an_error_records_its_status(root: Path) -> None:
    agent = _script(root, "quits.sh", "#!/bin/sh\necho 'no API key' >&2\nexit 3\n")
    record_to = root / "run"
    done = _run(record_to, agent, "--agent-isolation", "local")
    assert done.returncode == 6, done.stderr
    assert "the Agent exited with status 3" in done.stderr
    assert "no API key" in done.stderr
    ended = _ended(record_to)
    assert (ended.reason, ended.message) == ("agent_failed", "the Agent exited with status 3")
    with Ledger.open(record_to) as ledger:
        started = [r.event for r in ledger.events(kinds=["agent-started"])]
    assert len(started) == 1
    assert isinstance(started[0], AgentStarted)


def _facts(pool_size: int) -> TaskFacts:
    params: dict[str, object] = {}
    spec = BenchmarkSpec(
        id="toy/counter",
        description="A counter.",
        observation_space={"type": "Discrete", "n": 4, "start": 0},
        action_space={"type": "Discrete", "n": 2, "start": 0},
        metadata={},
        environment_parameters=params,
        max_episode_steps=10,
        primary_metric="mean_return",
        score_direction="maximize",
        parameters_digest=parameters_digest(params),
    )
    return TaskFacts(
        benchmark=spec,
        episode_budget=pool_size,
        pool_size=pool_size,
        max_submissions=pool_size,
        max_episodes_per_submission=pool_size,
        finish_budget_policy="allow_early",
        max_candidates=1,
        validation_episodes=0,
        bulk_retention_bytes=None,
    )


@pytest.mark.parametrize("pool_size", [1, 2, 3, 4, 5, 7, 8, 9, 64])
def test_selector_examples_fit_the_pool(pool_size: int) -> None:
    example, _, one = selector_examples(pool_size)
    assert max(parse_selector(example)) < pool_size
    assert parse_selector(one) == (int(one),)
    assert int(one) < pool_size


def test_task_text_of_a_small_pool_states_the_rules_and_plain_indices() -> None:
    text = render_task_text(_facts(4))
    assert "0:2,4:8" not in text
    assert "--episodes 0:2,3" in text
    assert "plain indices `i` (that one Episode)" in text
    assert "`3` selects Episode 3 alone" in text
    assert "`evoledger-session finish submission-000002` ends" in text  # one Candidate allowed: one id shown
    rules = text[text.index("## Rules") :]
    for rule in (
        "Do not use the network or any outside knowledge about this Environment",
        "Reach the Environment only through `evoledger-session`",
        "Run one `evoledger-session` command at a time",
        "Do not exit before `evoledger-session finish` has been accepted",
    ):
        assert rule in rules


def test_every_benchmark_family_has_a_guide() -> None:
    assert skill_families() == default_registry().families()
    for family in skill_families():
        guides = skills_for(family)
        assert sorted(guides) == sorted([GENERAL_SKILL, f"{family}.md"])
        assert all(text.startswith("# ") for text in guides.values())
    assert sorted(skills_for("no-such-family")) == [GENERAL_SKILL]


def test_the_guides_ship_as_package_data() -> None:
    repo = Path(__file__).resolve().parents[3]
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["evoledger.kernel.agents"]
    shipped = {p.name for pattern in patterns for p in (repo / "kernel" / "agents").glob(pattern)}
    assert shipped == {GENERAL_SKILL, *(f"{family}.md" for family in skill_families())}
