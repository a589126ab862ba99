"""Export benchmark: steps written per second and peak memory, against pyarrow writing the same table.

Run: ``python bench/export_bench.py [--steps 100000 1000000] [--episode-steps 200]``.

For each size a synthetic CartPole-shaped Run is written (float32 observations of 4 numbers, Discrete
actions, ``--episode-steps`` steps per Episode, 50 Episodes per Submission). Each export then runs in a
fresh child process, which reports:

* ``export``: ``export_dataset(..., configs=["steps"])`` end to end (reading the log, decoding the
  trajectory Objects, building Arrow batches, writing zstd Parquet), and its peak RSS;
* ``direct``: in the same child, afterwards, pyarrow writing the very table the export produced
  (already in memory, same compression and row-group size) with ``pq.write_table`` -- the floor for
  the Parquet part alone.

Peak RSS is the child's ``ru_maxrss`` right after the export, before the table is read back; a flat
figure from 1e5 to 1e6 steps shows the export streams instead of materialising rows.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    AgentStarted,
    BenchmarkIdentity,
    EpisodeFinished,
    EventBase,
    FeedbackPublished,
    ProgramSnapshotted,
    RunCreated,
    SubmissionAccepted,
)
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory, encode_trajectory
from rich.console import Console
from rich.table import Table

_EPISODES_PER_SUBMISSION = 50
_SPEC = {
    "id": "cartpole",
    "score_direction": "maximize",
    "observation_space": {"type": "Box", "shape": [4], "dtype": "float32", "low": [None] * 4, "high": [None] * 4},
    "action_space": {"type": "Discrete", "n": 2, "start": 0},
}


def write_run(run_dir: Path, steps: int, episode_steps: int, seed: int = 0) -> None:
    """A synthetic Run with ``steps`` steps in Episodes of ``episode_steps`` steps."""
    rng = np.random.default_rng(seed)
    episodes = max(1, steps // episode_steps)
    with Ledger.create(run_dir) as ledger:
        put = ledger.objects.put
        task = f"# bench task\n\n```json\n{json.dumps(_SPEC)}\n```\n".encode()
        policy = put(b"def make_policy(context):\n    return None\n")
        head: list[EventBase] = [
            RunCreated(
                run_id=run_dir.name,
                benchmark=BenchmarkIdentity.of("cartpole", {}),
                episode_budget=episodes,
                max_submissions=episodes,
                pool_commitment=digest_of(b"pool"),
                seed=0,
                created_by="export_bench",
            ),
            AgentStarted(agent="bench", command=("bench",), pid=1, task_digest=put(task)),
        ]
        ledger.append(head)
        budget = episodes
        for number, first in enumerate(range(0, episodes, _EPISODES_PER_SUBMISSION), start=1):
            count = min(_EPISODES_PER_SUBMISSION, episodes - first)
            sid = f"submission-{number:06d}"
            program = digest_of(f"program-{number}".encode())
            with ledger.transaction():
                events: list[EventBase] = [
                    ProgramSnapshotted(
                        program_digest=program,
                        files={"policy.py": policy},
                        entry_point="policy.py",
                        file_count=1,
                        total_bytes=40,
                        source="initial" if number == 1 else "submission",
                    ),
                    SubmissionAccepted(
                        submission_id=sid,
                        program_digest=program,
                        episodes=list(range(count)),
                        budget_before=budget,
                        budget_after=budget - count,
                        submissions_used=number,
                    ),
                ]
                budget -= count
                for index in range(count):
                    observations = rng.standard_normal((episode_steps + 1, 4)).astype(np.float32).tolist()
                    actions = rng.integers(0, 2, episode_steps).tolist()
                    trajectory = Trajectory(observations, actions, [1.0] * episode_steps, True, False)
                    events.append(
                        EpisodeFinished(
                            submission_id=sid,
                            split="train",
                            index=index,
                            status="ok",
                            episode_return=float(episode_steps),
                            steps=episode_steps,
                            terminated=True,
                            truncated=False,
                            trajectory_digest=put(encode_trajectory(trajectory)),
                            duration_ms=1,
                        )
                    )
                events.append(
                    FeedbackPublished(
                        submission_id=sid,
                        score=float(episode_steps),
                        content_digest=put(canonical_json({"submission": number})),
                        budget_used=episodes - budget,
                        budget_left=budget,
                    )
                )
                ledger.append(events)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(run_dir: Path, out: Path) -> dict[str, Any]:
    """Export ``run_dir`` into ``out``, then time pyarrow writing the same table directly."""
    import evoledger.exporters.hf_export  # noqa: F401  (warm the lazy imports: time the export, not imports)
    import pyarrow.parquet as pq
    from evoledger.exporters import export_dataset

    baseline = _peak_rss_mib()
    began = time.perf_counter()
    report = export_dataset([run_dir], out, configs=["steps"])
    export_seconds = time.perf_counter() - began
    export_rss = _peak_rss_mib()
    path = out / "steps" / "train-00000-of-00001.parquet"
    metadata = pq.read_metadata(path)
    table = pq.read_table(path)
    direct = out.parent / "direct.parquet"
    began = time.perf_counter()
    pq.write_table(
        table, direct, compression="zstd", compression_level=3, row_group_size=metadata.row_group(0).num_rows
    )
    direct_seconds = time.perf_counter() - began
    return {
        "steps": report.steps,
        "export_seconds": export_seconds,
        "direct_seconds": direct_seconds,
        "rss_before_mib": baseline,
        "peak_rss_mib": export_rss,
        "file_bytes": path.stat().st_size,
        "row_groups": metadata.num_row_groups,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--episode-steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="Exports per size (the median is reported).")
    args = parser.parse_args()
    console = Console(width=160)
    table = Table(title=f"evoledger export (steps config, {args.episode_steps}-step Episodes, median of {args.repeat})")
    for column in (
        "steps",
        "export s",
        "export steps/s",
        "pyarrow direct s",
        "direct rows/s",
        "export / direct",
        "peak RSS MiB",
        "Parquet MiB",
    ):
        table.add_column(column, justify="right")
    root = Path(tempfile.mkdtemp(prefix="evx-bench-", dir="/tmp"))
    try:
        for steps in args.steps:
            run_dir = root / f"run-{steps}"
            began = time.perf_counter()
            write_run(run_dir, steps, args.episode_steps)
            console.print(f"wrote a {steps}-step Run in {time.perf_counter() - began:.1f} s")
            results = []
            for attempt in range(args.repeat):
                out = root / f"out-{steps}-{attempt}"
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(run_dir), str(out)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                results.append(json.loads(done.stdout.strip().splitlines()[-1]))
                shutil.rmtree(out)
            results.sort(key=lambda r: r["export_seconds"])
            mid = results[len(results) // 2]
            direct = sorted(r["direct_seconds"] for r in results)[len(results) // 2]
            table.add_row(
                f"{mid['steps']:,}",
                f"{mid['export_seconds']:.2f}",
                f"{mid['steps'] / mid['export_seconds']:,.0f}",
                f"{direct:.3f}",
                f"{mid['steps'] / direct:,.0f}",
                f"{mid['export_seconds'] / direct:.1f}x",
                f"{max(r['peak_rss_mib'] for r in results):.0f} (start {mid['rss_before_mib']:.0f})",
                f"{mid['file_bytes'] / 2**20:.1f}",
            )
            shutil.rmtree(run_dir)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    console.print(table)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), Path(sys.argv[3]))))
    else:
        main()
