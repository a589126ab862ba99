"""Export edge cases on synthetic Runs: Policy failures, missing final observations, structured spaces."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow.parquet as pq
import pytest
from evoledger.exporters import export_dataset


def _rows(out: Path, config: str, split: str = "train") -> list[dict[str, Any]]:
    return pq.read_table(out / config / f"{split}-00000-of-00001.parquet").to_pylist()


def test_policy_failure_and_missing_final_observation(synth: SimpleNamespace, tmp_path: Path) -> None:
    failed = synth.cartpole(3, terminated=False, status="exception")
    failed.observations = failed.observations[:3]  # failed before its last observation was recorded
    run_dir = synth.run(synth.Run("fail", [[synth.cartpole(2), failed]]))
    export_dataset([run_dir], tmp_path / "out", configs=["steps", "episodes"])
    steps = _rows(tmp_path / "out", "steps")
    assert [r["policy_failure"] for r in steps] == [None, None, "exception", "exception", "exception"]
    assert [r["next_observation"] is None for r in steps] == [False, False, False, False, True]
    assert steps[3]["next_observation"] == failed.observations[2]
    assert [r["terminated"] for r in steps] == [False, True, False, False, False]
    episodes = _rows(tmp_path / "out", "episodes")
    assert [(e["status"], e["policy_failure"], e["failure_message"]) for e in episodes] == [
        ("ok", None, None),
        ("exception", "exception", "failed: exception"),
    ]


def test_zero_step_episode_has_an_episode_row_and_no_step_rows(synth: SimpleNamespace, tmp_path: Path) -> None:
    empty = synth.Episode([[0.0, 0.0, 0.0, 0.0]], [], terminated=False, status="timeout")
    run_dir = synth.run(synth.Run("zero", [[empty, synth.cartpole(1)]]))
    report = export_dataset([run_dir], tmp_path / "out", configs=["steps", "episodes"])
    assert report.steps == 1
    assert report.episodes == 2
    assert [r["episode_index"] for r in _rows(tmp_path / "out", "steps")] == [1]


def test_structured_spaces_become_json_text(synth: SimpleNamespace, tmp_path: Path) -> None:
    tuple_space = {"type": "Tuple", "spaces": [{"type": "Discrete", "n": 32, "start": 0}] * 3}
    episode = synth.Episode([[14, 10, 0], [20, 10, 0]], [1], rewards=[-1.0])
    run_dir = synth.run(synth.Run("blackjack", [[episode]], observation_space=tuple_space))
    report = export_dataset([run_dir], tmp_path / "out", configs=["steps"])
    assert (report.observation_encoding, report.action_encoding) == ("json", "int64")
    (row,) = _rows(tmp_path / "out", "steps")
    assert json.loads(row["observation"]) == [14, 10, 0]
    assert json.loads(row["next_observation"]) == [20, 10, 0]
    assert row["action"] == 1
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Observations are JSON text (sorted keys) because Tuple spaces have no fixed column type" in card


@pytest.mark.parametrize(
    ("observation_space", "observations", "label"),
    [
        ({"type": "Discrete", "n": 16, "start": 0}, [0, 4, 8], "int64"),
        ({"type": "Box", "shape": [2, 2], "dtype": "float64"}, [[[0.1, 0.2], [0.3, 0.4]]] * 3, "float64[2][2]"),
        ({"type": "Box", "shape": [], "dtype": "float32"}, [0.5, 1.5, 2.5], "float32"),
        ({"type": "MultiDiscrete", "nvec": [3, 4], "shape": [2]}, [[0, 1], [2, 3], [1, 1]], "int64[2]"),
        ({"type": "MultiBinary", "n": [3]}, [[0, 1, 1], [1, 0, 0], [0, 0, 0]], "int64[3]"),
        ({"type": "Box", "shape": [2], "dtype": "uint8"}, [[0, 255], [1, 2], [3, 4]], "int64[2]"),
    ],
)
def test_typed_spaces_round_trip(
    synth: SimpleNamespace, tmp_path: Path, observation_space: dict[str, Any], observations: list[Any], label: str
) -> None:
    episode = synth.Episode(observations, [0, 1])
    run_dir = synth.run(synth.Run("typed", [[episode]], observation_space=observation_space))
    report = export_dataset([run_dir], tmp_path / "out", configs=["steps"])
    assert report.observation_encoding == label
    rows = _rows(tmp_path / "out", "steps")
    assert [r["observation"] for r in rows] == observations[:2]
    assert [r["next_observation"] for r in rows] == observations[1:]


def test_runs_without_task_text_fall_back_to_json(synth: SimpleNamespace, tmp_path: Path) -> None:
    run_dir = synth.run(synth.Run("nospec", [[synth.cartpole(2)]], observation_space=None, action_space=None))
    report = export_dataset([run_dir], tmp_path / "out", configs=["steps"])
    assert (report.observation_encoding, report.action_encoding) == ("json", "json")
    rows = _rows(tmp_path / "out", "steps")
    assert [json.loads(r["action"]) for r in rows] == [0, 1]


def test_runs_with_different_spaces_share_json_columns(synth: SimpleNamespace, tmp_path: Path) -> None:
    one = synth.run(synth.Run("one", [[synth.cartpole(1)]]))
    discrete = {"type": "Discrete", "n": 4, "start": 0}
    two = synth.run(synth.Run("two", [[synth.Episode([1, 2], [0])]], observation_space=discrete))
    report = export_dataset([one, two], tmp_path / "out", configs=["steps"])
    assert report.observation_encoding == "json"
    assert [json.loads(r["observation"]) for r in _rows(tmp_path / "out", "steps")] == [[0.0, -0.0, 0.0, 1.0], 1]


def test_all_visibility_with_synthetic_judging(synth: SimpleNamespace, tmp_path: Path) -> None:
    run_dir = synth.run(
        synth.Run(
            "judged",
            [[synth.cartpole(2)], [synth.cartpole(3)]],
            validation=[synth.cartpole(4), synth.cartpole(1)],
            assessment=[synth.cartpole(5)],
        )
    )
    report = export_dataset([run_dir], tmp_path / "out", visibility="all")
    steps = report.config("steps")
    assert steps is not None
    assert [(s.split, s.rows) for s in steps.splits] == [("train", 5), ("validation", 5), ("assessment", 5)]
    (message,) = _rows(tmp_path / "out", "messages")
    assert message["reward"] == 2.5
    submissions = _rows(tmp_path / "out", "submissions")
    assert [(s["selected"], s["validation_score"], s["assessment_score"]) for s in submissions] == [
        (True, 1.5, 2.5),
        (False, None, None),
    ]
    assert "+++ b/params.json" in submissions[1]["program_diff"]


def test_run_without_submissions_offers_only_the_loadable_configs(synth: SimpleNamespace, tmp_path: Path) -> None:
    run_dir = synth.run(synth.Run("idle", []))
    report = export_dataset([run_dir], tmp_path / "out")
    assert {c.name: c.rows for c in report.configs} == {"steps": 0, "episodes": 0, "submissions": 0, "messages": 1}
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.parquet")) == [
        "messages/train-00000-of-00001.parquet"
    ]
    yaml = pytest.importorskip("yaml")
    front = yaml.safe_load((tmp_path / "out" / "README.md").read_text().split("---\n")[1])
    assert [c["config_name"] for c in front["configs"]] == ["messages"]
    (message,) = _rows(tmp_path / "out", "messages")
    assert message["messages"][0]["role"] == "user"
    assert message["messages"][0]["content"].startswith("# task for cartpole")
    assert (message["reward"], message["submissions"]) == (None, 0)


_IMAGE_DICT = {
    "type": "Dict",
    "spaces": {
        "image": {"type": "Box", "shape": [32, 32, 3], "dtype": "uint8", "low": 0, "high": 255},
        "mission": {"type": "Text", "min_length": 1, "max_length": 10, "charset": "go 0123"},
    },
}


def _image_steps(count: int) -> list[Any]:
    import numpy as np

    return [{"image": np.full((32, 32, 3), t, dtype=np.uint8), "mission": f"go {t}"} for t in range(count)]


def test_format_2_episodes_export_as_struct_rows_with_a_null_final_observation(
    synth: SimpleNamespace, tmp_path: Path
) -> None:
    import numpy as np
    from PIL import Image

    failed = synth.Episode(_image_steps(2), [0, 1], terminated=False, status="exception")  # no final observation
    run_dir = synth.run(synth.Run("pixels", [[synth.Episode(_image_steps(3), [1, 0]), failed]], _IMAGE_DICT))
    report = export_dataset([run_dir], tmp_path / "out", configs=["steps"])
    assert report.observation_encoding == "{image: image[32][32][3], mission: string}"
    rows = _rows(tmp_path / "out", "steps")
    assert [r["observation"]["mission"] for r in rows] == ["go 0", "go 1", "go 0", "go 1"]
    assert [r["next_observation"] is None for r in rows] == [False, False, False, True]
    first = Image.open(io.BytesIO(rows[1]["next_observation"]["image"]["bytes"]))
    assert np.array_equal(np.asarray(first), np.full((32, 32, 3), 2, dtype=np.uint8))
    json_report = export_dataset([run_dir], tmp_path / "json", configs=["steps"], json_spaces=True)
    assert json_report.observation_encoding == "json"
    (row, *_) = _rows(tmp_path / "json", "steps")
    assert json.loads(row["observation"]) == {"image": np.zeros((32, 32, 3), dtype=int).tolist(), "mission": "go 0"}
