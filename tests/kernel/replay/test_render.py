"""``evoledger replay RUN --render EPISODE --out F``: a recorded Episode re-executed, checked and drawn."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.kernel.registry import BenchmarkRef
from evoledger.kernel.replay import render as render_module
from evoledger.kernel.replay.frame_overlay import BAND_HEIGHT
from evoledger.kernel.replay.render import episodes_worth_rendering, render_recorded_episode
from evoledger.kernel.replay.render_frames import RenderMismatchError
from evoledger.kernel.replay.render_target import EpisodeNameError
from evoledger.kernel.run import AgentConfig, AssessmentConfig, RunConfig, ValidationConfig, run
from evoledger.ledger.errors import InputError, MissingExtraError

PIL = pytest.importorskip("PIL.Image")
HAS_FFMPEG = importlib.util.find_spec("imageio_ffmpeg") is not None


def _finished(run_dir: Path, split: str = "train") -> list[dict[str, Any]]:
    """The recorded ``episode-finished`` payloads of ``split`` (read straight from SQLite, not through our code)."""
    conn = sqlite3.connect(run_dir / "ledger.sqlite")
    try:
        kind = "validation-episode-finished" if split == "validation" else "episode-finished"
        rows = conn.execute("SELECT payload FROM events WHERE kind = ? ORDER BY seq", (kind,)).fetchall()
    finally:
        conn.close()
    return [p for p in (json.loads(r[0]) for r in rows) if p["split"] == split and p["status"] == "ok"]


def _env_seed(run_dir: Path, split: str, index: int) -> int:
    conn = sqlite3.connect(run_dir / "ledger.sqlite")
    try:
        rows = conn.execute("SELECT payload FROM events WHERE kind = 'episode-planned'").fetchall()
    finally:
        conn.close()
    return next(
        p["env_seed"] for p in map(json.loads, (r[0] for r in rows)) if (p["split"], p["index"]) == (split, index)
    )


def _gif_frames(path: Path) -> list[np.ndarray[Any, Any]]:
    frames = []
    with PIL.open(path) as image:
        for n in range(image.n_frames):
            image.seek(n)
            frames.append(np.asarray(image.convert("RGB"), dtype=np.int16))
    return frames


def test_cli_draws_a_cartpole_episode_that_matches_its_record(recorded_run: Path, replay_cli, tmp_path: Path) -> None:
    episode = min(_finished(recorded_run), key=lambda p: p["steps"])
    name = f"train/{episode['submission_id']}/{episode['index']}"
    out = tmp_path / "episode.gif"
    done = replay_cli(
        "replay", str(recorded_run), "--render", name, "--out", str(out), "--max-frames", "1000", "--json"
    )
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["matches_recording"] is True
    assert facts["trajectory_digest"] == episode["trajectory_digest"]
    assert (facts["episode"], facts["kind"], facts["media_type"]) == (name, "animation", "image/gif")
    frames = _gif_frames(out)
    assert len(frames) == facts["frames"] == episode["steps"] + 1  # the reset and every step
    # the first frame is the recorded reset state as CartPole draws it, with the caption band over its top
    import gymnasium

    env = gymnasium.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=_env_seed(recorded_run, "train", episode["index"]))
    raw = PIL.fromarray(env.render()).resize(frames[0].shape[1::-1], PIL.Resampling.BOX)
    env.close()
    raw_pixels = np.asarray(raw, dtype=np.int16)
    band, below = slice(0, BAND_HEIGHT), slice(BAND_HEIGHT, None)
    assert np.abs(frames[0][band] - raw_pixels[band]).mean() > 100  # the overlay: dark band over a white sky
    assert np.abs(frames[0][below] - raw_pixels[below]).mean() < 3  # the rest is the real frame (GIF palette)
    assert (frames[0][band] > 200).all(axis=2).sum() > 30  # and the band carries text
    assert not np.array_equal(frames[1], frames[-1])  # the cart moved


def test_frames_are_bounded_and_the_report_helper_picks_best_and_worst(
    recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = episodes_worth_rendering(recorded_run, 2)
    returns = {f"train/{p['submission_id']}/{p['index']}": p["episode_return"] for p in _finished(recorded_run)}
    assert len(names) == 2
    assert names[0] != names[1]
    assert returns[names[0]] >= returns[names[1]]
    out = tmp_path / "short.gif"
    done = render_recorded_episode(recorded_run, names[0], out, max_frames=4, width=96)
    assert (done.frames, done.media_type, done.matches_recording) == (4, "image/gif", True)
    assert done.data == out.read_bytes()
    frames = _gif_frames(out)
    assert len(frames) == 4
    assert frames[0].shape[1] == 96
    assert done.steps >= 3
    monkeypatch.setattr(render_module, "MAX_PIXELS", 3 * 96 * 64)  # fewer than 4 frames of 96x64
    big = tmp_path / "big.gif"
    with pytest.raises(InputError, match="lower --max-frames or --width"):
        render_recorded_episode(recorded_run, names[0], big, max_frames=4, width=96)
    assert not big.exists()


def test_host_only_episodes_need_visibility_all(recorded_run: Path, replay_cli, tmp_path: Path) -> None:
    validation = _finished(recorded_run, "validation")[0]  # the shared Run validates its Candidates
    name = f"validation/{validation['submission_id']}/{validation['index']}"
    out = tmp_path / "v.txt"
    refused = replay_cli("replay", str(recorded_run), "--render", name, "--out", str(out))
    assert refused.returncode == 2
    assert "host-only" in refused.stderr
    assert "--visibility all" in refused.stderr
    assert not out.exists()
    done = render_recorded_episode(recorded_run, name, out, visibility="all")
    assert (done.kind, done.media_type, done.matches_recording) == ("text", "text/plain", True)
    assert done.trajectory_digest == validation["trajectory_digest"]
    lines = out.read_text().splitlines()
    assert len([line for line in lines if not line.startswith("#")]) == validation["steps"] + 1  # header + steps


def test_unknown_episode_and_bad_out_suffix_are_refused(recorded_run: Path, replay_cli, tmp_path: Path) -> None:
    out = tmp_path / "e.gif"
    unknown = replay_cli("replay", str(recorded_run), "--render", "train/submission-000001/99", "--out", str(out))
    assert unknown.returncode == 2
    assert "names no recorded Episode" in unknown.stderr
    assert "train/submission-000001/0:2" in unknown.stderr
    webm = tmp_path / "e.webm"
    wrong = replay_cli("replay", str(recorded_run), "--render", "submission-000001/0", "--out", str(webm))
    assert wrong.returncode == 2
    assert ".gif or .mp4" in wrong.stderr
    assert not out.exists()
    assert not webm.exists()
    with pytest.raises(EpisodeNameError, match="not an Episode name"):
        render_recorded_episode(recorded_run, "episode-7")


def test_a_digest_prefix_names_an_episode_and_a_mismatch_writes_nothing(run_copy: Path, tamper, tmp_path) -> None:
    seq = tamper.seq_of(run_copy, "episode-finished", 0)
    recorded = tamper.payload(run_copy, seq)
    forged = "sha256:" + "0" * 64

    def other_digest(data: dict[str, Any]) -> None:
        data["trajectory_digest"] = forged

    tamper.forge(run_copy, seq, other_digest)
    out = tmp_path / "m.gif"
    with pytest.raises(RenderMismatchError, match="did not reproduce") as raised:
        render_recorded_episode(run_copy, "0000000000", out)
    assert raised.value.exit_code == 3
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    drawn = render_recorded_episode(run_copy, forged, fmt="png", strict=False)
    assert drawn.matches_recording is False
    assert (drawn.trajectory_digest, drawn.rerun_digest) == (forged, recorded["trajectory_digest"])
    assert drawn.data.startswith(b"\x89PNG")


@pytest.mark.skipif(not HAS_FFMPEG, reason="imageio-ffmpeg is not installed (pip install 'evoledger[video]')")
def test_mp4_through_imageio_ffmpeg(recorded_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.mp4"
    done = render_recorded_episode(recorded_run, "submission-000001/0", out, max_frames=12)
    assert (done.media_type, done.frames) == ("video/mp4", min(12, done.steps + 1))
    assert out.read_bytes()[4:8] == b"ftyp"


@pytest.mark.skipif(HAS_FFMPEG, reason="imageio-ffmpeg is installed")
def test_mp4_without_imageio_ffmpeg_says_how_to_install_it(recorded_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.mp4"
    with pytest.raises(MissingExtraError, match=r"pip install 'evoledger\[video\]'"):
        render_recorded_episode(recorded_run, "submission-000001/0", out, max_frames=12)
    assert not out.exists()


def _small_run(benchmark: str) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))  # short: Unix socket paths are length-limited
    config = RunConfig(
        benchmark=BenchmarkRef(name=benchmark),
        episode_budget=2,
        validation=ValidationConfig(episodes=1, max_candidates=1),
        assessment=AssessmentConfig(episodes=1),
        seed=3,
        agent=AgentConfig(name="hill-climb"),
    )
    assert run(config, record_to=root / "run").reason == "finished"
    yield root / "run"
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def minigrid_run() -> Iterator[Path]:
    pytest.importorskip("minigrid")
    yield from _small_run("minigrid/empty-5x5")


@pytest.fixture(scope="module")
def toy_run() -> Iterator[Path]:
    yield from _small_run("toy-counter")


@pytest.mark.catalog  # the animation path of the CartPole test with another renderer; its Run costs seconds
def test_a_minigrid_episode_is_drawn_from_its_own_renderer(minigrid_run: Path, tmp_path: Path) -> None:
    [episode, *_] = _finished(minigrid_run)
    name = f"{episode['submission_id']}/{episode['index']}"
    done = render_recorded_episode(minigrid_run, name, tmp_path / "m.gif", max_frames=1000)
    assert (done.kind, done.frames, done.note) == ("animation", episode["steps"] + 1, "")
    assert done.trajectory_digest == episode["trajectory_digest"]
    assert done.matches_recording
    frames = _gif_frames(tmp_path / "m.gif")
    green = (frames[0][..., 1] > 200) & (frames[0][..., 0] < 120)  # minigrid draws its goal square green
    assert green.sum() > 100


def test_a_benchmark_without_renderer_gets_a_reward_chart(toy_run: Path, tmp_path: Path) -> None:
    [episode, *_] = _finished(toy_run)
    name = f"{episode['submission_id']}/{episode['index']}"
    done = render_recorded_episode(toy_run, name, tmp_path / "t.gif")
    assert (done.kind, done.media_type, done.frames) == ("chart", "image/gif", 1)
    assert "no renderer here" in done.note
    assert "render_mode" in done.note
    assert done.matches_recording
    assert done.trajectory_digest == episode["trajectory_digest"]
    with PIL.open(tmp_path / "t.gif") as chart:
        assert chart.n_frames == 1
        assert chart.size == (480, 260)
    with pytest.raises(InputError, match="cannot render here"):
        render_recorded_episode(toy_run, name, tmp_path / "t.mp4")
    assert not (tmp_path / "t.mp4").exists()
