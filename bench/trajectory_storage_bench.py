"""Measure trajectory storage for image Episodes: format 2 (arrays raw, stacked per Episode) against format 1 (JSON).

Run with ``python bench/trajectory_storage_bench.py`` (``--steps`` per Episode, ``--episodes``; ``--quick`` for a
smoke run). Episodes are generated directly with the packages, random actions, observations as the Environments
return them:

* Crafter (``crafter.Env()``, 64x64x3 uint8 RGB, 17 discrete actions);
* CarRacing-v3 (gymnasium, 96x96x3 uint8 RGB, continuous ``[steer, gas, brake]`` actions).

Each Episode is recorded the way the worker records it (:class:`TrajectoryRecorder`, the observations' wire bytes
made first as the executor makes them), once as it is today (format 2) and once through format 1's path (the same
recorder with format 2 switched off, so format 1 is measured at its fastest, orjson included). Printed per family:
bytes per step of the raw Object and of the Object as stored (zstd level 3, the Object store's), zstd at level 19
for comparison (what compressing harder inside the Object would buy), encode and decode time per step, and the
ratios format 1 / format 2. Decoding format 2 includes materialising the stacked ``(T, H, W, C)`` array; format 1
is parsed with orjson (the exporters' reader), and its per-step lists made into one array too.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import numpy as np
import zstandard
from evoledger.exporters.trajectories import read_trajectory
from evoledger.kernel.execution import encode_wire, to_json_value, trajectory_recording
from evoledger.kernel.execution.trajectory_recording import TrajectoryRecorder
from evoledger.ledger.trajectories import decode_trajectory


def crafter_episode(steps: int, seed: int) -> Iterator[tuple[Any, Any, float]]:
    """``(observation, action, reward)`` per step of a random-action Crafter Episode (the last action is None)."""
    import crafter  # type: ignore[import-untyped]

    env = crafter.Env(seed=seed)
    rng = np.random.default_rng(seed)
    observation = env.reset()
    for _ in range(steps):
        action = int(rng.integers(env.action_space.n))
        yield observation, action, 0.0
        observation, _reward, done, _info = env.step(action)
        if done:
            break
    yield observation, None, 0.0


def car_racing_episode(steps: int, seed: int) -> Iterator[tuple[Any, Any, float]]:
    """``(observation, action, reward)`` per step of a random-action CarRacing-v3 Episode."""
    import gymnasium

    env = gymnasium.make("CarRacing-v3")
    env.action_space.seed(seed)
    observation, _ = env.reset(seed=seed)
    for _ in range(steps):
        action = env.action_space.sample()
        yield observation, to_json_value(action), 0.0
        observation, _reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    yield observation, None, 0.0
    env.close()


def _record(episode: list[tuple[Any, Any, float]], wires: list[bytes]) -> bytes:
    recorder = TrajectoryRecorder()
    actions: list[Any] = []
    rewards: list[float] = []
    for (observation, action, reward), wire in zip(episode, wires, strict=True):
        recorder.observe(observation, wire)
        if action is not None:
            actions.append(action)
            rewards.append(float(reward))
            recorder.add_metrics({})
    return recorder.encode(actions, rewards, terminated=False, truncated=True)


def _format_1(episode: list[tuple[Any, Any, float]], wires: list[bytes]) -> bytes:
    original = trajectory_recording._large
    trajectory_recording._large = lambda shape: False  # no array counts as large
    try:
        return _record(episode, wires)
    finally:
        trajectory_recording._large = original


def _timed(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - began)
    return min(times), result


def _decode_2(data: bytes) -> Any:
    return np.asarray(decode_trajectory(data).observations)


def _decode_1(data: bytes) -> Any:
    return np.asarray(read_trajectory(data).observations, dtype=np.uint8)


def measure(name: str, episodes: list[list[tuple[Any, Any, float]]], repeat: int) -> None:
    level3 = zstandard.ZstdCompressor(level=3)
    level19 = zstandard.ZstdCompressor(level=19)
    rows: dict[str, list[float]] = {}
    for episode in episodes:
        steps = len(episode) - 1
        wires = [encode_wire(observation) for observation, _, _ in episode]
        enc2, data2 = _timed(partial(_record, episode, wires), repeat)
        enc1, data1 = _timed(partial(_format_1, episode, wires), repeat)
        assert data2.startswith(b"evoledger.trajectory/2\n")
        assert data1.startswith(b'{"actions":')
        dec2, images2 = _timed(partial(_decode_2, data2), repeat)
        dec1, images1 = _timed(partial(_decode_1, data1), repeat)
        assert np.array_equal(images1, images2)
        for key, value in (
            ("raw1", len(data1)),
            ("raw2", len(data2)),
            ("zst1", len(level3.compress(data1))),
            ("zst2", len(level3.compress(data2))),
            ("z19_2", len(level19.compress(data2))),
            ("c3", _timed(partial(level3.compress, data2), 1)[0]),
            ("c19", _timed(partial(level19.compress, data2), 1)[0]),
            ("enc1", enc1),
            ("enc2", enc2),
            ("dec1", dec1),
            ("dec2", dec2),
        ):
            rows.setdefault(key, []).append(value / steps)
    m = {key: statistics.fmean(values) for key, values in rows.items()}
    pixels = episodes[0][0][0].nbytes
    print(f"\n{name}: {len(episodes)} Episode(s) of ~{len(episodes[0]) - 1} steps, {pixels} bytes of pixels per step")
    print(f"  bytes/step raw Object     format 1 {m['raw1']:>10,.0f}   format 2 {m['raw2']:>10,.0f}", end="")
    print(f"   ratio {m['raw1'] / m['raw2']:.1f}x")
    print(f"  bytes/step stored (zstd3) format 1 {m['zst1']:>10,.0f}   format 2 {m['zst2']:>10,.0f}", end="")
    print(f"   ratio {m['zst1'] / m['zst2']:.1f}x")
    print(
        f"  format 2 at zstd level 19 {m['z19_2']:>10,.0f} bytes/step ({m['zst2'] / m['z19_2']:.2f}x smaller than 3)",
        end="",
    )
    print(f", compressing at {m['c19'] * 1e6:,.0f} us/step against {m['c3'] * 1e6:,.0f} at level 3")
    print(
        f"  encode us/step            format 1 {m['enc1'] * 1e6:>10,.0f}   format 2 {m['enc2'] * 1e6:>10,.0f}", end=""
    )
    print(f"   ratio {m['enc1'] / m['enc2']:.0f}x")
    print(
        f"  decode us/step            format 1 {m['dec1'] * 1e6:>10,.0f}   format 2 {m['dec2'] * 1e6:>10,.0f}", end=""
    )
    print(f"   ratio {m['dec1'] / m['dec2']:.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one 50-step Episode per family, once")
    args = parser.parse_args()
    steps, count, repeat = (50, 1, 1) if args.quick else (args.steps, args.episodes, args.repeat)
    for name, make in (("Crafter (64x64x3)", crafter_episode), ("CarRacing-v3 (96x96x3)", car_racing_episode)):
        episodes = [list(make(steps, seed)) for seed in range(count)]
        measure(name, episodes, repeat)


if __name__ == "__main__":
    main()
