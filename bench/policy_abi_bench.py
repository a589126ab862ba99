"""What ``--policy-abi evopolicygym`` costs per step, against the default ABI measured in the same run.

Run with ``python bench/policy_abi_bench.py`` (``--episodes N --rounds R``). The same CartPole Policy (it indexes the
observation, which works for a numpy array and for EvoPolicyGym's list of floats alike) runs through
``LocalExecutor(workers=1)`` under each ABI, the two alternating round by round; the medians of steps/s and of the
Policy's wait per step are printed with their ratio. The default ABI's own per-step path is not touched by the
option (the conversions wrap ``act`` only when it is chosen); compare it with another checkout through
``bench/execution_bench.py --baseline DIR``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from evoledger.kernel.execution import EpisodeTask, LocalExecutor
from evoledger.kernel.registry import BenchmarkRef, resolve_benchmark

POLICY = """
def make_policy(context):
    class Policy:
        def act(self, observation):
            return 1 if observation[2] + 0.5 * observation[3] > 0 else 0

    return Policy()
"""


def _measure(policy_abi: str, tasks: list[EpisodeTask]) -> tuple[float, float]:
    """Steps/s and microseconds of Policy wait per step, Episodes after the first two (warm-up)."""
    with LocalExecutor(BenchmarkRef(name="cartpole"), workers=1, isolation="local", policy_abi=policy_abi) as executor:
        list(executor.run(tasks[:2]))
        began = time.perf_counter()
        outcomes = list(executor.run(tasks[2:]))
        elapsed = time.perf_counter() - began
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        raise SystemExit(f"benchmark Episodes failed under {policy_abi}: {bad[0].status}: {bad[0].failure_message}")
    steps = sum(o.steps for o in outcomes)
    return steps / elapsed, 1e6 * sum(o.policy_seconds for o in outcomes) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=12, help="Episodes per measurement (after 2 warm-up ones)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per ABI")
    args = parser.parse_args()
    program = Path(tempfile.mkdtemp(prefix="abi-bench-"))
    (program / "policy.py").write_text(POLICY, encoding="utf-8")
    episodes = resolve_benchmark(BenchmarkRef(name="cartpole")).episodes("train", seed=0, count=args.episodes + 2)
    tasks = [EpisodeTask(episode=e, program_dir=program, policy_seed=e.index) for e in episodes]
    figures: dict[str, list[tuple[float, float]]] = {"evoledger": [], "evopolicygym": []}
    for round_ in range(args.rounds):
        for abi in ("evoledger", "evopolicygym") if round_ % 2 == 0 else ("evopolicygym", "evoledger"):
            figures[abi].append(_measure(abi, tasks))
    medians = {
        abi: (statistics.median(s for s, _ in f), statistics.median(w for _, w in f)) for abi, f in figures.items()
    }
    for abi, (rate, wait) in medians.items():
        print(f"{abi:>13}: {rate:8.0f} steps/s, {wait:6.1f} us Policy wait per step (median of {args.rounds})")
    ratio = medians["evopolicygym"][0] / medians["evoledger"][0]
    print(f"evopolicygym / evoledger: {ratio:.2f}x steps/s")


if __name__ == "__main__":
    main()
