"""The README's main job, ``evoledger run``, timed against two baselines measured in the same run.

Run: ``python bench/run_bench.py [--seed 1] [--repeat 3] [--quick]``. For each repetition it times, as subprocesses:

* ``evoledger run --seed S`` (the default CartPole Run with the built-in hill-climb Agent), end to end;
* ``python -c pass``, a bare interpreter start (the floor of any command);
* ``evoledger evaluate`` of the Program the Run selected, on as many Episodes as the Run played in all (its
  training Episodes, Validation and Assessment), i.e. the same stepping without the Agent and the Session.

It prints each wall time, the Run's ratio to the other two, the Assessment score, and how many submissions and
Episodes the Agent needed. The machine is noisy: compare the ratios, not the seconds, and run it a few times.
``--quick`` (the test suite's smoke run) times a 6-Episode Run with one Validation and one Assessment Episode instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig
from evoledger.ledger.events import SubmissionAccepted
from evoledger.ledger.snapshots import materialize_program
from evoledger.ledger.store import Ledger
from rich.console import Console
from rich.table import Table

_CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]


def _timed(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        output = done.stdout[-2000:] + done.stderr[-2000:]
        raise SystemExit(f"{' '.join(argv[3:])} failed ({done.returncode}):\n{output}")
    return elapsed


def _selected_program(run_dir: Path, selected: str, into: Path) -> None:
    with Ledger.open(run_dir) as book:
        for record in book.events():
            event = record.event
            if isinstance(event, SubmissionAccepted) and event.submission_id == selected:
                materialize_program(event.program_digest, book.objects, into)
                return
    raise SystemExit(f"{run_dir} records no submission {selected}")


_QUICK = RunConfig(episode_budget=6, validation=ValidationConfig(episodes=1), assessment=AssessmentConfig(episodes=1))
_QUICK_ARGS = ["--episode-budget", "6", "--validation-episodes", "1", "--assessment-episodes", "1"]


def _once(seed: int, root: Path, quick: bool) -> dict[str, Any]:
    bare = statistics.median(_timed([sys.executable, "-c", "pass"], root) for _ in range(5))
    run_dir = root / "run"
    sizes = _QUICK_ARGS if quick else []
    run_time = _timed([*_CLI, "run", "--seed", str(seed), *sizes, "--record-to", str(run_dir)], root)
    report = json.loads((run_dir / "host" / "report.json").read_text(encoding="utf-8"))
    defaults = _QUICK if quick else RunConfig()
    played = report["budget_used"] + defaults.validation.episodes * len(report["validation"])
    played += defaults.assessment.episodes
    program = root / "selected"
    _selected_program(run_dir, report["selected"], program)
    evaluate_time = _timed(
        [*_CLI, "evaluate", str(program), "--benchmark", "cartpole", "--episodes", str(played)], root
    )
    return {
        "run": run_time,
        "bare": bare,
        "evaluate": evaluate_time,
        "episodes": played,
        "assessment": report["assessment_score"],
        "submissions": len(report["submissions"]),
        "budget_used": report["budget_used"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a 6-Episode Run instead of the default (a smoke run)")
    args = parser.parse_args()
    what = "6-Episode" if args.quick else "default"
    table = Table(title=f"evoledger run ({what} CartPole Run, built-in hill-climb Agent)")
    for column in ("seed", "run s", "x python -c pass", "x evaluate (same Program, Episodes)", "assessment", "subs"):
        table.add_column(column, justify="right")
    for k in range(args.repeat):
        root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are limited
        try:
            r = _once(args.seed + k, root, args.quick)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        table.add_row(
            str(args.seed + k),
            f"{r['run']:.2f}",
            f"{r['run'] / r['bare']:.0f}x ({r['bare']:.3f} s)",
            f"{r['run'] / r['evaluate']:.2f}x ({r['evaluate']:.2f} s, {r['episodes']} Episodes)",
            f"{r['assessment']:.1f}",
            f"{r['submissions']} ({r['budget_used']} Episodes)",
        )
    Console(width=150).print(table)


if __name__ == "__main__":
    main()
