"""Every user-facing error of ``export_dataset``: the wrong value is named, and the fix."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from evoledger.exporters import export_dataset
from evoledger.ledger.canonical import digest_of
from evoledger.ledger.errors import (
    ConfigError,
    InputError,
    LedgerNotFoundError,
    SchemaError,
    UnknownNameError,
)
from evoledger.ledger.events import BenchmarkIdentity, EvaluationStarted, ProgramSnapshotted
from evoledger.ledger.store import Ledger


@pytest.fixture
def small_run(synth: SimpleNamespace) -> Path:
    return synth.run(synth.Run("small", [[synth.cartpole(2)]]))


def test_missing_run_directory(tmp_path: Path) -> None:
    with pytest.raises(LedgerNotFoundError, match=r"run directory .*nowhere does not exist"):
        export_dataset([tmp_path / "nowhere"], tmp_path / "out")


def test_directory_without_a_ledger(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(LedgerNotFoundError, match="no ledger in"):
        export_dataset([tmp_path / "empty"], tmp_path / "out")


def test_a_ledger_that_is_neither_a_run_nor_an_evaluation_record(tmp_path: Path) -> None:
    record = tmp_path / "other"
    with Ledger.create(record) as ledger:
        ledger.append(
            [
                ProgramSnapshotted(
                    program_digest=digest_of(b"program"),
                    files={"policy.py": digest_of(b"x")},
                    entry_point="policy.py",
                    file_count=1,
                    total_bytes=1,
                    source="evaluation",
                )
            ]
        )
    with pytest.raises(InputError, match=r"neither a Run nor an evaluation record; .*evoledger evaluate --record-to"):
        export_dataset([record], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_evaluation_records_alone_have_no_submissions_or_messages(tmp_path: Path) -> None:
    record = tmp_path / "evaluation"
    with Ledger.create(record) as ledger:
        ledger.append(
            [
                EvaluationStarted(
                    evaluation_id="evaluation-000001",
                    benchmark=BenchmarkIdentity.of("cartpole", {}),
                    program_digest=digest_of(b"program"),
                    split="train",
                    episode_count=1,
                    seed=0,
                )
            ]
        )
    with pytest.raises(ConfigError, match=r"evaluation records .* --config messages has nothing to export; pass"):
        export_dataset([record], tmp_path / "out", configs=["messages"])
    assert not (tmp_path / "out").exists()


def test_unknown_config_name_suggests_the_closest(small_run: Path, tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match=r"unknown export config 'step'\. Did you mean 'steps'\?") as caught:
        export_dataset([small_run], tmp_path / "out", configs=["step"])
    assert caught.value.suggestion == "steps"
    with pytest.raises(UnknownNameError, match="unknown visibility 'private'"):
        export_dataset([small_run], tmp_path / "out", visibility="private")


def test_output_directory_must_be_empty_unless_overwrite(small_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_dataset([small_run], out, configs=["episodes"])
    with pytest.raises(InputError, match=r"output directory .* is not empty .* pass --overwrite"):
        export_dataset([small_run], out, configs=["steps"])
    assert (out / "episodes").is_dir()  # refused before anything was touched
    report = export_dataset([small_run], out, configs=["steps"], overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "steps"]
    assert report.steps == 2


def test_overwrite_never_deletes_a_directory_that_is_not_an_export(small_run: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="does not hold an evoledger export"):
        export_dataset([small_run], precious, overwrite=True)
    assert (precious / "notes.txt").read_text() == "keep me"


def test_output_path_that_is_a_file(small_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(InputError, match="is a file"):
        export_dataset([small_run], target)


def test_same_run_twice_and_clashing_run_ids(synth: SimpleNamespace, small_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="given twice"):
        export_dataset([small_run, small_run], tmp_path / "out")
    moved = tmp_path / "elsewhere"
    small_run.rename(moved)
    clash = synth.run(synth.Run("small", [[synth.cartpole(4)]]))  # a different Run with the same id
    with pytest.raises(ConfigError, match="different Runs with the same run id 'small'"):
        export_dataset([moved, clash], tmp_path / "out")


def test_no_run_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no Run directory was given"):
        export_dataset([], tmp_path / "out")


def test_minari_writes_steps_only(small_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--format minari writes step data only"):
        export_dataset([small_run], tmp_path / "out", output_format="minari", configs=["episodes"])


def test_values_that_do_not_fit_the_space_fail_cleanly(synth: SimpleNamespace, tmp_path: Path) -> None:
    bad = synth.Episode([[0.0, 1.0], [1.0, 2.0]], [1])  # 2 numbers where the Box declares 4
    run_dir = synth.run(synth.Run("bad", [[bad]]))
    out = tmp_path / "out"
    with pytest.raises(SchemaError, match=r"Run bad, train Episode 0 of submission-000001: .*--json-spaces"):
        export_dataset([run_dir], out, configs=["steps"])
    assert not out.exists()
    assert not list(tmp_path.glob(".out.export-*"))  # the staging directory is gone
    report = export_dataset([run_dir], out, configs=["steps"], json_spaces=True)
    assert report.observation_encoding == "json"
