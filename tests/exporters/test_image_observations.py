"""Image, Dict and Text observations end to end through the real CLI: ``evoledger run`` (the baseline Agent) records
format 2 trajectories of a 64x64x3 Benchmark, ``evoledger replay --execute`` re-executes them to the same digests,
``evoledger evaluate --record-to`` records them too, ``evoledger export`` writes that record as HF ``datasets`` (an
Image feature inside a struct, a string column), and the Run's export as a Minari dataset (Dict / Box / Discrete /
Text spaces) loads back equal to the ledger.

The test Benchmark (``tests/support/image_benchmark.py``) is installed the way a third-party package installs one:
an ``evoledger.benchmarks`` entry point, here a ``.dist-info`` directory put on the subprocesses' PYTHONPATH, so the
CLI resolves it by name (exporting needs the registry to vouch for a record's spaces).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evoledger.ledger.events import EpisodeFinished, from_stored
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory, decode_trajectory, stacked_values
from evoledger.ledger.trajectory_columns import COLUMNS_MAGIC
from evoledger.tests.support.image_benchmark import IMAGE_SHAPE

_NAME = "test-image"
_STEPS = 6
_EPISODES = 2


@pytest.fixture(scope="module")
def cli_env(tmp_root: Path) -> dict[str, str]:
    """The environment of CLI subprocesses that see the test Benchmark as an installed ``test-image``."""
    site = tmp_root / "image-site"
    info = site / "evoledger_test_image-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evoledger-test-image\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(
        f"[evoledger.benchmarks]\n{_NAME} = evoledger.tests.support.image_benchmark:make_image_benchmark\n"
    )
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "EVOLEDGER_HOME": str(tmp_root / "image-home")}


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = "from evoledger.kernel.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, env=env, check=False
    )


@pytest.fixture(scope="module")
def image_record(tmp_root: Path, cli_env: dict[str, str]) -> Path:
    """An Evaluation record (``evoledger evaluate --record-to``): its spaces come from the registry."""
    record = tmp_root / "image-record"
    done = _cli(cli_env, "evaluate", "-b", _NAME, "-n", str(_EPISODES), "--record-to", str(record))
    assert done.returncode == 0, done.stdout + done.stderr
    return record


@pytest.fixture(scope="module")
def image_run(tmp_root: Path, cli_env: dict[str, str]) -> Path:
    """A Run of the baseline Agent (``evoledger run``): a record ``replay --execute`` re-executes."""
    record = tmp_root / "image-run"
    done = _cli(
        cli_env,
        "run",
        _NAME,
        "--agent",
        "baseline",
        "--episode-budget",
        str(_EPISODES),
        "--validation-episodes",
        "1",
        "--assessment-episodes",
        "1",
        "--record-to",
        str(record),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return record


def _episodes(record: Path) -> list[tuple[EpisodeFinished, bytes, Trajectory]]:
    with Ledger.open(record) as ledger:
        events = [
            e for r in ledger.records(kinds=("episode-finished",)) if isinstance(e := from_stored(r), EpisodeFinished)
        ]
        objects = [ledger.objects.get(e.trajectory_digest) for e in events]
    return [(e, data, decode_trajectory(data)) for e, data in zip(events, objects, strict=True)]


def test_image_episodes_are_stored_raw_and_replay_re_executes_them(image_run: Path, cli_env: dict[str, str]) -> None:
    episodes = _episodes(image_run)
    assert len(episodes) == _EPISODES
    for event, data, trajectory in episodes:
        assert event.status == "ok"
        assert event.steps == _STEPS
        assert data.startswith(COLUMNS_MAGIC)
        pixels = (_STEPS + 1) * int(np.prod(IMAGE_SHAPE))
        assert pixels < len(data) < pixels + 4096  # the pixels once, raw, and a small header
        columns = stacked_values(trajectory.observations)
        assert columns["image"].shape == (_STEPS + 1, *IMAGE_SHAPE)
        assert columns["direction"] == [t % 4 for t in range(_STEPS + 1)]
        assert len(set(columns["mission"])) == 1
        assert columns["mission"][0].startswith("pick the ")
        assert not np.array_equal(columns["image"][0], columns["image"][1])  # each step as it was sent
    done = _cli(cli_env, "replay", str(image_run), "--execute", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    execution = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "execution")
    assert execution["status"] == "pass", execution


def test_export_hf_gives_an_image_struct_and_text_columns_equal_to_the_ledger(
    image_record: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    import datasets

    out = tmp_path / "hf"
    done = _cli(cli_env, "export", str(image_record), "--out", str(out), "--config", "steps", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["observation_encoding"] == "{direction: int64, image: image[64][64][3], mission: string}"
    loaded = datasets.load_dataset(str(out), "steps", cache_dir=str(tmp_path / "cache"))
    assert isinstance(loaded, datasets.DatasetDict)
    steps = loaded["train"]
    features: Any = steps.features
    assert isinstance(features["observation"]["image"], datasets.Image)
    assert features["observation"]["mission"] == datasets.Value("string")
    assert features["observation"]["direction"] == datasets.Value("int64")
    episodes = _episodes(image_record)
    assert steps.num_rows == sum(len(t.actions) for _, _, t in episodes)
    rows = iter(steps)
    for _, _, trajectory in episodes:
        for t in range(len(trajectory.actions)):
            row = next(rows)
            for key, field in (("observation", t), ("next_observation", t + 1)):
                recorded = trajectory.observations[field]
                exported = row[key]
                assert np.array_equal(np.asarray(exported["image"]), recorded["image"])
                assert exported["direction"] == recorded["direction"]
                assert exported["mission"] == recorded["mission"]
            assert row["action"] == trajectory.actions[t]
            assert row["reward"] == trajectory.rewards[t]
    card = (out / "README.md").read_text()
    assert 'dtype: "image"' in card


def test_export_minari_writes_the_same_spaces_and_values(
    image_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process (the Run records its spec, so no registry is needed): the CLI path is the HF test's."""
    import minari
    from evoledger.exporters import export_dataset
    from gymnasium import spaces

    out = tmp_path / "minari"
    report = export_dataset([image_run], out, output_format="minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset(report.minari_dataset_id)
    space = dataset.observation_space
    assert isinstance(space, spaces.Dict)
    assert isinstance(space["image"], spaces.Box)
    assert space["image"].shape == IMAGE_SHAPE
    assert isinstance(space["mission"], spaces.Text)
    assert isinstance(space["direction"], spaces.Discrete)
    episodes = _episodes(image_run)
    assert dataset.total_episodes == len(episodes)
    for episode, (_, _, trajectory) in zip(dataset.iterate_episodes(), episodes, strict=True):
        columns = stacked_values(trajectory.observations)
        assert np.array_equal(episode.observations["image"], columns["image"])  # lossless: no JPEG
        assert episode.observations["direction"].tolist() == columns["direction"]
        assert list(episode.observations["mission"]) == columns["mission"]
        assert episode.actions.tolist() == list(trajectory.actions)
        assert episode.rewards.tolist() == list(trajectory.rewards)
