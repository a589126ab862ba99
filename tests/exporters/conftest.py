"""Shared fixtures for exporter tests: one real recorded Run, and a writer of small synthetic Runs.

The real Run is recorded once per session with the kernel's ``run()`` (hill-climb Agent, CartPole).
Synthetic Runs are written event by event through the Ledger API, to reach cases a real Run rarely
shows (Policy failures, structured spaces, odd values) in milliseconds.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import tqdm
from evoledger.ledger.canonical import canonical_json, digest_of
from evoledger.ledger.events import (
    AgentStarted,
    AssessmentFinished,
    BenchmarkIdentity,
    CandidateScore,
    CandidateSelected,
    EpisodeFailure,
    EpisodeFinished,
    EpisodePlanned,
    EpisodeStarted,
    EpisodeSummary,
    EventBase,
    FeedbackPublished,
    FinishAccepted,
    ProgramSnapshotted,
    RunCreated,
    RunEnded,
    SubmissionAccepted,
    ValidationEpisodeFinished,
)
from evoledger.ledger.store import Ledger
from evoledger.ledger.trajectories import Trajectory, encode_trajectory

# datasets' progress bars start tqdm's monitor thread, which would outlive these tests; replay only forks a
# side process in a single-threaded process, so keep this test process single-threaded.
tqdm.tqdm.monitor_interval = 0

CARTPOLE_OBS = {
    "type": "Box",
    "shape": [4],
    "dtype": "float32",
    "low": [-4.8, None, -0.42, None],
    "high": [4.8, None, 0.42, None],
}
DISCRETE_2 = {"type": "Discrete", "n": 2, "start": 0}


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[Path]:
    """A short directory under /tmp (Unix socket paths are length-limited)."""
    root = Path(tempfile.mkdtemp(prefix="evx-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def recorded_run(tmp_root: Path) -> Path:
    """A real, finished CartPole Run recorded by the kernel (about 5 s)."""
    from evoledger.kernel.run import AssessmentConfig, RunConfig, ValidationConfig, run

    run_dir = tmp_root / "real"
    config = RunConfig(
        episode_budget=12,
        validation=ValidationConfig(episodes=2),
        assessment=AssessmentConfig(episodes=3),
        seed=3,
    )
    result = run(config, record_to=run_dir)
    assert result.reason == "finished"
    return run_dir


@dataclass
class SynthEpisode:
    """One synthetic Episode: observations (steps + 1 unless failed early), actions, rewards, outcome."""

    observations: list[Any]
    actions: list[Any]
    rewards: list[float] | None = None
    terminated: bool = True
    truncated: bool = False
    status: str = "ok"

    def trajectory(self) -> Trajectory:
        rewards = self.rewards if self.rewards is not None else [1.0] * len(self.actions)
        return Trajectory(self.observations, self.actions, rewards, self.terminated, self.truncated)


@dataclass
class SynthRun:
    """What a synthetic Run holds: Submissions (each a list of Episodes), judging, spaces."""

    run_id: str
    submissions: Sequence[Sequence[SynthEpisode]]
    observation_space: dict[str, Any] | None = field(default_factory=lambda: dict(CARTPOLE_OBS))
    action_space: dict[str, Any] | None = field(default_factory=lambda: dict(DISCRETE_2))
    validation: Sequence[SynthEpisode] = ()
    assessment: Sequence[SynthEpisode] = ()
    benchmark: str = "cartpole"
    seeds: list[int] = field(default_factory=list)


def _outcome(ep: SynthEpisode, digest: str) -> dict[str, Any]:
    failure = None if ep.status == "ok" else EpisodeFailure(code=ep.status, message=f"failed: {ep.status}")  # type: ignore[arg-type]
    rewards = ep.rewards if ep.rewards is not None else [1.0] * len(ep.actions)
    return {
        "status": ep.status,
        "episode_return": float(sum(rewards)),
        "steps": len(ep.actions),
        "terminated": ep.terminated,
        "truncated": ep.truncated,
        "trajectory_digest": digest,
        "failure": failure,
        "duration_ms": 1,
    }


def write_synthetic_run(root: Path, spec: SynthRun) -> Path:
    """Write ``spec`` as a Run ledger in ``root / spec.run_id``; records the Host seeds in ``spec.seeds``."""
    run_dir = root / spec.run_id
    with Ledger.create(run_dir) as ledger:
        put = ledger.objects.put
        public: dict[str, Any] = {"id": spec.benchmark, "score_direction": "maximize"}
        if spec.observation_space is not None and spec.action_space is not None:
            public |= {"observation_space": spec.observation_space, "action_space": spec.action_space}
        task = f"# task for {spec.benchmark}\n\n```json\n{json.dumps(public, indent=2)}\n```\n"
        policy = put(b"def make_policy(context):\n    return None\n")
        manifest = digest_of(b"manifest-" + spec.run_id.encode())
        events: list[EventBase] = [
            RunCreated(
                run_id=spec.run_id,
                benchmark=BenchmarkIdentity.of(spec.benchmark, {"n": 1}),
                episode_budget=1000,
                max_submissions=100,
                pool_commitment=digest_of(b"pool"),
                seed=7,
                created_by="test",
            ),
            AgentStarted(agent="test", command=("agent",), pid=1, task_digest=put(task.encode())),
            ProgramSnapshotted(
                program_digest=manifest,
                files={"policy.py": policy},
                entry_point="policy.py",
                file_count=1,
                total_bytes=10,
                source="initial",
            ),
        ]
        budget = 1000
        sids: list[str] = []
        for number, episodes in enumerate(spec.submissions, start=1):
            sid = f"submission-{number:06d}"
            sids.append(sid)
            program = digest_of(f"{spec.run_id}-{number}".encode())
            params = put(f'{{"k": {number}}}\n'.encode())
            events.append(
                ProgramSnapshotted(
                    program_digest=program,
                    files={"policy.py": policy, "params.json": params},
                    entry_point="policy.py",
                    file_count=2,
                    total_bytes=20,
                    source="submission",
                )
            )
            indices = list(range(len(episodes)))
            events.append(
                SubmissionAccepted(
                    submission_id=sid,
                    program_digest=program,
                    episodes=tuple(indices),
                    budget_before=budget,
                    budget_after=budget - len(indices),
                    submissions_used=number,
                )
            )
            budget -= len(indices)
            for index, ep in enumerate(episodes):
                seed = 10**15 + 7919 * (len(spec.seeds) + 1)
                spec.seeds.append(seed)
                events.append(EpisodePlanned(split="train", index=index, env_seed=seed, policy_seed=seed + 1))
                spec.seeds.append(seed + 1)
                events.append(EpisodeStarted(submission_id=sid, split="train", index=index))
                digest = put(encode_trajectory(ep.trajectory()))
                events.append(EpisodeFinished(submission_id=sid, split="train", index=index, **_outcome(ep, digest)))
            events.append(
                FeedbackPublished(
                    submission_id=sid,
                    score=float(number),
                    content_digest=put(canonical_json({"n": number})),
                    budget_used=1000 - budget,
                    budget_left=budget,
                )
            )
        if sids:
            events.append(FinishAccepted(candidates=tuple(sids[:2]), budget_left=budget))
            chosen = sids[0]
            for index, ep in enumerate(spec.validation):
                digest = put(encode_trajectory(ep.trajectory()))
                events.append(
                    ValidationEpisodeFinished(
                        submission_id=chosen, program_digest=manifest, index=index, **_outcome(ep, digest)
                    )
                )
            events.append(
                CandidateSelected(
                    submission_id=chosen,
                    program_digest=manifest,
                    scores=(
                        CandidateScore(
                            submission_id=chosen,
                            program_digest=manifest,
                            score=1.5,
                            policy_failures=0,
                            finish_position=1,
                        ),
                    ),
                    tie_break="test",
                )
            )
            summaries = [
                EpisodeSummary(
                    index=i,
                    status=ep.status,  # type: ignore[arg-type]
                    episode_return=float(len(ep.actions)),
                    steps=len(ep.actions),
                    trajectory_digest=put(encode_trajectory(ep.trajectory())),
                )
                for i, ep in enumerate(spec.assessment)
            ]
            events.append(
                AssessmentFinished(
                    submission_id=chosen,
                    program_digest=manifest,
                    score=2.5,
                    episode_count=len(summaries),
                    episodes=tuple(summaries),
                )
            )
            events.append(RunEnded(reason="finished", selected_submission_id=chosen))
        ledger.append(events)
    return run_dir


def cartpole_episode(steps: int, offset: float = 0.0, **kwargs: Any) -> SynthEpisode:
    """A CartPole-shaped Episode with float32-exact observations."""
    observations = [[offset + t * 0.25, -t * 0.5, t * 0.125, 1.0] for t in range(steps + 1)]
    return SynthEpisode(observations, [t % 2 for t in range(steps)], **kwargs)


@pytest.fixture
def synth(tmp_path: Path) -> SimpleNamespace:
    """Synthetic Run helpers: ``synth.run(synth.Run(...))`` writes one under ``tmp_path`` and returns its path."""
    return SimpleNamespace(
        run=lambda spec: write_synthetic_run(tmp_path, spec),
        Run=SynthRun,
        Episode=SynthEpisode,
        cartpole=cartpole_episode,
        CARTPOLE_OBS=CARTPOLE_OBS,
        DISCRETE_2=DISCRETE_2,
    )
