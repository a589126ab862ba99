"""Round trip: a real recorded Run exported, then loaded with ``datasets`` (offline) and pyarrow."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from evoledger.exporters import ExportReport, export_dataset
from evoledger.kernel.session.selectors import format_selector
from evoledger.ledger.events import from_stored
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import decode_trajectory

CONFIGS = ("steps", "episodes", "submissions", "messages")


def _events(run_dir: Path, *kinds: str) -> list[Any]:
    with Ledger.open(run_dir) as ledger:
        return [from_stored(row) for row in ledger.records(kinds=kinds)]


def _trajectory(run_dir: Path, digest: str) -> Any:
    with Ledger.open(run_dir) as ledger:
        return decode_trajectory(ledger.objects.get(digest))


def _front_matter(out: Path) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with datasets: pip install 'evoledger[export]'")
    text = (out / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


@pytest.fixture(scope="module")
def datasets() -> Any:
    """The ``datasets`` library, offline (the variables must be set before its first import)."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return pytest.importorskip("datasets", reason="loading needs datasets: pip install 'evoledger[export]'")


@pytest.fixture(scope="module")
def exported(recorded_run: Path, tmp_root: Path) -> SimpleNamespace:
    public = tmp_root / "public"
    everything = tmp_root / "all"
    return SimpleNamespace(
        public=export_dataset([recorded_run], public),
        all=export_dataset([recorded_run], everything, visibility="all"),
        public_dir=public,
        all_dir=everything,
    )


def _table(out: Path, config: str, split: str = "train") -> Any:
    return pq.read_table(out / config / f"{split}-00000-of-00001.parquet")


def test_datasets_loads_every_config_offline(
    datasets: Any, exported: SimpleNamespace, recorded_run: Path, tmp_path: Path
) -> None:
    finished = _events(recorded_run, "episode-finished")
    expected = {
        "steps": sum(e.steps for e in finished),
        "episodes": len(finished),
        "submissions": len(_events(recorded_run, "submission-accepted")),
        "messages": 1,
    }
    assert expected["steps"] > 0
    for config in CONFIGS:
        loaded = datasets.load_dataset(str(exported.public_dir), config, cache_dir=str(tmp_path / "cache"))
        assert list(loaded) == ["train"], config
        assert loaded["train"].num_rows == expected[config], config
        assert exported.public.config(config).rows == expected[config]
    steps = datasets.load_dataset(str(exported.public_dir), "steps", cache_dir=str(tmp_path / "cache"))["train"]
    assert steps.features["observation"].feature.dtype == "float32"
    assert steps.features["action"].dtype == "int64"


def test_steps_equal_the_ledger_trajectories(exported: SimpleNamespace, recorded_run: Path) -> None:
    rows = _table(exported.public_dir, "steps").to_pylist()
    by_episode: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_episode[(row["submission_id"], row["episode_index"])].append(row)
    finished = _events(recorded_run, "episode-finished")
    assert set(by_episode) == {(e.submission_id, e.index) for e in finished}
    for event in finished:
        trajectory = _trajectory(recorded_run, event.trajectory_digest)
        episode = by_episode[(event.submission_id, event.index)]
        assert [r["step"] for r in episode] == list(range(event.steps))
        observations = np.asarray(trajectory.observations, dtype=np.float32)
        assert np.array_equal(np.asarray([r["observation"] for r in episode], dtype=np.float32), observations[:-1])
        assert np.array_equal(np.asarray([r["next_observation"] for r in episode], dtype=np.float32), observations[1:])
        assert [r["action"] for r in episode] == list(trajectory.actions)
        assert [r["reward"] for r in episode] == list(trajectory.rewards)
        assert [r["terminated"] for r in episode] == [False] * (event.steps - 1) + [trajectory.terminated]
        assert [r["truncated"] for r in episode] == [False] * (event.steps - 1) + [trajectory.truncated]
        assert {r["split"] for r in episode} == {"train"}
        assert {r["policy_failure"] for r in episode} == {None if event.status == "ok" else event.status}


def _all_text(out: Path) -> str:
    parts = [(out / "README.md").read_text(encoding="utf-8")]
    for path in sorted(out.rglob("*.parquet")):
        parts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
    return "\n".join(parts)


