"""``--format minari``: the steps as a Minari dataset that ``minari.load_dataset`` reads from a local path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from evoledger.exporters import export_dataset
from evoledger.ledger.errors import ConfigError
from evoledger.ledger.events import EpisodeFinished, from_stored
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
        finished = [
            e for r in ledger.records(kinds=("episode-finished",)) if isinstance(e := from_stored(r), EpisodeFinished)
        ]
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


_BOX = {"type": "Box", "shape": [2], "dtype": "float32", "low": [0, 0], "high": [1, 1]}
_ODD_SPACES = {
    "object dtype": {**_BOX, "dtype": "object"},
    "longdouble": {**_BOX, "dtype": "float128"},
    "complex": {**_BOX, "dtype": "complex64"},
    "structured": {**_BOX, "dtype": "int8,int8"},
    "datetime": {**_BOX, "dtype": "M8[s]"},
    "string": {**_BOX, "dtype": "U5"},
    "not a dtype": {**_BOX, "dtype": "no-such-type"},
    "huge shape": {**_BOX, "shape": [2**20, 2**20], "low": None, "high": None},
    "negative dimension": {**_BOX, "shape": [-1]},
    "shape not a list": {**_BOX, "shape": "2"},
    "huge discrete": {"type": "Discrete", "n": 10**30},
    "huge multidiscrete": {"type": "MultiDiscrete", "nvec": [10**30], "shape": [1]},
    "deep tuple": {"type": "Tuple", "spaces": [{"type": "Discrete", "n": 2}]},
    "not an object": ["Discrete", 2],
}
for _ in range(40):
    _ODD_SPACES["deep tuple"] = {"type": "Tuple", "spaces": [_ODD_SPACES["deep tuple"]]}


@pytest.mark.parametrize("name", sorted(_ODD_SPACES))
def test_a_recorded_space_minari_cannot_store_is_a_clear_refusal(name: str) -> None:
    from evoledger.exporters.minari_export import gym_space

    with pytest.raises(ConfigError, match="Minari") as refused:
        gym_space(_ODD_SPACES[name])  # type: ignore[arg-type]
    assert len(str(refused.value)) < 1000  # the recorded value is quoted, not pasted whole


def test_steps_that_do_not_fit_the_declared_spaces_are_a_schema_error_naming_the_episode(
    synth: SimpleNamespace, tmp_path: Path
) -> None:
    from evoledger.ledger.errors import SchemaError

    # a Run whose recorded integer actions cannot fill the Box of three values its spec declares
    box = {"type": "Box", "shape": [3], "dtype": "float32", "low": [0, 0, 0], "high": [1, 1, 1]}
    bad = synth.run(synth.Run("bad", [[synth.cartpole(2)]], action_space=box))
    with pytest.raises(SchemaError, match="do not fit the declared spaces"):
        export_dataset([bad], tmp_path / "out", output_format="minari")


def test_env_spec_comes_from_gymnasium_registry_only() -> None:
    from evoledger.exporters.minari_export import env_spec_for

    def spec(params: dict[str, object], source: str = "gymnasium") -> dict[str, object]:
        return {"metadata": {"source": source}, "environment_parameters": params}

    lake = env_spec_for(
        spec({"gymnasium_id": "FrozenLake-v1", "max_episode_steps": 200, "map_name": "8x8", "map": ["SFFF"]})
    )
    assert lake is not None
    assert (lake.id, lake.max_episode_steps) == ("FrozenLake-v1", 200)
    assert lake.kwargs["map_name"] == "8x8"
    assert "map" not in lake.kwargs  # a public fact, not a constructor argument
    assert env_spec_for(spec({"gymnasium_id": "os:Evil-v0"})) is None  # never an id naming a module to import
    assert env_spec_for(spec({"gymnasium_id": "NoSuchEnv-v0"})) is None
    assert env_spec_for(spec({"gymnasium_id": "CartPole-v1"}, source="evoledger")) is None
    assert env_spec_for(None) is None


def test_format_2_tuple_and_text_observations_round_trip_through_minari(
    synth: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import minari
    from gymnasium import spaces

    image = {"type": "Box", "shape": [8, 8], "dtype": "uint8", "low": 0, "high": 255}
    text = {"type": "Text", "min_length": 1, "max_length": 8, "charset": "ab"}
    space = {"type": "Tuple", "spaces": [image, {"type": "Discrete", "n": 4, "start": 0}, text]}
    observations = [(np.full((8, 8), t, dtype=np.uint8), t, "ab" * (t + 1)) for t in range(3)]
    run_dir = synth.run(synth.Run("tuple", [[synth.Episode(observations, [0, 1])]], observation_space=space))
    report = export_dataset([run_dir], tmp_path / "m", output_format="minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "m"))
    dataset = minari.load_dataset(report.minari_dataset_id)
    assert isinstance(dataset.observation_space, spaces.Tuple)
    assert isinstance(dataset.observation_space[2], spaces.Text)
    (episode,) = list(dataset.iterate_episodes())
    images, numbers, missions = episode.observations
    assert np.array_equal(images, np.stack([o[0] for o in observations]))
    assert numbers.tolist() == [0, 1, 2]
    assert list(missions) == ["ab", "abab", "ababab"]
