"""Visual evidence: contact sheets of re-simulated training Episodes, fail-soft, bounded and deterministic."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from evoledger.benchmarks.classic_control import CartPole, make_cartpole
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymEnvironment, GymTask
from evoledger.benchmarks.visual_evidence import (
    MAX_FRAMES,
    VisualEvidence,
    add_visual_evidence,
    sample_steps,
)
from evoledger.kernel.authoring import EpisodeRecord, EpisodeSpec, Step, Trajectory
from evoledger.kernel.authoring.conformance_episodes import jsonable
from evoledger.kernel.cli import cli
from evoledger.kernel.run.records import records_from_views
from evoledger.ledger import Ledger
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import ConfigError
from evoledger.ledger.events import EpisodePlanned, FeedbackPublished
from evoledger.projections.run_state import fold
from evoledger.tests.support.rendered_benchmarks import make_rendered_cartpole
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

EVIDENCE = VisualEvidence(episodes=2, frames=8, tile_width=96)


def _rendered_cartpole(evidence: VisualEvidence = EVIDENCE) -> CartPole:
    return CartPole(dataclasses.replace(make_cartpole(max_episode_steps=60).task, visual_evidence=evidence))


def _play(benchmark: GymBenchmark, count: int, *, split: str = "train") -> list[EpisodeRecord]:
    """Records as the Host gives them to a Run's ``feedback()``: trajectory and Host-private spec attached."""
    records = []
    for spec in benchmark.episodes(split, seed=11, count=count):  # type: ignore[arg-type]
        env = benchmark.make_environment(spec)
        observation = env.reset()
        observations, actions, rewards = [jsonable(observation)], [], []
        step = None
        while step is None or not (step.terminated or step.truncated):
            action = _act(observation)
            step = env.step(action)
            observation = step.observation
            actions.append(jsonable(action))
            rewards.append(step.reward)
            observations.append(jsonable(observation))
        env.close()
        trajectory = Trajectory(observations, actions, rewards, step.terminated, step.truncated)
        records.append(
            EpisodeRecord(
                split=spec.split,
                index=spec.index,
                status="ok",
                episode_return=float(sum(rewards)),
                steps=len(actions),
                terminated=step.terminated,
                truncated=step.truncated,
                trajectory=trajectory,
                episode=spec,
            )
        )
    return records


def _act(observation: Any) -> Any:
    values = list(observation) if hasattr(observation, "__len__") else [observation]
    return int(values[2] + values[3] > 0) if len(values) == 4 else 0


def _sheets(feedback: Any) -> dict[str, bytes]:
    return {a.name: a.data for a in feedback.artifacts if a.name.startswith("frames/")}


def test_a_rendered_cartpole_feedback_carries_a_captioned_contact_sheet_per_episode() -> None:
    benchmark = _rendered_cartpole()
    records = _play(benchmark, 3)
    plain = make_cartpole(max_episode_steps=60).feedback(records)
    feedback = benchmark.feedback(records)
    sheets = _sheets(feedback)
    assert sorted(sheets) == ["frames/episode-0000.png", "frames/episode-0001.png"]  # episodes=2 of 3
    assert all(a.retention == "bulk" and a.media_type == "image/png" for a in feedback.artifacts if a.name in sheets)
    evidence = feedback.content["visual_evidence"]
    assert evidence["notes"] == []
    for record in records[:2]:
        steps = evidence["sheets"][f"frames/episode-{record.index:04d}.png"]["steps"]
        assert steps == list(sample_steps(record.steps, 8))
        image = Image.open(io.BytesIO(sheets[f"frames/episode-{record.index:04d}.png"]))
        assert image.format == "PNG"
        assert image.mode == "RGB"
        assert image.width <= 3 * (96 + 4)
        assert image.height <= 16 + 3 * (64 + 28)
        assert (
            len(np.unique(np.asarray(image).reshape(-1, 3), axis=0)) > 4
        )  # real pixels (cart, pole, captions), not a blank sheet
    # Everything else is the Feedback the Benchmark publishes without visual evidence.
    assert feedback.score == plain.score
    assert {k: v for k, v in feedback.content.items() if k != "visual_evidence"} == dict(plain.content)
    assert [a for a in feedback.artifacts if a.name not in sheets] == list(plain.artifacts)


def test_the_same_records_give_the_same_bytes() -> None:
    benchmark = _rendered_cartpole()
    records = _play(benchmark, 2)
    first, second = benchmark.feedback(records), _rendered_cartpole().feedback(records)
    assert _sheets(first)
    assert _sheets(first) == _sheets(second)
    assert first.content == second.content


