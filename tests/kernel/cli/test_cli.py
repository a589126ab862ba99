"""The thin CLI: help with examples, tables and --json, and exit codes mapped from error families."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "record"
    result = CliRunner().invoke(cli, ["evaluate", "-n", "3", "--record-to", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return path


def test_every_command_has_help_with_an_example() -> None:
    runner = CliRunner()
    for args in (
        ["run"],
        ["resume"],
        ["evaluate"],
        ["ledger"],
        ["ledger", "verify"],
        ["ledger", "log"],
        ["benchmarks"],
    ):
        result = runner.invoke(cli, [*args, "--help"])
        assert result.exit_code == 0
        assert "Example" in result.output, args


def test_evaluate_json_reports_score_and_digests(record: Path) -> None:
    result = CliRunner().invoke(cli, ["evaluate", "-n", "2", "--json"])
    data = json.loads(result.output)
    assert data["benchmark_id"].startswith("cartpole")
    assert len(data["episodes"]) == 2
    assert all(e["trajectory_digest"].startswith("sha256:") for e in data["episodes"])
    assert data["ledger_path"] is None


def test_unknown_benchmark_suggests_and_exits_2() -> None:
    result = CliRunner().invoke(cli, ["evaluate", "--benchmark", "cartpol", "-n", "1"])
    assert result.exit_code == 2
    assert "Did you mean 'classic-control/cartpole'" in result.output


def test_bad_benchmark_setting_exits_2() -> None:
    result = CliRunner().invoke(cli, ["evaluate", "-b", "frozen-lake", "--set", "map_name=9x9", "-n", "1"])
    assert result.exit_code == 2
    assert "9x9" in result.output
    malformed = CliRunner().invoke(cli, ["evaluate", "--set", "nonsense", "-n", "1"])
    assert malformed.exit_code == 2
    assert "KEY=VALUE" in malformed.output


def test_record_to_an_existing_ledger_is_refused(record: Path) -> None:
    result = CliRunner().invoke(cli, ["evaluate", "-n", "1", "--record-to", str(record)])
    assert result.exit_code == 3
    assert "already" in result.output


def test_ledger_verify_ok_and_json(record: Path) -> None:
    result = CliRunner().invoke(cli, ["ledger", "verify", str(record)])
    assert result.exit_code == 0
    assert "ok" in result.output
    data = json.loads(CliRunner().invoke(cli, ["ledger", "verify", str(record), "--json"]).output)
    assert data["ok"] is True
    assert data["events_checked"] > 3


def test_ledger_log_filters_by_kind(record: Path) -> None:
    result = CliRunner().invoke(cli, ["ledger", "log", str(record), "--kind", "episode-finished", "--json"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [line["kind"] for line in lines] == ["episode-finished"] * 3
    assert all("trajectory_digest" in line["payload"] for line in lines)
    host_only = CliRunner().invoke(cli, ["ledger", "log", str(record), "--visibility", "host", "--json"])
    assert {json.loads(x)["visibility"] for x in host_only.output.splitlines()} == {"host"}


def test_ledger_log_refuses_an_unknown_kind_with_a_suggestion(record: Path) -> None:
    result = CliRunner().invoke(cli, ["ledger", "log", str(record), "--kind", "episode-finshed"])
    assert result.exit_code == 2
    assert "unknown event kind 'episode-finshed'" in result.output
    assert "Did you mean 'episode-finished'?" in result.output


def test_ledger_verify_of_a_tampered_record_exits_3(record: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("ledger.sqlite", "ledger.head"):
        (copy / name).write_bytes((record / name).read_bytes())
    with sqlite3.connect(copy / "ledger.sqlite") as db:
        db.execute(
            "UPDATE events SET payload = CAST(replace(CAST(payload AS TEXT), 'train', 'trAin') AS BLOB) "
            "WHERE kind = 'episode-finished'"
        )
    result = CliRunner().invoke(cli, ["ledger", "verify", str(copy)])
    assert result.exit_code == 3
    assert "FAILED" in result.output


def test_ledger_commands_on_a_missing_record_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["ledger", "verify", str(tmp_path / "nope")])
    assert result.exit_code == 2


def test_benchmarks_lists_the_registry() -> None:
    result = CliRunner().invoke(cli, ["benchmarks", "--json"])
    rows = json.loads(result.output)
    for name in (
        "cartpole",
        "acrobot",
        "mountain-car",
        "mountain-car-continuous",
        "pendulum",
        "blackjack",
        "cliff-walking",
        "frozen-lake",
        "taxi",
    ):
        (row,) = (r for r in rows if name in r["aliases"])  # today's names are aliases of family/task names
        assert row["name"].endswith(f"/{name}")
        assert (row["installed"], row["extra"], row["install_command"]) == (True, None, None)
