"""The Ray backend against the local executor, and the single-writer Host's recording ceiling.

Run: ``python bench/ray_bench.py [--episodes 200] [--workers 2] [--repeat 2]``. Everything is measured in this
one process and this one run, rounds interleaved (local, Ray, local, Ray, ...), so the ratios mean something on a
noisy machine; absolute figures do not.

* **Episodes/s** of :class:`LocalExecutor` and :class:`RayExecutor` with the same worker count on the same
  CartPole Episodes (a trivial Policy: short Episodes, so per-Episode costs dominate), and the **per-Episode
  overhead** of Ray: the extra worker-seconds per Episode, ``workers * (t_ray - t_local) / episodes``.
* **Ray task per Episode** (the design not taken): a Ray task that starts a one-worker LocalExecutor for its one
  Episode; its cost per Episode against the actor pool's.
* **The Host's ledger**: the Episodes recorded per second by one writer (the real trajectories of the run above,
  each stored as an Object with its ``episode-finished`` Event, one transaction per Episode, as the Host appends),
  so the Episodes/s at which a cluster would saturate the single-writer Host.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import ray
from evoledger.kernel.execution import EpisodeOutcome, EpisodeTask, LocalExecutor, PolicyLimits, RayExecutor
from evoledger.kernel.recording import outcome_events
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import EpisodeStarted, EventBase
from evoledger.ledger.store import Ledger
from rich.console import Console
from rich.table import Table

_EVALUATION = "evaluation-000001"
TRIVIAL = "def make_policy(context):\n    class P:\n        def act(self, o):\n            return 0\n    return P()\n"


def _tasks(program: Path, episodes: int) -> list[EpisodeTask]:
    specs = resolve_benchmark(BenchmarkRef(name="cartpole")).episodes("train", seed=7, count=episodes)
    return [EpisodeTask(episode=e, program_dir=program, policy_seed=e.index, limits=PolicyLimits()) for e in specs]


def _timed(executor: LocalExecutor | RayExecutor, tasks: list[EpisodeTask]) -> tuple[float, list[EpisodeOutcome]]:
    start = time.perf_counter()
    outcomes = list(executor.run(tasks))
    return time.perf_counter() - start, outcomes


def _one_episode_task(benchmark: dict[str, object], task_json: bytes, program: str) -> bytes:
    """The design not taken: one Ray task per Episode, which must start its own worker."""
    import dataclasses

    from evoledger.kernel.execution.messages import outcome_to_frame, task_from_json

    _, task = task_from_json(task_json)
    task = dataclasses.replace(task, program_dir=Path(program))
    with LocalExecutor(BenchmarkRef.model_validate(benchmark), workers=1, pin_cpus=False) as executor:
        (outcome,) = executor.run([task])
    return outcome_to_frame(outcome, 0)


def _task_variant(tasks: list[EpisodeTask], workers: int) -> float:
    """Seconds per Episode (worker-seconds) of the one-task-per-Episode design, on Ray's running instance."""
    from evoledger.kernel.execution.messages import task_to_json

    remote = ray.remote(num_cpus=1)(_one_episode_task)
    ref = BenchmarkRef(name="cartpole").model_dump(mode="json")
    start = time.perf_counter()
    ray.get([remote.remote(ref, task_to_json(t, 0), str(t.program_dir)) for t in tasks])
    return workers * (time.perf_counter() - start) / len(tasks)


