"""A sweep of 8 small Runs with ``--parallel 2`` against the same 8 Runs one after another, measured in the same run.

Run: ``python bench/sweep_bench.py [--repeat 2] [--budget 4] [--quick] [--no-ray]``. The sweep file is 2 Benchmarks
(``toy/counter``, ``toy/continuous``) x 2 built-in Agents (``baseline``, ``hill-climb``) x 2 seeds, each Run
``--workers 1`` with ``local`` isolation, so that only the number of Runs at once differs. For each repetition,
interleaved, it times as subprocesses:

* ``evoledger sweep --parallel 2`` (8 Runs, two at a time, each in its own process);
* ``evoledger sweep --parallel 1`` (the same 8 Runs one after another, through the sweep);
* ``evoledger sweep --parallel 2 --backend ray`` (the same 8 Runs, each placed on a node of a private local Ray
  instance the sweep starts, two at a time: its time includes Ray's start and the storage probe), when Ray is
  installed and unless ``--no-ray``;
* the same 8 ``evoledger run`` commands one after another in a shell-like loop (no sweep at all): the sweep's own cost.

It prints each wall time and the ratios, and the CPU time of the sweep process itself (its start-up, the checks of
the sweep file and the polling of each Run's ledger; its Runs' processes are not counted), which load does not
inflate as it does wall times. The machine is noisy and shared: compare the ratios, not the seconds, and run
it a few times. ``--quick`` (the test suite's smoke run) sweeps 2 Runs (one Benchmark, one seed) with a budget of 2
and leaves out the plain ``evoledger run`` loop.

Measured (``--repeat 2``, 2 CPUs shared with other sessions: no quiet machine was to be had), medians:

* load average 3-15 (rising during the run): ``--parallel 2`` 31.2 s, ``--backend ray`` 71.3 s (2.29x the time),
  ``--parallel 1`` 38.1 s;
* load average 15-24: ``--parallel 2`` 45.4 s, ``--backend ray`` 60.7 s (1.34x the time), ``--parallel 1`` 83.9 s;
* load average 12-17: ``--parallel 2`` 34.8 s, ``--backend ray`` 57.9 s (1.66x the time; its rounds 2.75x and
  1.07x), ``--parallel 1`` 69.6 s.

Placing 8 small Runs on a one-machine Ray instance costs its start, the storage probe and a Ray task per Run: the
ratio is that overhead against Runs of a few seconds. It moved between 1.1x and 2.8x from round to round with the
other sessions' load, as the ``--parallel 2`` / ``--parallel 1`` ratio did (1.0x to 3.1x); a quiet machine would pin
it down better.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CLI = [sys.executable, "-m", "evoledger"]

SWEEP = """\
[sweep]
name = "bench"
seeds = {seeds}

[run]
episode_budget = {budget}
validation = {{ episodes = 1 }}
assessment = {{ episodes = 2 }}
workers = 1
isolation = "local"
agent_isolation = "local"

{benchmarks}
[[agent]]
name = "baseline"

[[agent]]
name = "hill-climb"
"""


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv[2:])} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return elapsed


def _own_cpu(pid: int) -> float | None:
    """The CPU seconds process ``pid`` itself has used (not its children), from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sweep(root: Path, parallel: int, tag: str, own: list[float], *extra: str) -> float:
    """The sweep's wall time; its own CPU time (the sweep process alone, without its Runs) is appended to ``own``."""
    argv = [*_CLI, "sweep", "sweep.toml", "--out", f"out-{tag}", "--parallel", str(parallel), "-q", *extra]
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    cpu = 0.0
    while process.poll() is None:
        cpu = _own_cpu(process.pid) or cpu
        time.sleep(0.05)
    elapsed = time.perf_counter() - start
    stderr = process.stderr.read() if process.stderr is not None else ""
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv[2:])} failed ({process.returncode}):\n{stderr[-3000:]}")
    own.append(cpu)
    return elapsed


