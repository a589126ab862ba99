"""``evoledger export`` through click: output, exit codes, and missing optional packages."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import export_command as export_module
from evoledger.kernel.cli.export_command import export_command
from evoledger.kernel.cli.main import cli


@pytest.fixture(scope="module")
def group() -> Iterator[click.Group]:
    """The real ``evoledger`` group (its error handling maps errors to exit codes) with ``export`` in it."""
    added = "export" not in cli.commands
    if added:
        cli.add_command(export_command)
    yield cli
    if added:
        cli.commands.pop("export", None)


@pytest.fixture
def small_run(synth: SimpleNamespace) -> Path:
    return synth.run(synth.Run("cli-run", [[synth.cartpole(3)], [synth.cartpole(2)]]))


def test_export_prints_a_json_report(group: click.Group, small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(group, ["export", str(small_run), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {c["name"]: c["rows"] for c in report["configs"]} == {
        "steps": 5,
        "episodes": 2,
        "submissions": 2,
        "messages": 1,
    }
    assert report["runs"][0]["run_id"] == "cli-run"
    assert (out / "README.md").is_file()


def test_export_prints_a_table_and_takes_comma_separated_configs(
    group: click.Group, small_run: Path, tmp_path: Path
) -> None:
    args = ["export", str(small_run), "--out", str(tmp_path / "o"), "--config", "steps,episodes", "--visibility", "all"]
    result = CliRunner().invoke(group, args)
    assert result.exit_code == 0, result.output
    assert "steps" in result.output
    assert "episodes" in result.output
    assert "messages" not in result.output
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["README.md", "episodes", "steps"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--config", "step"], 2, "Did you mean 'steps'?"),
        (["--reward", "best"], 2, "Invalid value for '--reward'"),
    ],
)
def test_bad_options(
    group: click.Group, small_run: Path, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = CliRunner().invoke(group, ["export", str(small_run), "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == code
    assert message in result.output


def test_missing_run_directory_exits_3(group: click.Group, tmp_path: Path) -> None:
    result = CliRunner().invoke(group, ["export", str(tmp_path / "absent"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 3
    assert "does not exist" in result.output


def test_non_empty_output_exits_2(group: click.Group, small_run: Path, tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("x")
    result = CliRunner().invoke(group, ["export", str(small_run), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--overwrite" in result.output


@pytest.mark.parametrize(
    ("missing", "fmt", "hint"),
    [("pyarrow", "hf", "pip install 'evoledger[export]'"), ("minari", "minari", "pip install 'evoledger[minari]'")],
)
def test_missing_optional_package_names_the_extra(
    group: click.Group,
    small_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    missing: str,
    fmt: str,
    hint: str,
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import <missing>` raise ImportError
    result = CliRunner().invoke(group, ["export", str(small_run), "--out", str(tmp_path / "o"), "--format", fmt])
    assert result.exit_code == 2
    assert hint in result.output
    assert not (tmp_path / "o").exists()


def test_the_command_loads_exporters_by_name_only() -> None:
    tree = ast.parse(Path(export_module.__file__).read_text(encoding="utf-8"))
    imported = [
        n.module if isinstance(n, ast.ImportFrom) else alias.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for alias in n.names
    ]
    assert not [name for name in imported if name and name.startswith("evoledger.exporters")]
    assert export_module.EXPORTER == "evoledger.exporters.dataset:export_dataset"
