"""``--format minari``: the steps as a Minari dataset that ``minari.load_dataset`` reads from a local path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from evoledger.exporters import export_dataset
from evoledger.ledger.errors import ConfigError
from evoledger.ledger.events import from_stored
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import decode_trajectory

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("minari") is None or importlib.util.find_spec("PIL") is None,
    reason="minari (and Pillow, which its storage imports) are not installed: pip install 'evoledger[minari]'",
)


def test_recorded_run_round_trips_through_minari(
    recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import minari

    out = tmp_path / "minari"
    report = export_dataset([recorded_run], out, output_format="minari")
    assert report.minari_dataset_id == "evoledger/cartpole/public-v0"
    assert (out / "README.md").is_file()
    with Ledger.open(recorded_run) as ledger:
        finished = [from_stored(r) for r in ledger.records(kinds=("episode-finished",))]
        trajectories = [decode_trajectory(ledger.objects.get(e.trajectory_digest)) for e in finished]
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset(report.minari_dataset_id)
    assert dataset.total_episodes == len(finished) == report.episodes
    assert dataset.total_steps == sum(e.steps for e in finished) == report.steps
    for episode, trajectory in zip(dataset.iterate_episodes(), trajectories, strict=True):
        assert np.array_equal(episode.observations, np.asarray(trajectory.observations, dtype=np.float32))
        assert episode.actions.tolist() == list(trajectory.actions)
        assert episode.rewards.tolist() == list(trajectory.rewards)
        assert bool(episode.terminations[-1]) == trajectory.terminated
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    assert [(m["submission_id"], m["pool_index"]) for m in metadata] == [(e.submission_id, e.index) for e in finished]
    assert not any("seed" in m for m in metadata)


def test_minari_needs_one_benchmark(synth: SimpleNamespace, tmp_path: Path) -> None:
    one = synth.run(synth.Run("one", [[synth.cartpole(1)]]))
    two = synth.run(synth.Run("two", [[synth.cartpole(1)]], benchmark="other"))
    with pytest.raises(ConfigError, match="one Benchmark"):
        export_dataset([one, two], tmp_path / "out", output_format="minari")
    assert not (tmp_path / "out").exists()


def test_minari_needs_declared_spaces(synth: SimpleNamespace, tmp_path: Path) -> None:
    bare = synth.run(synth.Run("bare", [[synth.cartpole(1)]], observation_space=None, action_space=None))
    with pytest.raises(ConfigError, match="Minari needs the observation and action spaces"):
        export_dataset([bare], tmp_path / "out", output_format="minari")