def test_public_export_has_no_private_episode_and_no_host_seed(exported: SimpleNamespace, recorded_run: Path) -> None:
    assert sorted(p.name for p in exported.public_dir.rglob("*.parquet")) == ["train-00000-of-00001.parquet"] * 4
    for config in ("steps", "episodes"):
        assert set(_table(exported.public_dir, config).column("split").to_pylist()) == {"train"}
    text = _all_text(exported.public_dir)
    planned = _events(recorded_run, "episode-planned")
    seeds = {str(s) for e in planned for s in (e.env_seed, e.policy_seed) if s >= 10**6}
    assert len(seeds) > 10
    assert not [seed for seed in seeds if seed in text]
    public_digests = {e.trajectory_digest for e in _events(recorded_run, "episode-finished")}
    private = {e.trajectory_digest for e in _events(recorded_run, "validation-episode-finished")}
    for assessment in _events(recorded_run, "assessment-finished"):
        private |= {s.trajectory_digest for s in assessment.episodes}
    private -= public_digests
    assert private
    assert not [digest for digest in private if digest in text]
    assert "validation-episode" not in text


def test_all_visibility_adds_validation_and_assessment(exported: SimpleNamespace, recorded_run: Path) -> None:
    validation = _events(recorded_run, "validation-episode-finished")
    (assessment,) = _events(recorded_run, "assessment-finished")
    episodes = exported.all.config("episodes")
    assert episodes.split("validation").rows == len(validation)
    assert episodes.split("assessment").rows == assessment.episode_count
    steps = exported.all.config("steps")
    assert steps.split("validation").rows == sum(e.steps for e in validation)
    assert steps.split("assessment").rows == sum(s.steps for s in assessment.episodes)
    assert steps.split("train").rows == exported.public.config("steps").rows
    rows = _table(exported.all_dir, "episodes", "assessment").to_pylist()
    assert {r["submission_id"] for r in rows} == {assessment.submission_id}
    assert [r["trajectory_digest"] for r in rows] == [s.trajectory_digest for s in assessment.episodes]
    for row in rows:
        trajectory = _trajectory(recorded_run, row["trajectory_digest"])
        assert (row["terminated"], row["truncated"]) == (trajectory.terminated, trajectory.truncated)
    front = _front_matter(exported.all_dir)
    steps_config = next(c for c in front["configs"] if c["config_name"] == "steps")
    assert [f["split"] for f in steps_config["data_files"]] == ["train", "validation", "assessment"]


def test_same_run_exports_byte_identical_files(recorded_run: Path, exported: SimpleNamespace, tmp_path: Path) -> None:
    again = export_dataset([recorded_run], tmp_path / "again")
    first = {p.relative_to(exported.public_dir): p.read_bytes() for p in exported.public_dir.rglob("*") if p.is_file()}
    second = {p.relative_to(tmp_path / "again"): p.read_bytes() for p in (tmp_path / "again").rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [str(k) for k, v in first.items() if second[k] != v] == []
    steps = again.config("steps")
    assert steps is not None
    assert steps.rows == exported.public.config("steps").rows


def test_card_yaml_parses_and_matches_the_files(datasets: Any, exported: SimpleNamespace, recorded_run: Path) -> None:
    for out in (exported.public_dir, exported.all_dir):
        front = _front_matter(out)
        assert front["license"] == "other"
        assert [c["config_name"] for c in front["configs"]] == list(CONFIGS)
        info = {entry["config_name"]: entry for entry in front["dataset_info"]}
        for config in front["configs"]:
            name = config["config_name"]
            for data in config["data_files"]:
                files = sorted(out.glob(data["path"]))
                assert len(files) == 1, data
                metadata = pq.read_metadata(files[0])
                split = next(s for s in info[name]["splits"] if s["name"] == data["split"])
                assert split["num_examples"] == metadata.num_rows
                features = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))._to_yaml_list()
                assert info[name]["features"] == features
        meta = front["evoledger"]
        with Ledger.open(recorded_run) as ledger:
            head = ledger.head()
        assert meta["runs"] == [
            {
                "run_id": recorded_run.name,
                "record": "run",
                "head_hash": head.hash,
                "events": head.count,
                "format_version": 1,
                "benchmark": "cartpole",
                "benchmark_params_hash": meta["runs"][0]["benchmark_params_hash"],
                "created_by": meta["runs"][0]["created_by"],
                "signer": None,
                "signature": "unsigned",
            }
        ]
        assert meta["export_format"] == "evoledger.dataset/2"
        assert meta["ledger_format_version"] == 1


