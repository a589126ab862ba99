"""Full Runs with fake coding-agent CLIs that behave like the real ones, and the remaining terminal reasons."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.store import Ledger
from evoledger.ledger.verify import verify

# A stand-in for `claude --print ... TASK`: it checks the flags the adapter passes, reads the task text it was given,
# and then works the way the real CLI's agent loop would: through `evoledger-session` in its cwd.
FAKE_CODING_CLI = r"""#!{python}
import json, os, shutil, subprocess, sys
args = sys.argv[1:]
assert args[args.index("--permission-mode") + 1] == "bypassPermissions", args
task = args[-1]
assert "evoledger-session submit" in task and "make_policy" in task, "the task text must explain the protocol"
with open("analysis/seen-task.txt", "w") as f:
    f.write(task)
session = shutil.which("evoledger-session") or sys.exit("evoledger-session is not on PATH")
def call(*a):
    done = subprocess.run([session, *a], capture_output=True, text=True)
    return done.returncode, json.loads(done.stdout or (done.stderr.strip().splitlines() or ["{{}}"])[-1])
code, first = call("submit", "program", "--episodes", "0:2")
assert code == 0, first
code, second = call("submit", "program", "--episodes", "2:4")
best = max([first, second], key=lambda r: r["score"])
code, done = call("finish", best["submission_id"])
assert code == 0, done
print("fake claude: finished with", best["submission_id"])
"""

POLICY = (
    "def make_policy(context):\n"
    "    class P:\n"
    "        def act(self, observation):\n"
    "            return 0\n"
    "    return P()\n"
)


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="eva-", dir="/tmp"))  # short: Unix socket paths are length-limited
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _program(root: Path, source: str = POLICY) -> Path:
    program = root / "initial"
    program.mkdir()
    (program / "policy.py").write_text(source, encoding="utf-8")
    return program


def _config(**overrides: object) -> RunConfig:
    settings: dict[str, object] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "episode_budget": 6,
        "validation": ValidationConfig(episodes=0),
        "assessment": AssessmentConfig(episodes=2),
        "finish_grace_seconds": 0.5,
        **overrides,
    }
    return RunConfig(**settings)


def test_a_full_run_with_a_fake_claude_code_cli(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = root / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(FAKE_CODING_CLI.format(python=sys.executable), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    session = Path(sys.executable).parent / "evoledger-session"
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(session.parent), os.environ.get("PATH", "")]))
    result = run(_config(agent=AgentConfig(name="claude-code")), record_to=root / "r", initial_program=_program(root))
    assert result.reason == "finished", (root / "r" / "host" / "agent-1" / "stderr.log").read_text()
    assert [s.submission_id for s in result.submissions] == ["submission-000001", "submission-000002"]
    assert result.selected in {"submission-000001", "submission-000002"}
    assert result.assessment_score is not None
    seen = (root / "r" / "workspace" / "analysis" / "seen-task.txt").read_text()
    with Ledger.open(root / "r") as book:
        (started,) = [r.event for r in book.events(kinds=["agent-started"])]
        assert started.agent == "claude-code"  # type: ignore[attr-defined]
        assert started.command[0] == "claude"  # type: ignore[attr-defined]
        assert book.objects.get(started.task_digest).decode() == seen  # type: ignore[attr-defined]
    assert verify(root / "r").ok


def test_an_agent_that_spends_the_budget_and_leaves_ends_as_budget_exhausted(root: Path) -> None:
    script = root / "agent.py"
    script.write_text(
        "import shutil, subprocess, sys\n"
        "exe = shutil.which('evoledger-session')\n"
        "argv = [exe] if exe else [sys.executable, '-m', 'evoledger.kernel.session.client']\n"
        "subprocess.run([*argv, 'submit', 'program', '--episodes', '0:6'], check=True)\n",
        encoding="utf-8",
    )
    result = run(
        _config(agent=AgentConfig(name=f"command:{sys.executable} {script}")),
        record_to=root / "r",
        initial_program=_program(root),
    )
    assert result.reason == "budget_exhausted"
    assert result.budget_left == 0
    assert result.selected is None


def test_persistent_infra_faults_count_against_the_candidate_in_validation_and_end_assessment(root: Path) -> None:
    script = root / "agent.py"
    script.write_text(
        "import json, shutil, subprocess, sys\n"
        "exe = shutil.which('evoledger-session')\n"
        "argv = [exe] if exe else [sys.executable, '-m', 'evoledger.kernel.session.client']\n"
        "out = subprocess.run([*argv, 'submit', 'program', '--episodes', '0:2'], check=True, capture_output=True)\n"
        "sid = json.loads(out.stdout)['submission_id']\n"
        "subprocess.run([*argv, 'finish', sid], check=True)\n",
        encoding="utf-8",
    )
    # Every Environment fails on reset: training Episodes become infra faults (refunded up to the limit), Validation
    # Episodes still faulting after the Candidate's retries count as its failures (projections.refunds), and the
    # Assessment, whose faults persist too, cannot be completed.
    config = _config(
        benchmark=BenchmarkRef(name="toy-counter", config={"fail_on_reset": True, "infra_fault_indices": []}),
        validation=ValidationConfig(episodes=2),
        agent=AgentConfig(name=f"command:{sys.executable} {script}"),
    )
    result = run(config, record_to=root / "r", initial_program=_program(root))
    assert result.reason == "assessment_failed"
    with Ledger.open(root / "r") as book:
        (ended,) = [r.stored.data() for r in book.events(kinds=["run-ended"])]
        validation = [r.stored.data() for r in book.events(kinds=["validation-episode-finished"])]
    assert [v["status"] for v in validation] == ["exception", "exception"]
    assert "infra faults" in ended["message"]
    assert json.dumps(ended)  # recorded, and the record still verifies
    assert verify(root / "r").ok
