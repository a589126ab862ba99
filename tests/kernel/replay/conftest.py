"""One real recorded Run shared by the replay tests, copied afresh for each test that changes it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.canonical import canonical_json
from evoledger.ledger.head import MANIFEST_NAME, Head, HeadManifest
from evoledger.ledger.records import GENESIS_HASH, chain_hash

# A small hill-climb Run whose tiny retention cap forces bulk evictions, so every projection has work.
CONFIG = RunConfig(
    episode_budget=12,
    validation=ValidationConfig(episodes=2, max_candidates=3),
    assessment=AssessmentConfig(episodes=2),
    bulk_feedback_retention_bytes=6000,
    seed=11,
    agent=AgentConfig(name="hill-climb"),
)

_CLI = ("-c", "from evoledger.kernel.cli import main; main()")  # the console script's entry point


@pytest.fixture(scope="session")
def recorded_run() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are length-limited
    result = run(CONFIG, record_to=root / "run")
    assert result.reason == "finished"
    yield root / "run"
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def run_copy(recorded_run: Path) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    target = root / "run"
    shutil.copytree(recorded_run, target, ignore=shutil.ignore_patterns("session.sock", "ledger.lock"))
    yield target
    shutil.rmtree(root, ignore_errors=True)


class Tamper:
    """Ways to damage a copied Run directly on disk, as an attacker or a faulty tool would."""

    def connect(self, run_dir: Path) -> sqlite3.Connection:
        return sqlite3.connect(run_dir / "ledger.sqlite", isolation_level=None)

    def rows(self, run_dir: Path) -> list[tuple[int, str, str, bytes]]:
        """``(seq, kind, visibility, payload)`` of every event row."""
        conn = self.connect(run_dir)
        try:
            return conn.execute("SELECT seq, kind, visibility, payload FROM events ORDER BY seq").fetchall()
        finally:
            conn.close()

    def seq_of(self, run_dir: Path, kind: str, nth: int = 0) -> int:
        return [seq for seq, k, _, _ in self.rows(run_dir) if k == kind][nth]

    def payload(self, run_dir: Path, seq: int) -> dict[str, Any]:
        return json.loads(next(p for s, _, _, p in self.rows(run_dir) if s == seq))

    def execute(self, run_dir: Path, sql: str, *params: object) -> None:
        conn = self.connect(run_dir)
        try:
            conn.execute(sql, params)
        finally:
            conn.close()

    def forge(self, run_dir: Path, seq: int, edit: Callable[[dict[str, Any]], None]) -> None:
        """Rewrite event ``seq`` with ``edit`` and re-chain the log and its manifest, so integrity still holds."""
        conn = self.connect(run_dir)
        try:
            table = conn.execute("SELECT seq, kind, version, visibility, payload FROM events ORDER BY seq").fetchall()
            prev = GENESIS_HASH
            conn.execute("BEGIN")
            for s, kind, version, visibility, payload in table:
                if s == seq:
                    data = json.loads(payload)
                    edit(data)
                    payload = canonical_json(data)
                digest = chain_hash(prev, kind, version, visibility, payload)
                conn.execute(
                    "UPDATE events SET payload = ?, prev_hash = ?, hash = ? WHERE seq = ?", (payload, prev, digest, s)
                )
                prev = digest
            conn.execute("COMMIT")
        finally:
            conn.close()
        HeadManifest(run_dir / MANIFEST_NAME).write(Head(prev, len(table)))


@pytest.fixture
def tamper() -> Tamper:
    return Tamper()


@pytest.fixture
def replay_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The real ``evoledger`` command line in a subprocess."""

    def invoke(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *_CLI, *args], capture_output=True, text=True, timeout=120, check=False)

    return invoke
