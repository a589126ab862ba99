"""The attacker's view: nothing an Agent or its Policies see lets them compute a held-out Episode.

Today's attack (issue 11): the Run seed defaulted to 0 and every Host seed was a public hash of it, so an
Agent brute-forced the seed from the value it was handed, computed every Validation and Assessment
seed, and shipped a Program that looked the answers up. Here two real Runs without ``--seed`` play the
attacker's part: everything Agent-visible is collected (the Agent's environment, every workspace file
including Feedback, the session's answers, every public Event payload, and the Policy context of the
training Episodes) and searched for the held-out seeds and the key, and every integer in it, plus
every small seed, is tried as the seed of the old public derivation and of ``--seed``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.authoring import SPLITS, Split, derive_seed
from evoledger.kernel.authoring.keyed_seeds import keyed_seed, run_key_from_seed
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.kernel.replay import replay
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.kernel.run.setup import plan_run, run_key_for
from evoledger.ledger.store import Ledger

ATTACKER_AGENT = r"""
import json, os, shutil, subprocess, sys
ws = os.environ["EVOLEDGER_WORKSPACE"]
answers = []
def call(*args):
    exe = shutil.which("evoledger-session")
    argv = [exe, *args] if exe else [sys.executable, "-m", "evoledger.kernel.session.client", *args]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ws)
    answers.append({"args": list(args), "stdout": done.stdout, "stderr": done.stderr})
call("status")
call("submit", "program", "--episodes", "0:4")
call("submit", "program", "--episodes", "2:6")
call("status")
call("finish", "submission-000001", "submission-000002")
with open(os.path.join(ws, "analysis", "attacker-view.json"), "w") as f:
    json.dump({"environ": dict(os.environ), "answers": answers}, f)
"""

# The Policy shows the Agent its whole context (through its output, mirrored as Feedback) and plays randomly.
LEAKY_POLICY = """
def make_policy(context):
    print("context", context.policy_seed, context.metadata, context.environment_parameters)
    context.action_space.seed(context.policy_seed % 2**32)
    class P:
        def act(self, observation):
            print("observation", observation)
            return context.action_space.sample()
    return P()