@pytest.mark.filterwarnings("ignore:builtin type:DeprecationWarning")  # Box2D's SWIG import; as an error it crashes
def test_a_box2d_lunar_lander_renders_too() -> None:
    task = GymTask(
        benchmark_id="lander",
        gymnasium_id="LunarLander-v3",
        description="d",
        primary_metric="mean_return",
        score_rule="mean return",
        failure_return=-1000.0,
        max_episode_steps=40,
        visual_evidence=VisualEvidence(episodes=1, frames=6, tile_width=64),
    )
    benchmark = GymBenchmark(task)
    feedback = benchmark.feedback(_play(benchmark, 1))
    assert feedback.content["visual_evidence"]["notes"] == []
    assert Image.open(io.BytesIO(_sheets(feedback)["frames/episode-0000.png"])).width <= 3 * 68


def test_the_policy_s_environment_never_renders() -> None:
    benchmark = _rendered_cartpole()
    env = benchmark.make_environment(benchmark.episodes("train", seed=0, count=1)[0])
    try:
        assert env._env.render_mode is None  # only the Host's re-simulation copy is made with rgb_array
    finally:
        env.close()


def test_only_training_records_the_host_gave_a_spec_are_rendered() -> None:
    benchmark = _rendered_cartpole()
    plain = make_cartpole(max_episode_steps=60)
    validation = _play(benchmark, 1, split="validation")
    without_spec = [dataclasses.replace(r, episode=None) for r in _play(benchmark, 1)]
    for records in (validation, without_spec):
        feedback = benchmark.feedback(records)
        assert feedback.content == plain.feedback(records).content
        assert not _sheets(feedback)


class _Broken:
    """A rendering Environment whose renderer raises (as without pygame or OpenGL)."""

    def __init__(self, inner: GymEnvironment, error: Exception) -> None:
        self.inner, self.error = inner, error

    def reset(self) -> Any:
        return self.inner.reset()

    def step(self, action: Any) -> Step:
        return self.inner.step(action)

    def render(self) -> Any:
        raise self.error

    def close(self) -> None:
        self.inner.close()


def test_a_missing_renderer_is_a_note_not_a_fault_and_is_not_tried_again(tmp_path: Path) -> None:
    benchmark = make_cartpole(max_episode_steps=30)
    records = _play(benchmark, 2)
    base = benchmark.feedback(records)
    opened: list[EpisodeSpec] = []

    def broken(spec: EpisodeSpec) -> _Broken:
        opened.append(spec)
        inner = GymEnvironment(benchmark, spec, render_mode="rgb_array")
        return _Broken(inner, RuntimeError("an OpenGL platform library has not been loaded"))

    first = add_visual_evidence(base, records, EVIDENCE, broken, renderer=f"test-broken-{tmp_path.name}")
    again = add_visual_evidence(base, records, EVIDENCE, broken, renderer=f"test-broken-{tmp_path.name}")
    notes = first.content["visual_evidence"]["notes"]
    assert len(notes) == 1
    assert "rendering is unavailable here" in notes[0]
    assert "OpenGL" in notes[0]
    assert first.score == base.score
    assert not _sheets(first)
    assert again.content == first.content  # the same note, without touching the renderer again
    assert len(opened) == 1

    def no_pygame(spec: EpisodeSpec) -> GymEnvironment:
        raise ImportError("pygame is not installed, run `pip install gymnasium[classic-control]`")

    missing = add_visual_evidence(base, records, EVIDENCE, no_pygame, renderer=f"test-missing-{tmp_path.name}")
    assert "pygame is not installed" in missing.content["visual_evidence"]["notes"][0]


def test_a_resimulation_that_disagrees_with_the_record_publishes_no_frames() -> None:
    benchmark = _rendered_cartpole()
    record = _play(benchmark, 1)[0]
    assert record.trajectory is not None
    rewards = list(record.trajectory.rewards)
    rewards[3] = 2.0
    forged = dataclasses.replace(record, trajectory=dataclasses.replace(record.trajectory, rewards=rewards))
    observations = list(record.trajectory.observations)
    observations[-1] = [9.0, 9.0, 9.0, 9.0]
    moved = dataclasses.replace(record, trajectory=dataclasses.replace(record.trajectory, observations=observations))
    for bad, step in ((forged, 4), (moved, record.steps)):
        feedback = benchmark.feedback([bad])
        assert not _sheets(feedback)
        (note,) = feedback.content["visual_evidence"]["notes"]
        assert f"disagrees with the recorded trajectory at step {step}" in note


def test_the_step_budget_skips_an_episode_before_running_it() -> None:
    benchmark = _rendered_cartpole(VisualEvidence(episodes=2, frames=4, tile_width=64, max_steps=100))
    records = _play(benchmark, 2)
    assert records[0].steps <= 100 < records[0].steps + records[1].steps
    feedback = benchmark.feedback(records)
    assert list(_sheets(feedback)) == ["frames/episode-0000.png"]
    (note,) = feedback.content["visual_evidence"]["notes"]
    assert note.startswith("episode 1: not rendered")
    assert "re-simulation budget (100)" in note


