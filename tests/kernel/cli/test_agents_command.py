"""`evoledger agents` and `--agent-option`: installed programs and versions (never hanging), one-line option errors."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import agents_command, cli
from evoledger.kernel.cli.agent_options import apply_agent_options
from evoledger.ledger.errors import ConfigError


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_agents_lists_every_adapter_with_its_program_version_and_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _script(tmp_path, "codex", "print('codex-cli 0.99.0')\n")
    # a CLI that never answers --version, and whose child keeps its output open: it must not hang the listing
    _script(tmp_path, "claude", "import subprocess, time\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)\n")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), os.environ.get("PATH", "")]))
    monkeypatch.setattr(agents_command, "VERSION_TIMEOUT_SECONDS", 0.5)
    began = time.monotonic()
    result = CliRunner().invoke(cli, ["agents", "--json"])
    assert time.monotonic() - began < 30  # the hanging CLI was ended, not waited for (generous under load)
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert {"baseline", "claude-code", "codex", "hill-climb", "kimi-code", "qoder"} <= set(rows)
    assert rows["codex"]["found"] == str(tmp_path / "codex")
    assert rows["codex"]["version"] == "codex-cli 0.99.0"
    assert rows["codex"]["transcript"] == "codex-json"
    assert "OPENAI_API_KEY" in rows["codex"]["authenticate"]
    assert rows["claude-code"]["found"] == str(tmp_path / "claude")
    assert rows["claude-code"]["version"] is None
    assert "ANTHROPIC_API_KEY" in rows["claude-code"]["authenticate"]
    assert "QODER_PERSONAL_ACCESS_TOKEN" in rows["qoder"]["authenticate"]
    assert rows["baseline"]["kind"] == "built-in"
    table = CliRunner().invoke(cli, ["agents", "kimi-code"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "kimi-code" in table.output
    assert "not found" in table.output


def test_agents_takes_the_configured_executable(tmp_path: Path) -> None:
    fake = _script(tmp_path, "my-qoder", "print('qodercli 1.2.3')\n")
    result = CliRunner().invoke(cli, ["agents", "qoder", "--agent-option", f"executable={fake}", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert (row["program"], row["found"], row["version"]) == (str(fake), str(fake), "qodercli 1.2.3")
    missing = CliRunner().invoke(cli, ["agents", "qoder", "--agent-option", "executable=/nope/qodercli", "--json"])
    assert json.loads(missing.output)[0]["found"] is None


def test_agent_option_errors_name_the_key_the_closest_one_and_every_valid_one() -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'efort' \(did you mean 'effort'\?\); valid keys: effort, "):
        apply_agent_options({}, ["efort=high"])
    with pytest.raises(ConfigError, match="is not KEY=VALUE"):
        apply_agent_options({}, ["effort"])
    with pytest.raises(ConfigError, match="view_image takes true or false, got 'maybe'"):
        apply_agent_options({}, ["view_image=maybe"])
    with pytest.raises(ConfigError, match="model needs a value"):
        apply_agent_options({}, ["model="])
    options = apply_agent_options({"args": ("--a",)}, ["extra_args=--b 'c d'", "view_image=yes", "effort=low"])
    assert options == {"args": ("--a", "--b", "c d"), "view_image": True, "effort": "low"}


def test_run_refuses_a_bad_agent_option_before_anything_is_created(cwd: Path) -> None:
    typo = CliRunner().invoke(cli, ["run", "--agent", "codex", "--agent-option", "efort=high", "--record-to", "r"])
    assert typo.exit_code == 2
    assert "did you mean 'effort'" in typo.output
    wrong = CliRunner().invoke(
        cli, ["run", "--agent", "kimi-code", "--agent-option", "effort=high", "--record-to", "r"]
    )
    assert wrong.exit_code == 2
    assert "'kimi-code' takes no option 'effort'" in wrong.output
    assert "its options: executable, home" in wrong.output
    assert not (cwd / "r").exists()