def test_submissions_carry_outcome_labels(exported: SimpleNamespace, recorded_run: Path) -> None:
    rows = _table(exported.public_dir, "submissions").to_pylist()
    accepted = _events(recorded_run, "submission-accepted")
    feedback = {e.submission_id: e for e in _events(recorded_run, "feedback-published")}
    (ended,) = _events(recorded_run, "run-ended")
    (finish,) = _events(recorded_run, "finish-accepted")
    (assessment,) = _events(recorded_run, "assessment-finished")
    assert [r["submission_id"] for r in rows] == [e.submission_id for e in accepted]
    assert [r["selected"] for r in rows].count(True) == 1
    for row, event in zip(rows, accepted, strict=True):
        sid = event.submission_id
        assert row["selected"] is (sid == ended.selected_submission_id)
        assert row["candidate"] is (sid in finish.candidates)
        assert row["score"] == feedback[sid].score
        assert row["budget_left"] == feedback[sid].budget_left
        assert row["episode_selector"] == format_selector(event.episodes)
        assert row["run_assessment_score"] == assessment.score
        assert row["assessment_score"] == (assessment.score if row["selected"] else None)
        assert json.loads(row["feedback_content"])
        assert {f["path"] for f in row["program_files"]} >= {"policy.py"}
    changed = [r for r in rows[1:] if r["program_digest"] != rows[rows.index(r) - 1]["program_digest"]]
    assert changed
    assert all(r["program_diff"].startswith("diff --git a/") for r in changed)


def test_messages_replay_the_session(exported: SimpleNamespace, recorded_run: Path) -> None:
    (row,) = _table(exported.public_dir, "messages").to_pylist()
    messages = row["messages"]
    (started,) = _events(recorded_run, "agent-started")
    with Ledger.open(recorded_run) as ledger:
        task = ledger.objects.get(started.task_digest).decode("utf-8")
    assert messages[0]["role"] == "user"
    assert messages[0]["content"].startswith(task.rstrip("\n"))
    assert "## Initial Program (`program/`)" in messages[0]["content"]
    roles = Counter(m["role"] for m in messages)
    accepted = _events(recorded_run, "submission-accepted")
    assert roles["assistant"] == roles["tool"] == len(accepted) + 1  # every submission, then finish
    workspace = recorded_run / "workspace" / "feedback"
    for event in accepted:
        call_id = f"call-{event.submission_id}"
        (call,) = [m for m in messages if m["tool_calls"] and m["tool_calls"][0]["id"] == call_id]
        arguments = json.loads(call["tool_calls"][0]["function"]["arguments"])
        assert arguments["command"] == f"evoledger-session submit program --episodes {format_selector(event.episodes)}"
        assert "program_diff" in arguments
        (reply,) = [m for m in messages if m["tool_call_id"] == call_id]
        expected = (workspace / event.submission_id / "feedback.json").read_text(encoding="utf-8")
        assert reply["content"] == expected
    (finish,) = _events(recorded_run, "finish-accepted")
    last_call = messages[-2]["tool_calls"][0]
    assert json.loads(last_call["function"]["arguments"])["command"].split()[2:] == list(finish.candidates)
    (assessment,) = _events(recorded_run, "assessment-finished")
    assert row["reward"] == assessment.score
    assert row["reward_source"] == "assessment"


def test_reward_can_come_from_validation_or_best_public(recorded_run: Path, tmp_path: Path) -> None:
    (selection,) = _events(recorded_run, "candidate-selected")
    chosen = next(s.score for s in selection.scores if s.submission_id == selection.submission_id)
    export_dataset([recorded_run], tmp_path / "v", configs=["messages"], reward="validation")
    assert _table(tmp_path / "v", "messages").column("reward").to_pylist() == [chosen]
    export_dataset([recorded_run], tmp_path / "b", configs=["messages"], reward="best_public")
    best = max(e.score for e in _events(recorded_run, "feedback-published"))
    assert _table(tmp_path / "b", "messages").column("reward").to_pylist() == [best]


def test_several_runs_export_into_one_dataset(recorded_run: Path, synth: SimpleNamespace, tmp_path: Path) -> None:
    other = synth.run(synth.Run("other-run", [[synth.cartpole(3), synth.cartpole(2)]]))
    report: ExportReport = export_dataset([recorded_run, other], tmp_path / "both", configs=["steps", "episodes"])
    steps = _table(tmp_path / "both", "steps")
    counts = Counter(steps.column("run_id").to_pylist())
    assert counts["other-run"] == 5
    assert counts[recorded_run.name] == report.steps - 5
    assert [r.run_id for r in report.runs] == [recorded_run.name, "other-run"]
    front = _front_matter(tmp_path / "both")
    assert [r["run_id"] for r in front["evoledger"]["runs"]] == [recorded_run.name, "other-run"]
    assert report.observation_encoding == "float32[4]"