def _plain_runs(root: Path, benchmarks: list[str], seeds: list[int], budget: int, tag: str) -> float:
    start = time.perf_counter()
    for benchmark in benchmarks:
        for agent in ("baseline", "hill-climb"):
            for seed in seeds:
                record = root / f"plain-{tag}" / f"{benchmark.replace('/', '-')}--{agent}--seed-{seed}"
                _timed(
                    [
                        *_CLI,
                        "run",
                        benchmark,
                        "--agent",
                        agent,
                        "--seed",
                        str(seed),
                        "--episode-budget",
                        str(budget),
                        "--validation-episodes",
                        "1",
                        "--assessment-episodes",
                        "2",
                        "--workers",
                        "1",
                        "--isolation",
                        "local",
                        "--agent-isolation",
                        "local",
                        "--record-to",
                        str(record),
                        "--json",
                        "-q",
                    ],
                    root,
                )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--budget", type=int, default=4, help="Episode budget of each Run")
    parser.add_argument("--quick", action="store_true", help="2 Runs, budget 2, no plain loop, no Ray: the smoke run")
    parser.add_argument("--no-ray", action="store_true", help="leave out the sweep placed on Ray")
    args = parser.parse_args()
    on_ray = not (args.quick or args.no_ray) and importlib.util.find_spec("ray") is not None
    seeds = [0] if args.quick else [0, 1]
    benchmarks = ["toy/counter"] if args.quick else ["toy/counter", "toy/continuous"]
    budget = 2 if args.quick else args.budget
    runs = 2 * len(benchmarks) * len(seeds)
    root = Path(tempfile.mkdtemp(prefix="evsb-", dir="/tmp"))
    try:
        tables = "".join(f'[[benchmark]]\nname = "{name}"\n\n' for name in benchmarks)
        (root / "sweep.toml").write_text(SWEEP.format(seeds=seeds, budget=budget, benchmarks=tables))
        times: dict[str, list[float]] = {"parallel 2": [], "parallel 1": [], "plain runs": [], "ray 2": []}
        own: list[float] = []
        for n in range(args.repeat):
            times["parallel 2"].append(_sweep(root, 2, f"p2-{n}", own))
            times["parallel 1"].append(_sweep(root, 1, f"p1-{n}", own))
            if on_ray:
                times["ray 2"].append(_sweep(root, 2, f"r2-{n}", [], "--backend", "ray"))
            if not args.quick:
                times["plain runs"].append(_plain_runs(root, benchmarks, seeds, budget, str(n)))
            p2_n, p1_n = times["parallel 2"][-1], times["parallel 1"][-1]
            plain_text = f", {runs} x evoledger run {times['plain runs'][-1]:.1f} s" if times["plain runs"] else ""
            ray_n = times["ray 2"][-1] if times["ray 2"] else None
            ray_text = f", placed on Ray {ray_n:.1f} s ({ray_n / p2_n:.2f}x --parallel 2)" if ray_n else ""
            print(
                f"round {n + 1}: --parallel 2 {p2_n:.1f} s, --parallel 1 {p1_n:.1f} s ({p1_n / p2_n:.2f}x)"
                f"{ray_text}{plain_text}"
            )
        p2, p1 = (statistics.median(times[k]) for k in ("parallel 2", "parallel 1"))
        print(f"{runs} Runs, budget {budget}, {os.cpu_count()} CPUs, medians over {args.repeat} round(s):")
        print(f"  --parallel 2 / one after another: {p1 / p2:.2f}x faster ({p2:.1f} s vs {p1:.1f} s)")
        print(f"  the sweep process's own CPU: {min(own):.2f}-{max(own):.2f} s per sweep of {runs} Runs (without them)")
        if times["ray 2"]:
            ray2 = statistics.median(times["ray 2"])
            print(
                f"  --parallel 2 --backend ray / --parallel 2 local: {ray2 / p2:.2f}x the time ({ray2:.1f} s vs "
                f"{p2:.1f} s; Ray's start and the storage probe included)"
            )
        if times["plain runs"]:
            plain = statistics.median(times["plain runs"])
            ratio = p1 / plain
            print(f"  sweep --parallel 1 / {runs} x evoledger run: {ratio:.2f}x the time ({p1:.1f} s vs {plain:.1f} s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
