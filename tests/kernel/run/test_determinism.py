"""The same Run seed and the same Agent decisions give the same log (timestamps and durations aside)."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from evoledger.kernel.execution import LocalExecutor
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig
from evoledger.kernel.run.live import LiveRun
from evoledger.kernel.run.setup import create_run
from evoledger.kernel.session import FinishParams, Rejection, SubmitParams, format_selector
from evoledger.ledger.signing import SIGNATURE_NAME
from evoledger.ledger.signing_keys import SigningKey
from evoledger.ledger.store import Ledger
from hypothesis import given, settings
from hypothesis import strategies as st

BENCHMARK = BenchmarkRef(name="toy-counter", config={"infra_fault_indices": [3], "max_episode_steps": 5})
VOLATILE = {"duration_ms", "run_id"}
_EXECUTORS: list[LocalExecutor] = []


def _executor() -> LocalExecutor:
    if not _EXECUTORS:
        _EXECUTORS.append(LocalExecutor(BENCHMARK))
        atexit.register(_EXECUTORS[0].close)
    return _EXECUTORS[0]


def _record(
    root: Path, seed: int, decisions: list[tuple[str, Any]], signing_key: SigningKey | None = None
) -> list[tuple[str, str, dict[str, Any]]]:
    """Record a Run driven by ``decisions``; return its log without volatile fields."""
    config = RunConfig(
        benchmark=BENCHMARK,
        episode_budget=8,
        episode_pool_size=5,
        seed=seed,
        validation=ValidationConfig(episodes=0),
        assessment=AssessmentConfig(episodes=0),
    )
    program = root / "initial"
    program.mkdir(parents=True)
    (program / "policy.py").write_text(
        "import random\n"
        "def make_policy(context):\n"
        "    rng = random.Random(context.policy_seed)\n"
        "    class P:\n"
        "        def act(self, o):\n"
        "            return rng.randrange(context.action_space.n)\n"
        "    return P()\n",
        encoding="utf-8",
    )
    created = create_run(root / "run", config, initial_program=program, signing_key=signing_key)
    with created.ledger as ledger:
        live = LiveRun.open(
            ledger=ledger,
            layout=created.layout,
            config=config,
            benchmark=created.benchmark,
            plan=created.plan,
            executor=_executor(),
        )
        for method, params in decisions:
            with contextlib.suppress(Rejection):
                live.host.handle(method, params)
        return [
            (s.kind, s.visibility, {k: v for k, v in s.data().items() if k not in VOLATILE}) for s in ledger.records()
        ]


decisions = st.lists(
    st.one_of(
        st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True).map(
            lambda xs: ("submit", SubmitParams(program="program", episodes=format_selector(sorted(xs))))
        ),
        st.integers(1, 3).map(lambda n: ("finish", FinishParams(candidates=[f"submission-{n:06d}"]))),
    ),
    max_size=5,
)


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32), script=decisions)
def test_same_seed_and_decisions_give_the_same_log(seed: int, script: list[tuple[str, Any]]) -> None:
    root = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    try:
        first = _record(root / "a", seed, script)
        second = _record(root / "b", seed, script)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert first == second
    assert any(kind == "episode-planned" for kind, _, _ in first)


def test_a_different_seed_gives_different_host_seeds(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    try:
        a = _record(root / "a", 1, [])
        b = _record(root / "b", 2, [])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    planned_a = [p for k, _, p in a if k == "episode-planned"]
    planned_b = [p for k, _, p in b if k == "episode-planned"]
    assert len(planned_a) == len(planned_b) == 5
    assert all(x["env_seed"] != y["env_seed"] for x, y in zip(planned_a, planned_b, strict=True))


def test_identical_decisions_give_identical_chain_hashes() -> None:
    """Timestamps differ between two recordings, yet every hash agrees: nothing volatile is hashed."""
    root = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    try:
        script = [("submit", SubmitParams(program="program", episodes="0:4"))]  # index 3 infra-faults
        _record(root / "a", 5, script)
        _record(root / "b", 5, script)  # the same Run directory name ("run"), so the same run id
        chains = []
        for name in ("a", "b"):
            with Ledger.open(root / name / "run") as book:
                chains.append([(s.hash, s.recorded_at) for s in book.records()])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert [h for h, _ in chains[0]] == [h for h, _ in chains[1]]
    assert [t for _, t in chains[0]] != [t for _, t in chains[1]]


def test_a_fixed_signing_key_keeps_the_log_and_its_signature_identical() -> None:
    """Keys differ between machines, so determinism is stated for one key: the same key signs the same bytes."""
    key = SigningKey.from_seed(bytes(32))
    root = Path(tempfile.mkdtemp(prefix="evd-", dir="/tmp"))
    try:
        script = [("submit", SubmitParams(program="program", episodes="0:3"))]
        first = _record(root / "a", 5, script, signing_key=key)
        second = _record(root / "b", 5, script, signing_key=key)
        signatures = [(root / name / "run" / SIGNATURE_NAME).read_bytes() for name in ("a", "b")]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert first == second
    assert first[0][2]["signer"]["fingerprint"] == key.fingerprint
    assert signatures[0] == signatures[1]