@given(st.integers(0, 5_000), st.integers(3, MAX_FRAMES))
def test_sampled_steps_are_bounded_and_keep_reset_first_step_and_end(steps: int, frames: int) -> None:
    sampled = sample_steps(steps, frames)
    assert len(sampled) <= frames
    assert list(sampled) == sorted(set(sampled))
    assert sampled[0] == 0
    assert sampled[-1] == steps
    assert steps < 1 or 1 in sampled


@pytest.mark.parametrize(
    "settings",
    [{"frames": 43}, {"frames": 2}, {"episodes": 0}, {"tile_width": 10}, {"render_kwargs": {"render_mode": "human"}}],
)
def test_settings_out_of_bounds_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        VisualEvidence(**settings)


def test_a_run_publishes_the_contact_sheets_into_the_agent_s_feedback_folder(tmp_path: Path) -> None:
    args = ["run", "evoledger.tests.support.rendered_benchmarks:make_rendered_cartpole", "--set",
            "max_episode_steps=40", "--agent", "baseline", "--episode-budget", "2", "--validation-episodes", "0",
            "--assessment-episodes", "1", "--record-to", str(tmp_path / "run"), "--json"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    feedback = tmp_path / "run" / "workspace" / "feedback"
    pngs = sorted(feedback.glob("*/artifacts/frames/episode-*.png"))
    assert pngs, sorted(str(p.relative_to(feedback)) for p in feedback.rglob("*"))
    for png in pngs:
        with Image.open(png) as image:
            assert image.format == "PNG"
    documents = [json.loads(p.read_text()) for p in feedback.glob("*/feedback.json")]
    assert any(d["content"]["visual_evidence"]["sheets"] for d in documents), documents
    # Recomputed here, in another process, from the log alone: the same sheets, byte for byte.
    with Ledger.open(tmp_path / "run") as ledger:
        events = [r.event for r in ledger.events()]
        pool = [
            EpisodeSpec(split="train", index=e.index, seed=e.env_seed)
            for e in sorted((e for e in events if isinstance(e, EpisodePlanned) and e.split == "train"), key=_index)
        ]
        state = fold(events)
        benchmark = make_rendered_cartpole(max_episode_steps=40)
        for published in (e for e in events if isinstance(e, FeedbackPublished)):
            view = state.submissions[published.submission_id]
            finished = [(i, view.results[i]) for i in view.episodes if i in view.results]
            records = records_from_views("train", finished, ledger.objects, specs={i: pool[i] for i, _ in finished})
            recorded = {a.name: a.digest for a in published.artifacts if a.name.startswith("frames/")}
            assert recorded
            assert {name: digest_of(data) for name, data in _sheets(benchmark.feedback(records)).items()} == recorded


def _index(event: EpisodePlanned) -> int:
    return event.index


_MUJOCO_TWICE = """
import json, sys, warnings
warnings.simplefilter("ignore")
from evoledger.benchmarks.gym_adapter import GymBenchmark, GymTask
from evoledger.benchmarks.visual_evidence import VisualEvidence
from evoledger.kernel.authoring import EpisodeRecord, Trajectory
from evoledger.kernel.authoring.conformance_episodes import jsonable
task = GymTask(benchmark_id="cheetah", gymnasium_id="HalfCheetah-v5", description="d", primary_metric="m",
               score_rule="r", failure_return=-1000.0, max_episode_steps=3, visual_evidence=VisualEvidence(episodes=1))
benchmark = GymBenchmark(task)
spec = benchmark.episodes("train", seed=0, count=1)[0]
env = benchmark.make_environment(spec)
observations, actions, rewards = [jsonable(env.reset())], [], []
for _ in range(3):
    step = env.step([0.0] * 6)
    observations.append(jsonable(step.observation)); actions.append([0.0] * 6); rewards.append(step.reward)
env.close()
record = EpisodeRecord(split="train", index=0, status="ok", episode_return=sum(rewards), steps=3, terminated=False,
                       truncated=True, trajectory=Trajectory(observations, actions, rewards, False, True), episode=spec)
first, second = benchmark.feedback([record]), benchmark.feedback([record])
print(json.dumps([first.content["visual_evidence"], second.content["visual_evidence"]]))
"""


def test_mujoco_without_opengl_is_a_note_and_a_second_feedback_does_not_abort_the_process(tmp_path: Path) -> None:
    """MuJoCo aborts the whole process on a second GL start after a failed one: the Host must never try it again."""
    pytest.importorskip("mujoco")
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY")}
    done = subprocess.run(
        [sys.executable, "-c", _MUJOCO_TWICE],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
        cwd=tmp_path,  # MuJoCo writes MUJOCO_LOG.TXT into the working directory
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = json.loads(done.stdout.strip().splitlines()[-1])
    assert first == second
    if not first["sheets"]:  # no GL here (the usual headless case)
        (note,) = first["notes"]
        assert "rendering is unavailable here" in note
        assert "MUJOCO_GL=egl" in note
