"""The Host runs exactly the snapshotted bytes, and replay notices a tampered materialized copy.

Before the fix the Host executed ``<run>/host/programs/<digest>/``, a long-lived copy that the Agent (or a
Policy, whose working directory it was) could rewrite after submitting: Validation and Assessment then ran
other code than the snapshot, and plain ``replay`` passed. Now every execution gets a private copy from the
Object store, and ``replay`` compares whatever sits under ``host/programs/`` with its snapshot.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.benchmarks.classic_control import make_cartpole
from evoledger.kernel.authoring import starting_program
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.kernel.run.private_copies import copy_differences, private_program_copy
from evoledger.ledger.events import AssessmentFinished, ValidationEpisodeFinished
from evoledger.ledger.snapshots import materialize_program, snapshot_program
from evoledger.ledger.store import Ledger

SUPPORT = Path(__file__).resolve().parents[2] / "support"

HONEST = """
class _Policy:
    def act(self, observation):
        return 0


def make_policy(context):
    return _Policy()
"""

CHEAT = "def make_policy(context):\n    raise RuntimeError('TAMPERED: these bytes were never submitted')\n"

# The Agent submits HONEST, then rewrites the Host's materialized copy of it (creating it where a Host no longer
# writes one) and finishes: Validation and Assessment must still run HONEST.
TAMPERING_AGENT = """
import os, sys
sys.path.insert(0, SUPPORT)
from session_call import call

ws = os.environ["EVOLEDGER_WORKSPACE"]
sid = call("submit", program="program", episodes="0:2")["result"]["submission_id"]
run_dir = os.path.dirname(os.path.abspath(ws))
for name in DIGESTS:
    copy = os.path.join(run_dir, "host", "programs", name)
    os.makedirs(copy, exist_ok=True)
    with open(os.path.join(copy, "policy.py"), "w") as f:
        f.write(CHEAT)
call("finish", candidates=[sid])
"""

# A Policy that, in its first (public) Episode only, rewrites the file it was loaded from (its working directory is
# the Program copy). Within one execution a Policy can keep state in files anyway (a local-backend limit); what it
# must not do is change the bytes a later execution (Validation, Assessment) starts from.
SELF_REWRITING = """
import os

CHEAT = CHEAT_SOURCE
FLAG = FLAG_PATH


class _Policy:
    def act(self, observation):
        if not os.path.exists(FLAG):
            open(FLAG, "w").close()
            with open(os.path.join(os.getcwd(), "policy.py"), "w") as f:
                f.write(CHEAT)
        return 0


def make_policy(context):
    return _Policy()
"""


@pytest.fixture
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="evp-", dir="/tmp"))  # short: Unix socket paths are limited
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _digest_name(program: str, root: Path) -> str:
    """The ``host/programs`` name an earlier Host used for ``program``'s snapshot."""
    directory = root / "digest-probe"
    directory.mkdir(exist_ok=True)
    (directory / "policy.py").write_text(program.lstrip(), encoding="utf-8")
    with Ledger.create(root / "digest-ledger") as book:
        return snapshot_program(directory, book.objects).digest.removeprefix("sha256:")[:32]


def _run(root: Path, program: str, agent: str) -> Path:
    script = root / "agent.py"
    script.write_text(textwrap.dedent(agent), encoding="utf-8")
    initial = root / "initial-program"
    initial.mkdir()
    (initial / "policy.py").write_text(program.lstrip(), encoding="utf-8")
    config: dict[str, Any] = {
        "benchmark": BenchmarkRef(name="toy-counter"),
        "episode_budget": 4,
        "validation": ValidationConfig(episodes=3),
        "assessment": AssessmentConfig(episodes=3),
        "finish_grace_seconds": 0.5,
        # the local backend: under bwrap the copy a Policy runs from is read-only (test_isolation.py)
        "isolation": "local",
        "agent_isolation": "local",  # an unsandboxed Agent can reach host/programs/ (the sandbox hides it)
        "agent": AgentConfig(name=f"command:{sys.executable} {script}"),
    }
    result = run(RunConfig(**config), record_to=root / "r", initial_program=initial)
    assert result.reason == "finished", result
    return root / "r"


