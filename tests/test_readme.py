"""The README's two set-up commands stay true: CI runs the test command verbatim, and the main job runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- setup-commands:.*?-->\s*```bash\n(.*?)```", text, re.S)
    assert match, "README.md lost its marked set-up block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m pip install -e . && evoledger ")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci.splitlines()
    assert "ruff check" in ci
    assert "mypy" in ci


def test_readme_main_command_runs(tmp_path: Path) -> None:
    """Execute the main job exactly as the README says (the install half is already done)."""
    main_job = _setup_commands()[0].split("&&", 1)[1].strip()
    argv = shlex.split(main_job)
    assert argv[0] == "evoledger"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "score" in done.stdout


def test_readme_example_policy_runs_and_balances_the_pole(tmp_path: Path) -> None:
    """The README's Policy Program block is a working Program (evaluated through the real stack)."""
    from evoledger.kernel.evaluation import EvaluationConfig, evaluate

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(def make_policy\(context\):.*?)```", text, re.S)
    assert block, "README.md lost its example Policy Program"
    program = tmp_path / "program"
    program.mkdir()
    (program / "policy.py").write_text(block.group(1), encoding="utf-8")
    result = evaluate(program, "cartpole", config=EvaluationConfig(episodes=3))
    assert result.failures == 0
    assert result.score is not None
    assert result.score > 400  # the heuristic in the README really balances the pole
