"""``evoledger`` loads a command's module only when that command runs; ``--help`` lists them all from source."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.cli.main import COMMANDS

HEAVY = ("pydantic", "gymnasium", "numpy", "pandas", "sqlite_utils", "rich", "cryptography", "sqlite3", "zstandard")

_HELP_IN_A_FRESH_PROCESS = """
import contextlib, io, json, sys
from evoledger.kernel.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    sys.argv = ["evoledger", *sys.argv[1:]]
    main()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r} or m.startswith("evoledger.kernel.cli."))
print(json.dumps({{"help": out.getvalue(), "loaded": loaded}}))
"""


def _fresh(*args: str) -> dict[str, object]:
    code = _HELP_IN_A_FRESH_PROCESS.format(heavy=set(HEAVY))
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_help_imports_no_command_and_nothing_heavy() -> None:
    report = _fresh("--help")
    assert report["loaded"] == ["evoledger.kernel.cli.main"]
    for name in COMMANDS:
        assert f"\n  {name} " in str(report["help"]), name


def test_a_command_imports_only_its_own_module() -> None:
    report = _fresh("keys", "--help")
    assert "Usage: evoledger keys" in str(report["help"])
    commands = [m for m in report["loaded"] if m.endswith(("_command", "_commands"))]  # type: ignore[attr-defined]
    assert commands == ["evoledger.kernel.cli.keys_command"]


def test_help_lists_what_the_loaded_commands_say() -> None:
    """The one-line help read from source is the one click derives from each command once imported."""
    lazy = CliRunner().invoke(cli, ["--help"], terminal_width=100)
    assert lazy.exit_code == 0, lazy.output
    eager = click.Group("evoledger", context_settings={"help_option_names": ["-h", "--help"]})
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        eager.add_command(command, name)
    expected = CliRunner().invoke(eager, ["--help"], terminal_width=100)
    assert lazy.output.split("Commands:")[1] == expected.output.split("Commands:")[1]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_loads_and_has_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"], prog_name="evoledger")
    assert result.exit_code == 0, result.output
    assert f"Usage: evoledger {name}" in result.output


def test_an_unknown_command_is_still_refused() -> None:
    result = CliRunner().invoke(cli, ["evalute"])
    assert result.exit_code == 2
    assert "No such command 'evalute'" in result.output
