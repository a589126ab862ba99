"""Feedback stays small for image, dict and text observations: the bulk trace summarises what it cannot list."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from evoledger.benchmarks.feedback_summary import (
    MAX_TRACE_BYTES,
    MAX_TRACE_LINE_BYTES,
    TRACE_EPISODES,
    TRACE_TEXT_CHARS,
    summarize_episodes,
)
from evoledger.kernel.authoring import EpisodeRecord, Feedback
from evoledger.ledger.trajectories import Trajectory

STEPS = 50


def _feedback(observations: list[Any], actions: list[Any] | None = None, episodes: int = 4) -> Feedback:
    actions = actions if actions is not None else [0] * (len(observations) - 1)
    steps = len(actions)
    trajectory = Trajectory(observations, actions, [1.0] * steps, terminated=False, truncated=True)
    records = [
        EpisodeRecord("train", i, "ok", float(steps), steps, False, True, trajectory=trajectory)
        for i in range(episodes)
    ]
    return summarize_episodes(
        benchmark_id="toy/image",
        primary_metric="mean_return",
        score_rule="mean return",
        failure_return=0.0,
        records=records,
        outcome=lambda record: "truncated",
        notes=lambda record: {},
    )


def _trace(feedback: Feedback) -> list[dict[str, Any]]:
    (trace,) = [a for a in feedback.artifacts if a.name == "trace.jsonl"]
    return [json.loads(line) for line in trace.data.decode().splitlines()]


def _images(steps: int) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (96, 96, 3), dtype=np.uint8) for _ in range(steps + 1)]


def test_an_image_becomes_its_shape_dtype_and_mean() -> None:
    images = _images(STEPS)
    feedback = _feedback(images)
    lines = _trace(feedback)
    assert len(lines) == TRACE_EPISODES * (STEPS + 1)
    first = lines[0]["observation"]
    assert first["shape"] == [96, 96, 3]
    assert first["dtype"] == "uint8"
    assert abs(first["mean"] - float(images[0].mean())) < 1e-3
    assert (first["min"], first["max"]) == (0.0, 255.0)
    trace_bytes = sum(len(a.data) for a in feedback.artifacts if a.name == "trace.jsonl")
    assert trace_bytes < 200 * len(lines)  # about 150 bytes a step, not 27,648 numbers
    assert len(json.dumps(feedback.content)) < 5_000


def test_an_image_recorded_as_nested_lists_is_summarised_too() -> None:
    images = [image.tolist() for image in _images(3)]
    observation = _trace(_feedback(images, episodes=1))[0]["observation"]
    assert observation["shape"] == [96, 96, 3]
    assert "mean" in observation


def test_dicts_and_text_are_summarised_part_by_part() -> None:
    mission = "go to the red ball " * 100
    observation = {
        "image": np.zeros((16, 16, 3), dtype=np.uint8),
        "view": np.ones((7, 7, 3), dtype=np.uint8),
        "direction": 2,
        "mission": mission,
        "pair": (np.float32(0.5), [1, 2]),
    }
    action = {"dial": np.array([1, 2]), "word": "cab"}
    lines = _trace(_feedback([observation] * 3, [action] * 2, episodes=1))
    traced = lines[0]["observation"]
    assert traced["image"] == {"shape": [16, 16, 3], "dtype": "uint8", "mean": 0.0, "min": 0.0, "max": 0.0}
    assert traced["view"] == np.ones((7, 7, 3), dtype=int).tolist()  # small enough to list
    assert traced["direction"] == 2
    assert traced["pair"] == [0.5, [1, 2]]
    assert traced["mission"].startswith("go to the red ball")
    assert len(traced["mission"]) < TRACE_TEXT_CHARS + 40
    assert lines[0]["action"] == {"dial": [1, 2], "word": "cab"}


def test_the_trace_has_a_byte_bound_whatever_the_observations() -> None:
    many_parts = {f"part{i}": np.arange(60, dtype=np.float64) for i in range(200)}  # each part small, all large
    lines = _trace(_feedback([many_parts] * 4, episodes=1))
    assert all("observation" not in line and "omitted" in line for line in lines)
    assert lines[-1]["truncated"] is True
    long_line = {f"k{i}": "x" * 300 for i in range(80)}  # about 25 KB a line: the total bound stops the trace
    feedback = _feedback([long_line] * 2_001, episodes=TRACE_EPISODES)
    (trace,) = [a for a in feedback.artifacts if a.name == "trace.jsonl"]
    assert len(trace.data) <= MAX_TRACE_BYTES + (TRACE_EPISODES + 1) * MAX_TRACE_LINE_BYTES
    last = json.loads(trace.data.decode().splitlines()[-1])
    assert last["steps_omitted"] > 0


def test_small_observations_are_traced_as_before() -> None:
    observations = [np.array([0.5, -1.0, np.inf, 2.0], dtype=np.float32)] * 3
    lines = _trace(_feedback(observations, episodes=1))
    assert lines[0]["observation"] == [0.5, -1.0, None, 2.0]
    assert lines[0]["action"] == 0
