"""``evoledger evaluate`` builds its Benchmark once in the calling process, with or without a PROGRAM argument.

Counted through the real CLI: a Benchmark given by import string that writes the pid of every process that builds it
(the workers build their own copy, in their own processes; the caller must build it exactly once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_CLI = "from evoledger.kernel.cli import main; main()"

_COUNTING_BENCHMARK = """
import os
from evoledger.benchmarks.classic_control import make_cartpole

def make(**config):
    with open({log!r}, "a", encoding="utf-8") as log:
        log.write(f"{{os.getpid()}}\\n")
    return make_cartpole(**config)
"""


@pytest.mark.parametrize("with_program", [False, True], ids=["starting-program", "program-argument"])
def test_evaluate_builds_the_benchmark_once_in_the_caller(tmp_path: Path, with_program: bool) -> None:
    log = tmp_path / "built-by.txt"
    (tmp_path / "counting_benchmark.py").write_text(
        textwrap.dedent(_COUNTING_BENCHMARK.format(log=str(log))), encoding="utf-8"
    )
    program = tmp_path / "program"
    program.mkdir()
    (program / "policy.py").write_text(
        "def make_policy(context):\n    class P:\n        def act(self, o):\n            return 0\n    return P()\n",
        encoding="utf-8",
    )
    argv = [sys.executable, "-c", _CLI, "evaluate", *([str(program)] if with_program else [])]
    argv += ["-b", "counting_benchmark:make", "-n", "2", "--isolation", "local", "--json"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert [e["status"] for e in json.loads(out)["episodes"]] == ["ok", "ok"]
    builders = log.read_text(encoding="utf-8").split()
    assert builders.count(str(process.pid)) == 1, builders
    assert len(builders) == 2, builders  # the caller's copy and the one worker's
