"""``evoledger evaluate``'s start: its workers start first, so what the caller finds wrong must stay its own message.

The Benchmark is built once in the calling process, with or without a PROGRAM argument: counted through the real CLI
with a Benchmark given by import string that writes the pid of every process that builds it (the workers build their
own copy, in their own processes). A mistake the caller reports (an unknown Benchmark, a wrong ``--set``) is the
whole output: the workers it started meanwhile, which meet the same mistake, end without a word. The caller's own
numpy starts single-threaded, like the workers' (a BLAS thread pool cost tens of ms at import, for nothing).
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-b", "cartpol"], "Did you mean 'classic-control/cartpole'"),
        (["-b", "frozen-lake", "--set", "map_name=9x9"], "--set map_name=9x9"),
    ],
    ids=["unknown-benchmark", "wrong-setting"],
)
def test_a_mistake_found_at_start_is_reported_once_without_a_worker_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    argv = [sys.executable, "-c", _CLI, "evaluate", *args, "-n", "1", "-w", "2"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("error:") == 1, done.stderr


_EVALUATE_THEN_COUNT_THREADS = """
import contextlib, json, os, sys
from evoledger.kernel.cli import main
sys.argv = ["evoledger", "evaluate", "-n", "1", "--isolation", "local", "--json"]
with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):
    main()
report = {"threads": len(os.listdir("/proc/self/task")), "numpy": "numpy" in sys.modules}
report["environment"] = {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
print(json.dumps(report))
"""


def test_the_callers_numpy_starts_without_a_thread_pool_and_its_environment_is_left_as_it_was(tmp_path: Path) -> None:
    threads = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in threads}
    argv = [sys.executable, "-c", _EVALUATE_THEN_COUNT_THREADS]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert '"episodes"' in done.stderr  # the evaluation ran (its JSON went to stderr here)
    report = json.loads(done.stdout)
    assert report["numpy"] is True
    assert report["threads"] == 1  # OpenBLAS starts a thread per further CPU unless told otherwise
    assert report["environment"] == {"OPENBLAS_NUM_THREADS": None, "OMP_NUM_THREADS": None}