def _ledger_rate(outcomes: list[EpisodeOutcome], rounds: int, per_append: int) -> tuple[float, float]:
    """(Episodes/s, appends/s) recorded by one writer: ``episode-started`` and ``episode-finished`` with the trajectory
    Object, as ``evaluate`` appends them, ``per_append`` Episodes per transaction (the Host appends one)."""
    best_episodes = best_appends = 0.0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="ray-bench-ledger-") as tmp, Ledger.create(Path(tmp) / "r") as ledger:
            appends = 0
            start = time.perf_counter()
            for first in range(0, len(outcomes), per_append):
                batch: list[EventBase] = []
                for outcome in outcomes[first : first + per_append]:
                    batch.append(EpisodeStarted(evaluation_id=_EVALUATION, split=outcome.split, index=outcome.index))
                    batch += outcome_events(outcome, ledger.objects, evaluation_id=_EVALUATION)
                ledger.append(batch)
                appends += 1
            seconds = time.perf_counter() - start
        best_episodes = max(best_episodes, len(outcomes) / seconds)
        best_appends = max(best_appends, appends / seconds)
    return best_episodes, best_appends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--task-episodes", type=int, default=4, help="Episodes for the task-per-Episode variant (0: skip it)."
    )
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory(prefix="ray-bench-") as tmp:
        program = Path(tmp) / "program"
        program.mkdir()
        (program / "policy.py").write_text(TRIVIAL, encoding="utf-8")
        tasks = _tasks(program, args.episodes)
        ref = BenchmarkRef(name="cartpole")
        started = time.perf_counter()
        local = LocalExecutor(ref, workers=args.workers)
        local_start = time.perf_counter() - started
        started = time.perf_counter()
        ray_dir = tempfile.mkdtemp(prefix="evoledger-ray-", dir="/tmp")
        # Started here rather than by RayExecutor, with room for the task-per-Episode variant beside the actors.
        ray.init(
            num_cpus=2 * args.workers,
            include_dashboard=False,
            log_to_driver=False,
            _temp_dir=ray_dir,
            logging_level="ERROR",
        )
        ray_start = time.perf_counter() - started
        started = time.perf_counter()
        remote = RayExecutor(ref, workers=args.workers)
        actors_start = time.perf_counter() - started
        with local, remote:
            _timed(local, tasks[: args.workers])  # warm both once: first-Episode costs are start-up, not per Episode
            _timed(remote, tasks[: args.workers])
            times: dict[str, list[float]] = {"local": [], "ray": []}
            kept: list[EpisodeOutcome] = []
            for _ in range(args.repeat):
                seconds, local_outcomes = _timed(local, tasks)
                times["local"].append(seconds)
                seconds, ray_outcomes = _timed(remote, tasks)
                times["ray"].append(seconds)
                same = [digest_of(o.trajectory or b"") for o in local_outcomes] == [
                    digest_of(o.trajectory or b"") for o in ray_outcomes
                ]
                if not same:
                    raise SystemExit("the Ray backend's trajectories differ from the local executor's")
                kept = local_outcomes
            task_seconds = _task_variant(tasks[: args.task_episodes], args.workers) if args.task_episodes else None
        ray.shutdown()
        shutil.rmtree(ray_dir, ignore_errors=True)
        episodes_per_s, appends_per_s = _ledger_rate(kept, args.repeat, 1)
        batched_per_s, _ = _ledger_rate(kept, args.repeat, 16)

    n, w = args.episodes, args.workers
    table = Table(title=f"{n} CartPole Episodes (trivial Policy), {w} workers, best of {args.repeat} rounds")
    for column in ("backend", "start-up s", "Episodes/s", "worker-ms/Episode", "vs local"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    best_local, best_ray = min(times["local"]), min(times["ray"])
    per_local, per_ray = w * best_local / n * 1000, w * best_ray / n * 1000
    table.add_row("local", f"{local_start:.2f}", f"{n / best_local:.1f}", f"{per_local:.2f}", "1.00x")
    table.add_row(
        "ray (actors)",
        f"{ray_start:.2f} + {actors_start:.2f}",
        f"{n / best_ray:.1f}",
        f"{per_ray:.2f}",
        f"{best_ray / best_local:.2f}x",
    )
    if task_seconds is not None:
        table.add_row(
            "ray (task per Episode)",
            "",
            f"{w / task_seconds:.1f}",
            f"{task_seconds * 1000:.1f}",
            f"{task_seconds * 1000 / per_local:.1f}x",
        )
    console.print(table)
    console.print(
        f"Ray per-Episode overhead: {per_ray - per_local:.2f} worker-ms per Episode "
        f"({best_ray / best_local:.2f}x the local executor's time)"
    )
    console.print(
        f"Host ledger: {episodes_per_s:.0f} Episodes/s recorded by the single writer, one Episode per append "
        f"({appends_per_s:.0f} appends/s); {batched_per_s:.0f} Episodes/s with 16 Episodes per append"
    )
    console.print(
        f"The Host saturates at about {episodes_per_s * per_local / 1000:.1f} workers of Episodes of "
        f"{per_local:.1f} worker-ms (Episodes of T worker-seconds: {episodes_per_s:.0f} * T workers)"
    )


if __name__ == "__main__":
    main()