def _judged_statuses(run_dir: Path) -> list[str]:
    with Ledger.open(run_dir) as book:
        events = [r.event for r in book.events(kinds=["validation-episode-finished", "assessment-finished"])]
    statuses: list[str] = [e.status for e in events if isinstance(e, ValidationEpisodeFinished)]
    for e in events:
        if isinstance(e, AssessmentFinished):
            statuses += [s.status for s in e.episodes]
    return statuses


def test_a_copy_rewritten_after_submitting_is_never_run_and_replay_reports_it(root: Path) -> None:
    name = _digest_name(HONEST, root)
    agent = f"SUPPORT = {str(SUPPORT)!r}\nDIGESTS = [{name!r}]\nCHEAT = {CHEAT!r}\n" + textwrap.dedent(TAMPERING_AGENT)
    run_dir = _run(root, HONEST, agent)
    assert (run_dir / "host" / "programs" / name / "policy.py").read_text(encoding="utf-8") == CHEAT
    statuses = _judged_statuses(run_dir)
    assert statuses == ["ok"] * 6  # 3 Validation + 3 Assessment Episodes, all of the snapshot's honest Program
    report = replay(run_dir)
    projections = report.check("projections")
    codes = [f.code for f in projections.findings]
    assert "program_copy_tampered" in codes, projections
    assert report.exit_code != 0


def test_a_policy_that_rewrites_its_own_copy_does_not_change_what_is_judged(root: Path) -> None:
    flag = root / "rewritten"
    program = SELF_REWRITING.replace("CHEAT_SOURCE", repr(CHEAT)).replace("FLAG_PATH", repr(str(flag)))
    agent = (
        f"SUPPORT = {str(SUPPORT)!r}\n"
        + "import os, sys\nsys.path.insert(0, SUPPORT)\nfrom session_call import call\n"
        + "call('submit', program='program', episodes='0:1')\n"
        + "call('finish', candidates=['submission-000001'])\n"
    )
    run_dir = _run(root, program, agent)
    assert flag.exists()  # the public Episode did rewrite its copy
    assert _judged_statuses(run_dir) == ["ok"] * 6
    assert replay(run_dir).exit_code == 0


def test_copy_differences_names_every_kind_of_difference(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "lib").mkdir(parents=True)
    (source / "policy.py").write_text(HONEST, encoding="utf-8")
    (source / "lib" / "helper.py").write_text("X = 1\n", encoding="utf-8")
    with Ledger.create(tmp_path / "ledger") as book:
        digest = snapshot_program(source, book.objects).digest
        copy = tmp_path / "copy"
        materialize_program(digest, book.objects, copy)
        assert copy_differences(digest, book.objects, copy) == []
        (copy / "policy.py").write_text(CHEAT, encoding="utf-8")
        (copy / "extra.py").write_text("", encoding="utf-8")
        (copy / "lib" / "helper.py").unlink()
        (copy / "lib" / "helper.py").symlink_to(copy / "policy.py")
        os.chmod(copy / "extra.py", 0o755)
        found = "\n".join(copy_differences(digest, book.objects, copy))
    assert "policy.py: " in found
    assert "extra.py: not in the snapshot" in found
    assert "lib/helper.py: is not a regular file" in found
    assert "lib/helper.py: missing" in found


def test_each_execution_gets_a_fresh_private_copy_that_is_removed_afterwards(tmp_path: Path) -> None:
    with Ledger.create(tmp_path / "ledger") as book:
        digest = snapshot_program(starting_program(make_cartpole()), book.objects).digest
        with private_program_copy(digest, book.objects) as first:
            (first / "policy.py").write_text(CHEAT, encoding="utf-8")
        with private_program_copy(digest, book.objects) as second:
            assert copy_differences(digest, book.objects, second) == []
            assert (os.stat(second.parent).st_mode & 0o777) == 0o700
        assert not first.exists()
        assert not second.exists()
        # The cost that decided between "re-hash the copy before use" and "a private copy per execution".
        began = time.perf_counter()
        for _ in range(20):
            with private_program_copy(digest, book.objects):
                pass
        per_copy = (time.perf_counter() - began) / 20
        with private_program_copy(digest, book.objects) as program_dir:
            began = time.perf_counter()
            for _ in range(20):
                copy_differences(digest, book.objects, program_dir)
            per_check = (time.perf_counter() - began) / 20
    print(f"private copy {per_copy * 1000:.2f} ms, re-hash {per_check * 1000:.2f} ms per execution")
    assert per_copy < 5.0  # generous: a copy per execution is never a noticeable part of an Evaluation
