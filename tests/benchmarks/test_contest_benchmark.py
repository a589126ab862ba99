"""The contest Benchmark frame: Episode seeds by the reference harness's formula, no settings, Feedback frame."""

from __future__ import annotations

import hashlib

import pytest
from evoledger.benchmarks.ahc057 import make_ahc057
from evoledger.benchmarks.contest_benchmark import contest_episode_seed
from evoledger.kernel.authoring import EpisodeRecord
from pydantic import ValidationError


def test_episode_seeds_follow_the_reference_formula() -> None:
    domain = b"evopolicygym-molecules/episode-seed/v1\0"
    message = domain + b"train" + b"\0" + (123).to_bytes(8, "big") + (4).to_bytes(8, "big")
    assert contest_episode_seed("molecules", "train", 123, 4) == int.from_bytes(
        hashlib.sha256(message).digest()[:8], "big"
    )
    episodes = make_ahc057().episodes("validation", seed=123, count=3)
    assert [e.seed for e in episodes] == [contest_episode_seed("molecules", "validation", 123, i) for i in range(3)]
    assert [e.index for e in episodes] == [0, 1, 2]
    assert all(e.scenario is None for e in episodes)


def test_a_contest_takes_no_settings() -> None:
    with pytest.raises(ValidationError):
        make_ahc057(max_episode_steps=5)


def test_the_feedback_frame_counts_statuses_and_infra_faults_apart() -> None:
    failed = EpisodeRecord("train", 0, "timeout", 0.0, 10, False, False, {}, "x" * 1000)
    fault = EpisodeRecord("train", 1, "infra_fault", 0.0, 0, False, False)
    feedback = make_ahc057().feedback([failed, fault])
    assert feedback.score == 0.0  # the failed Episode scores the failure score; the infra fault is left out
    assert feedback.content["scored_episodes"] == 1
    assert feedback.content["statuses"] == {"infra_fault": 1, "timeout": 1}
    assert len(feedback.content["failures"][0]["message"]) == 400
    assert feedback.artifacts == ()  # no trajectory: no trace