"""

BENCHMARK = BenchmarkRef(name="frozen-lake")
HELD_OUT: tuple[Split, ...] = ("validation", "assessment")


@pytest.fixture(scope="module")
def runs() -> Iterator[list[Path]]:
    root = Path(tempfile.mkdtemp(prefix="evs-", dir="/tmp"))  # short: Unix socket paths are limited
    (root / "agent.py").write_text(ATTACKER_AGENT, encoding="utf-8")
    (root / "program").mkdir()
    (root / "program" / "policy.py").write_text(LEAKY_POLICY, encoding="utf-8")
    config = RunConfig(
        benchmark=BENCHMARK,
        episode_budget=8,
        validation=ValidationConfig(episodes=3, max_candidates=2),
        assessment=AssessmentConfig(episodes=4),
        agent=AgentConfig(name=f"command:{sys.executable} {root / 'agent.py'}"),
    )
    assert config.seed is None  # no --seed: a random secret key
    dirs = []
    for name in ("a", "b"):
        result = run(config, record_to=root / name, initial_program=root / "program")
        assert result.reason == "finished", result
        assert (result.seed, result.held_out_episodes) == (None, "secret")
        dirs.append(root / name)
    yield dirs
    shutil.rmtree(root, ignore_errors=True)


def _planned(run_dir: Path) -> dict[tuple[str, int], tuple[int, int]]:
    with Ledger.open(run_dir) as book:
        return {
            (d["split"], d["index"]): (d["env_seed"], d["policy_seed"])
            for d in (r.stored.data() for r in book.events(kinds=["episode-planned"]))
        }


def _key(run_dir: Path) -> bytes:
    with Ledger.open(run_dir) as book:
        (record,) = [r.stored for r in book.events(kinds=["run-key"])]
    assert record.visibility == "host"
    return bytes.fromhex(record.data()["key"])


def _agent_visible(run_dir: Path) -> str:
    """Everything the Agent and its Policies could see, as one text."""
    parts: list[str] = []
    view = json.loads((run_dir / "workspace" / "analysis" / "attacker-view.json").read_text(encoding="utf-8"))
    assert view["environ"]["EVOLEDGER_AGENT_SEED"]
    assert [a["args"][0] for a in view["answers"]] == ["status", "submit", "submit", "status", "finish"]
    parts.extend(f"{k}={v}" for k, v in view["environ"].items())
    parts.extend(a["stdout"] + a["stderr"] for a in view["answers"])
    files = [p for p in (run_dir / "workspace").rglob("*") if p.is_file() and not p.is_symlink()]
    assert any("feedback" in p.parts for p in files)
    parts.extend(p.read_bytes().decode("utf-8", errors="replace") for p in files)
    with Ledger.open(run_dir) as book:
        parts.extend(r.payload.decode("utf-8") for r in book.records() if r.visibility == "public")
        # the Policy context of every training Episode: its policy_seed (the rest is the public spec)
        parts.extend(
            str(r.stored.data()["policy_seed"])
            for r in book.events(kinds=["episode-planned"])
            if r.stored.data()["split"] == "train"
        )
    text = "\n".join(parts)
    assert "context" in text  # the Policy's own output reached the Agent
    return text


def test_two_runs_without_a_seed_plan_different_held_out_episodes(runs: list[Path]) -> None:
    a, b = (_planned(r) for r in runs)
    held_out = [k for k in a if k[0] in HELD_OUT]
    assert len(held_out) == 7
    assert set(a) == set(b)
    for k in held_out:
        assert a[k][0] != b[k][0], k  # Environment seed
        assert a[k][1] != b[k][1], k  # Policy seed
    assert _key(runs[0]) != _key(runs[1])


def test_nothing_agent_visible_holds_or_determines_a_held_out_seed(runs: list[Path]) -> None:
    benchmark = resolve_benchmark(BENCHMARK)
    for run_dir in runs:
        planned, key = _planned(run_dir), _key(run_dir)
        text = _agent_visible(run_dir)
        held_out = {k: v for k, v in planned.items() if k[0] in HELD_OUT}
        secrets = {str(s) for pair in held_out.values() for s in pair}
        split_seeds = {split: keyed_seed(key, "environment", split) for split in SPLITS}
        secrets |= {str(s) for s in split_seeds.values()}
        secrets |= {key.hex(), key.hex().upper(), str(int.from_bytes(key, "big"))}
        leaked = sorted(s for s in secrets if s in text)
        assert not leaked, f"{run_dir.name}: Agent-visible data contains {leaked}"

        # Brute force, as the attacker would: every small seed and every integer the Agent saw.
        visible = {int(n) for n in re.findall(r"\d{1,19}", text)}
        candidates = sorted((visible | set(range(10_000))) - {n for n in visible if n >= 2**63})
        assert len(candidates) > 10_000
        policy_targets = {pair[1] for pair in held_out.values()}
        env_targets = {pair[0] for pair in held_out.values()}
        counts = {split: sum(1 for k in held_out if k[0] == split) for split in HELD_OUT}
        for s in candidates:
            assert run_key_from_seed(s) != key, f"the key is the --seed derivation of visible {s}"
            for split in HELD_OUT:
                assert derive_seed(s, "environment", split) != split_seeds[split]
                for i in range(counts[split]):
                    assert derive_seed(s, "policy", split, i) not in policy_targets, (s, split, i)
        # the old attack in full: plan the held-out Episodes from each small seed through the Benchmark
        for s in range(10_000):
            for split in HELD_OUT:
                specs = benchmark.episodes(split, seed=derive_seed(s, "environment", split), count=counts[split])
                assert not {e.seed for e in specs} & env_targets, (s, split)


def test_the_runs_replay_clean(runs: list[Path]) -> None:
    for run_dir in runs:
        report = replay(run_dir)
        assert report.ok, report.to_json()
        assert "plan_not_rederived" not in {f.code for f in report.check("protocol").findings}


def test_a_user_given_seed_makes_the_plan_reproducible(tmp_path: Path) -> None:
    """The other side of the bargain: with --seed the key, and so every held-out seed, follows from the seed."""
    seven, eight = (RunConfig(benchmark=BENCHMARK, seed=s, episode_budget=4) for s in (7, 8))
    benchmark = resolve_benchmark(BENCHMARK)
    first = plan_run(benchmark, seven, run_key_for(seven))
    assert first == plan_run(benchmark, seven, run_key_for(seven, lambda n: bytes(n)))  # the seed, not randomness
    assert first.commitment != plan_run(benchmark, eight, run_key_for(eight)).commitment
    assert run_key_for(RunConfig(benchmark=BENCHMARK), lambda n: b"\x01" * n) == b"\x01" * 32  # no seed: random
