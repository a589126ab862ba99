"""``evoledger export`` as typed, end to end: real recorded Runs and ``evaluate --record-to`` records, exported
through the real CLI and loaded back with ``datasets.load_dataset`` / ``minari.load_dataset``, compared to the
ledger."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import datasets
import numpy as np
import pytest
from click.testing import CliRunner, Result
from evoledger.kernel.cli.export_command import export_command
from evoledger.kernel.cli.main import cli
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.events import (
    AssessmentFinished,
    BenchmarkIdentity,
    EpisodeFinished,
    EvaluationStarted,
    ValidationEpisodeFinished,
    from_stored,
)
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory, decode_trajectory, encode_trajectory

needs_minari = pytest.mark.skipif(
    importlib.util.find_spec("minari") is None or importlib.util.find_spec("PIL") is None,
    reason="minari (and Pillow, which its storage imports) are not installed: pip install 'evoledger[minari]'",
)
_ID = re.compile(r"^(?P<record>[^@/]+)/(?P<split>\w+)/(?P<owner>[\w-]+)/(?P<index>\d+)/(?P<attempt>\d+)@[0-9a-f]{16}$")


@pytest.fixture(scope="module")
def group() -> Iterator[click.Group]:
    """The real ``evoledger`` group (its error handling maps errors to exit codes) with ``export`` in it."""
    added = "export" not in cli.commands
    if added:
        cli.add_command(export_command)
    yield cli
    if added:
        cli.commands.pop("export", None)


def _export(group: click.Group, *args: str) -> Result:
    return CliRunner().invoke(group, ["export", *args])


def _load(out: Path, config: str, cache: Path) -> datasets.DatasetDict:
    loaded = datasets.load_dataset(str(out), config, cache_dir=str(cache))
    assert isinstance(loaded, datasets.DatasetDict)
    return loaded


def _ledger_episodes(record: Path, *, visibility: str = "public") -> list[tuple[Any, Trajectory]]:
    """Every exported Episode of ``record`` in log order, with its trajectory, as the ledger holds it."""
    kinds = (
        ("episode-finished",)
        if visibility == "public"
        else (
            "episode-finished",
            "validation-episode-finished",
            "assessment-finished",
        )
    )
    out: list[tuple[Any, Trajectory]] = []
    with Ledger.open(record) as ledger:
        for row in ledger.records(kinds=kinds):
            event = from_stored(row)
            parts: list[Any] = list(event.episodes) if isinstance(event, AssessmentFinished) else [event]
            for part in parts:
                out.append((part, decode_trajectory(ledger.objects.get(part.trajectory_digest))))
    return out


def test_out_with_missing_parents_is_created_and_rows_equal_the_ledger(
    group: click.Group, recorded_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "datasets" / "nested" / "cp"
    result = _export(group, str(recorded_run), "--out", str(out), "--config", "steps,episodes")
    assert result.exit_code == 0, result.output
    steps = _load(out, "steps", tmp_path / "cache")["train"]
    episodes = _load(out, "episodes", tmp_path / "cache")["train"]
    expected = _ledger_episodes(recorded_run)
    assert episodes.num_rows == len(expected)
    assert steps.num_rows == sum(len(t.actions) for _, t in expected)
    by_episode: dict[str, list[dict[str, Any]]] = {}
    for row in steps:
        by_episode.setdefault(row["episode_id"], []).append(row)
    assert list(by_episode) == episodes["episode_id"]  # the same ids, in log order
    for (event, trajectory), episode_id in zip(expected, episodes["episode_id"], strict=True):
        rows = by_episode[episode_id]
        assert [r["step"] for r in rows] == list(range(len(trajectory.actions)))
        assert np.array_equal(
            np.asarray([r["observation"] for r in rows], dtype=np.float32),
            np.asarray(trajectory.observations[: len(trajectory.actions)], dtype=np.float32),
        )
        assert [r["action"] for r in rows] == list(trajectory.actions)
        assert [r["reward"] for r in rows] == list(trajectory.rewards)
        assert _ID.match(episode_id) is not None
        assert f"/train/{event.submission_id}/{event.index}/{event.attempt}@" in episode_id


def test_a_failed_export_removes_the_parents_it_created(
    group: click.Group, synth: SimpleNamespace, tmp_path: Path
) -> None:
    bad = synth.Episode([[0.0, 1.0], [1.0, 2.0]], [1])  # 2 numbers where the Box declares 4
    run_dir = synth.run(synth.Run("bad", [[bad]]))
    result = _export(group, str(run_dir), "--out", str(tmp_path / "new" / "deeper" / "ds"))
    assert result.exit_code != 0
    assert "--json-spaces" in result.output
    assert "json_spaces=" not in result.output
    assert not (tmp_path / "new").exists()


def test_out_under_a_file_is_refused_in_flags(group: click.Group, synth: SimpleNamespace, tmp_path: Path) -> None:
    run_dir = synth.run(synth.Run("small", [[synth.cartpole(2)]]))
    (tmp_path / "afile").write_text("x")
    result = _export(group, str(run_dir), "--out", str(tmp_path / "afile" / "ds"))
    assert result.exit_code == 2
    assert "--out" in result.output
    assert "is a file" in result.output
    assert "Traceback" not in result.output


def test_a_non_empty_out_names_the_flag_not_the_python_argument(
    group: click.Group, synth: SimpleNamespace, tmp_path: Path
) -> None:
    run_dir = synth.run(synth.Run("small", [[synth.cartpole(2)]]))
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "x").write_text("x")
    result = _export(group, str(run_dir), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "--overwrite" in result.output
    assert "overwrite=True" not in result.output


def test_episode_ids_are_unique_across_splits_and_runs(
    group: click.Group, recorded_run: Path, synth: SimpleNamespace, tmp_path: Path
) -> None:
    out = tmp_path / "all"
    result = _export(group, str(recorded_run), "--out", str(out), "--config", "steps,episodes", "--visibility", "all")
    assert result.exit_code == 0, result.output
    episodes = _load(out, "episodes", tmp_path / "cache")
    assert sorted(episodes) == ["assessment", "train", "validation"]
    ids = [i for split in episodes.values() for i in split["episode_id"]]
    assert len(ids) == len(set(ids)) == len(_ledger_episodes(recorded_run, visibility="all"))
    steps = _load(out, "steps", tmp_path / "cache")
    for split, rows in steps.items():
        lengths = Counter(rows["episode_id"])
        declared = dict(zip(episodes[split]["episode_id"], episodes[split]["steps"], strict=True))
        assert lengths == {k: v for k, v in declared.items() if v}
        assert all(_ID.match(i)["split"] == split for i in lengths)  # type: ignore[index]
    # Two different Runs recorded under the same directory name (so the same run id) get different ids.
    first = synth.run(synth.Run("same", [[synth.cartpole(2)]]))
    first.rename(tmp_path / "first")
    second = synth.run(synth.Run("same", [[synth.cartpole(2, offset=1.0)], [synth.cartpole(1)]]))
    for name, run_dir in (("a", tmp_path / "first"), ("b", second)):
        assert _export(group, str(run_dir), "--out", str(tmp_path / name), "--config", "episodes").exit_code == 0
    a = set(_load(tmp_path / "a", "episodes", tmp_path / "cache")["train"]["episode_id"])
    b = set(_load(tmp_path / "b", "episodes", tmp_path / "cache")["train"]["episode_id"])
    assert a
    assert b
    assert not a & b


def test_box_observations_are_fixed_length_features(group: click.Group, recorded_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "fixed"
    assert _export(group, str(recorded_run), "--out", str(out), "--config", "steps").exit_code == 0
    steps = _load(out, "steps", tmp_path / "cache")["train"]
    for column in ("observation", "next_observation"):
        feature = steps.features[column]
        assert isinstance(feature, datasets.List)
        assert feature.length == 4
        assert feature.feature == datasets.Value("float32")
    assert steps.with_format("numpy")[:]["observation"].shape == (steps.num_rows, 4)
    card = (out / "README.md").read_text()
    assert "length: 4" in card


def _card_spaces(card: str) -> dict[str, Any]:
    block = card.split("Spaces of `cartpole`:\n\n```json\n", 1)[1].split("\n```", 1)[0]
    value: dict[str, Any] = json.loads(block)
    return value


def test_infinite_bounds_are_written_as_infinities(group: click.Group, recorded_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "inf"
    assert _export(group, str(recorded_run), "--out", str(out), "--config", "episodes").exit_code == 0
    card = (out / "README.md").read_text()
    space = _card_spaces(card)["observation_space"]
    assert "null" not in json.dumps(space, allow_nan=True)
    assert [math.isinf(v) for v in space["high"]] == [False, True, False, True]
    assert space["low"][1] == -math.inf
    assert space["high"][3] == math.inf


@needs_minari
def test_minari_with_a_relative_out_recovers_its_environment(
    group: click.Group, recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import minari

    monkeypatch.chdir(tmp_path)
    result = _export(group, str(recorded_run), "--out", "datasets/cp", "--format", "minari", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    out = tmp_path / "datasets" / "cp"
    assert not list(tmp_path.glob("datasets/.cp.export-*"))
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset(report["minari_dataset_id"])
    expected = _ledger_episodes(recorded_run)
    assert dataset.total_episodes == len(expected)
    for episode, (_, trajectory) in zip(dataset.iterate_episodes(), expected, strict=True):
        assert np.array_equal(episode.observations, np.asarray(trajectory.observations, dtype=np.float32))
        assert episode.actions.tolist() == list(trajectory.actions)
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    ids = [m["episode_id"] for m in metadata]
    assert len(set(ids)) == len(ids)
    assert all(_ID.match(i) for i in ids)
    env = dataset.recover_environment()
    try:
        assert env.spec is not None
        assert (env.spec.id, env.spec.max_episode_steps) == ("CartPole-v1", 500)
        assert env.observation_space == dataset.observation_space
        assert env.action_space == dataset.action_space
        observation, _ = env.reset(seed=0)
        assert dataset.observation_space.contains(observation)
    finally:
        env.close()
    card = (out / "README.md").read_text()
    table = card.split("## Configs", 1)[1].split("\n\n", 2)[1]
    assert f"| Minari `{report['minari_dataset_id']}`" in table
    assert f"train ({len(expected)} Episodes, {dataset.total_steps} steps)" in table
    assert "recover_environment()" in card


@pytest.fixture(scope="module")
def evaluation_record(tmp_root: Path) -> Path:
    """A record made by the real ``evoledger evaluate --record-to`` (a subprocess, as a user types it)."""
    record = tmp_root / "eval-record"
    code = "from evoledger.kernel.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "evaluate", "--episodes", "3", "--record-to", str(record)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "EVOLEDGER_HOME": str(tmp_root / "home")},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return record


def test_an_evaluate_record_exports_end_to_end(group: click.Group, evaluation_record: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    result = _export(group, str(evaluation_record), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [c["name"] for c in report["configs"]] == ["steps", "episodes"]  # no Submissions, no Agent session
    assert [r["record"] for r in report["runs"]] == ["evaluation"]
    assert "Records of `evoledger evaluate --record-to`" in (out / "README.md").read_text()
    assert report["observation_encoding"] == "float32[4]"  # the registry vouched for the recorded Benchmark
    with Ledger.open(evaluation_record) as ledger:
        (started,) = [from_stored(r) for r in ledger.records(kinds=("evaluation-started",))]
    assert isinstance(started, EvaluationStarted)
    expected = _ledger_episodes(evaluation_record)
    assert all(isinstance(event, EpisodeFinished) for event, _ in expected)
    episodes = _load(out, "episodes", tmp_path / "cache")["train"]
    steps = _load(out, "steps", tmp_path / "cache")["train"]
    assert episodes["run_id"] == [started.evaluation_id] * len(expected)
    assert episodes["submission_id"] == [None] * len(expected)
    assert episodes["episode_return"] == [event.episode_return for event, _ in expected]
    assert episodes["program_digest"] == [started.program_digest] * len(expected)
    assert len(set(episodes["episode_id"])) == len(expected)
    assert all(i.startswith(f"{started.evaluation_id}/train/evaluation/") for i in episodes["episode_id"])
    assert steps.features["observation"].length == 4
    assert steps.num_rows == sum(len(t.actions) for _, t in expected)
    assert np.array_equal(
        np.asarray(steps["observation"], dtype=np.float32),
        np.concatenate([np.asarray(t.observations[: len(t.actions)], dtype=np.float32) for _, t in expected]),
    )


def test_an_evaluate_record_refuses_configs_it_has_no_rows_for(
    group: click.Group, evaluation_record: Path, tmp_path: Path
) -> None:
    result = _export(group, str(evaluation_record), "--out", str(tmp_path / "o"), "--config", "messages")
    assert result.exit_code == 2
    assert "--config steps" in result.output
    assert not (tmp_path / "o").exists()


@needs_minari
def test_an_evaluate_record_exports_to_minari(
    group: click.Group, evaluation_record: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import minari

    out = tmp_path / "eval-minari"
    result = _export(group, str(evaluation_record), "--out", str(out), "--format", "minari", "--json")
    assert result.exit_code == 0, result.output
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    dataset = minari.load_dataset(json.loads(result.output)["minari_dataset_id"])
    expected = _ledger_episodes(evaluation_record)
    assert dataset.total_episodes == len(expected)
    assert dataset.total_steps == sum(len(t.actions) for _, t in expected)
    env = dataset.recover_environment()
    env.close()
    assert env.spec is not None
    assert env.spec.id == "CartPole-v1"


def test_validation_and_assessment_rows_name_their_split(
    group: click.Group, recorded_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "labels"
    result = _export(group, str(recorded_run), "--out", str(out), "--config", "episodes", "--visibility", "all")
    assert result.exit_code == 0, result.output
    episodes = _load(out, "episodes", tmp_path / "cache")
    with Ledger.open(recorded_run) as ledger:
        recorded = [from_stored(r) for r in ledger.records(kinds=("validation-episode-finished",))]
    validation = [e for e in recorded if isinstance(e, ValidationEpisodeFinished)]
    assert len(validation) == len(recorded)
    assert [i.split("@")[0] for i in episodes["validation"]["episode_id"]] == [
        f"{recorded_run.name}/validation/{e.submission_id}/{e.index}/{e.attempt}" for e in validation
    ]


def _unregistered_evaluation(root: Path) -> Path:
    """An evaluation record of a Benchmark this registry does not know (so nothing vouches for its spaces)."""
    record = root / "unregistered-eval"
    with Ledger.create(record) as ledger:
        trajectory = Trajectory([[0.0, 1.0], [1.0, 2.0]], [1], [0.5], True, False)
        ledger.append(
            [
                EvaluationStarted(
                    evaluation_id="evaluation-000001",
                    benchmark=BenchmarkIdentity.of("not-registered-here", {"k": 1}),
                    program_digest=digest_of(b"program"),
                    split="validation",
                    episode_count=1,
                    seed=0,
                ),
                EpisodeFinished(
                    evaluation_id="evaluation-000001",
                    split="validation",
                    index=0,
                    status="ok",
                    episode_return=0.5,
                    steps=1,
                    terminated=True,
                    truncated=False,
                    trajectory_digest=ledger.objects.put(encode_trajectory(trajectory)),
                ),
            ]
        )
    return record


def test_an_evaluate_record_without_known_spaces_exports_json_text(group: click.Group, tmp_path: Path) -> None:
    record = _unregistered_evaluation(tmp_path)
    out = tmp_path / "json"
    result = _export(group, str(record), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["observation_encoding"] == "json"
    steps = _load(out, "steps", tmp_path / "cache")
    assert list(steps) == ["validation"]  # the split it was evaluated on
    assert [json.loads(o) for o in steps["validation"]["observation"]] == [[0.0, 1.0]]
    assert "the record describes no spaces" in (out / "README.md").read_text()


@needs_minari
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--minari-id", "no version"], "--minari-id 'no version' is malformed"),
        (["--config", "episodes"], "--format minari writes step data only"),
    ],
)
def test_minari_errors_name_the_flags(
    group: click.Group, synth: SimpleNamespace, tmp_path: Path, args: list[str], message: str
) -> None:
    run_dir = synth.run(synth.Run("small", [[synth.cartpole(2)]]))
    result = _export(group, str(run_dir), "--out", str(tmp_path / "o"), "--format", "minari", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


@needs_minari
def test_minari_refuses_records_without_known_spaces(group: click.Group, tmp_path: Path) -> None:
    record = _unregistered_evaluation(tmp_path)
    result = _export(group, str(record), "--out", str(tmp_path / "o"), "--format", "minari")
    assert result.exit_code == 2
    assert "Minari needs the observation and action spaces" in result.output
    assert "--format hf" in result.output
    assert not (tmp_path / "o").exists()


@needs_minari
def test_minari_of_a_benchmark_without_a_gymnasium_environment_says_so(
    group: click.Group, synth: SimpleNamespace, tmp_path: Path
) -> None:
    run_dir = synth.run(synth.Run("toy", [[synth.cartpole(2)]], benchmark="toy-counter"))
    out = tmp_path / "toy-dataset"
    result = _export(group, str(run_dir), "--out", str(out), "--format", "minari")
    assert result.exit_code == 0, result.output
    assert "records no `env_spec`" in (out / "README.md").read_text()
