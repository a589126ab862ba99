"""The Host's answer models keep the wire format the client reads (byte for byte) and the Event literals."""

from __future__ import annotations

import subprocess
import sys

import pytest
from evoledger.kernel.session.answers import (
    EpisodeAnswer,
    FinishAnswer,
    StatusAnswer,
    SubmissionAnswer,
    SubmitAnswer,
)
from evoledger.kernel.session.frames import encode_frame
from pydantic import ValidationError


def _body(answer: StatusAnswer | SubmitAnswer | FinishAnswer) -> bytes:
    return encode_frame(answer.wire())[4:]


def test_a_submit_answer_is_sent_as_before() -> None:
    answer = SubmitAnswer(
        submission_id="submission-000002",
        score=1.5,
        episodes=[EpisodeAnswer(index=0, status="ok", episode_return=3.0, steps=4)],
        infra_faults=[3],
        budget_used=4,
        budget_left=6,
        submissions_left=8,
        feedback="feedback/submission-000002/feedback.json",
    )
    assert _body(answer) == (
        b'{"budget_left":6,"budget_used":4,"episodes":[{"index":0,"return":3.0,"status":"ok","steps":4}],'
        b'"feedback":"feedback/submission-000002/feedback.json","infra_faults":[3],"score":1.5,'
        b'"submission_id":"submission-000002","submissions_left":8}'
    )


def test_status_and_finish_answers_are_sent_as_before() -> None:
    status = StatusAnswer(
        budget_total=10,
        budget_used=4,
        budget_left=6,
        submissions_used=2,
        submissions_left=8,
        max_submissions=10,
        pool_size=5,
        max_episodes_per_submission=5,
        max_candidates=1,
        finish_budget_policy="allow_early",
        score_direction="maximize",
        primary_metric="episode_return",
        finished=False,
        submissions=[SubmissionAnswer(submission_id="submission-000001", score=None, episodes=2)],
    )
    assert _body(status) == (
        b'{"budget_left":6,"budget_total":10,"budget_used":4,"finish_budget_policy":"allow_early","finished":false,'
        b'"max_candidates":1,"max_episodes_per_submission":5,"max_submissions":10,"pool_size":5,'
        b'"primary_metric":"episode_return","score_direction":"maximize",'
        b'"submissions":[{"episodes":2,"score":null,"submission_id":"submission-000001"}],'
        b'"submissions_left":8,"submissions_used":2}'
    )
    finish = FinishAnswer(finished=True, candidates=["submission-000001"], budget_left=6)
    assert _body(finish) == b'{"budget_left":6,"candidates":["submission-000001"],"finished":true}'


def test_an_episode_status_outside_the_event_literal_is_refused() -> None:
    with pytest.raises(ValidationError):
        EpisodeAnswer(index=0, status="fine", episode_return=0.0, steps=1)


def test_the_session_client_does_not_import_the_answer_models() -> None:
    code = "import sys, evoledger.kernel.session.client; print('evoledger.kernel.session.answers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
