"""What the HTML report adds to ``evoledger run``: its cost at the end of the default Run, as a ratio of the Run.

Run: ``python bench/report_bench.py [--seed 1] [--repeat 3] [--quick]``. For each repetition it times, as
subprocesses in the same minutes:

* ``evoledger run --seed S`` (the default CartPole Run, which writes ``host/report.html`` at its end), end to end;
* in a process that has imported what ``run`` has imported by then, writing ``host/report.html`` again as ``run``
  does (the Run's replay verdict included), and building the page alone without the audit;
* ``evoledger report RUN --out F`` from a cold start.

It prints the seconds and the ratio of the report's in-process cost to the whole Run. The machine is noisy: compare
the ratios, not the seconds. ``--quick`` (the test suite's smoke run) uses a 6-Episode Run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

_CLI = [sys.executable, "-c", "import sys; from evoledger.kernel.cli import main; sys.exit(main())"]
_QUICK_ARGS = ["--episode-budget", "6", "--validation-episodes", "1", "--assessment-episodes", "1"]
_WARM = """
import json, sys, time
from pathlib import Path
import evoledger.kernel.cli.run_command, evoledger.kernel.run  # what `run` has imported before its report
from evoledger.kernel.cli.run_report import report_html, write_host_report
run_dir = Path(sys.argv[1])
start = time.perf_counter()
write_host_report(run_dir)  # the first call also imports the exporter and replay, as `run` does
with_audit = time.perf_counter() - start
start = time.perf_counter()
report_html([run_dir], audit=False)
page_only = time.perf_counter() - start
print(json.dumps({"with_audit": with_audit, "page_only": page_only}))
"""


def _timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv[:4])} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return elapsed, done.stdout


def _once(seed: int, root: Path, quick: bool) -> dict[str, Any]:
    run_dir = root / "run"
    sizes = _QUICK_ARGS if quick else []
    run_time, _ = _timed([*_CLI, "run", "--seed", str(seed), *sizes, "--record-to", str(run_dir)], root)
    if not (run_dir / "host" / "report.html").is_file():
        raise SystemExit(f"evoledger run left no {run_dir}/host/report.html")
    _, out = _timed([sys.executable, "-c", _WARM, str(run_dir)], root)
    warm = json.loads(out.strip().splitlines()[-1])
    cold, _ = _timed([*_CLI, "report", str(run_dir), "--out", str(root / "report.html")], root)
    return {"run": run_time, **warm, "cold": cold, "bytes": (root / "report.html").stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a 6-Episode Run instead of the default (a smoke run)")
    args = parser.parse_args()
    what = "6-Episode" if args.quick else "default"
    table = Table(title=f"host/report.html at the end of evoledger run ({what} CartPole Run)")
    for column in ("seed", "run s", "report s (with audit)", "of the run", "page only s", "evoledger report s", "KiB"):
        table.add_column(column, justify="right")
    for k in range(args.repeat):
        root = Path(tempfile.mkdtemp(prefix="erb-", dir="/tmp"))  # short: Unix socket paths are limited
        try:
            r = _once(args.seed + k, root, args.quick)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        table.add_row(
            str(args.seed + k),
            f"{r['run']:.2f}",
            f"{r['with_audit']:.3f}",
            f"{r['with_audit'] / r['run']:.1%} of the run",
            f"{r['page_only']:.3f}",
            f"{r['cold']:.2f}",
            f"{r['bytes'] / 1024:.0f}",
        )
    Console(width=150).print(table)


if __name__ == "__main__":
    main()
