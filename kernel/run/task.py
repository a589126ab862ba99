"""The task text a Run hands its Agent, built from the public spec and the Run's configuration."""

from __future__ import annotations

from evoledger.kernel.agents import TaskFacts, render_task_text
from evoledger.kernel.authoring import Benchmark
from evoledger.kernel.run.config import RunConfig

__all__ = ["task_text_for"]


def task_text_for(
    benchmark: Benchmark, config: RunConfig, *, resumed: bool = False, skills: tuple[str, ...] = ()
) -> str:
    """Everything the Agent may rely on, and nothing Host-private (no seeds, no validation data).

    ``skills`` names the guides placed in the workspace's ``skills/`` folder (``kernel.agents.agent_skills``).
    """
    return render_task_text(
        TaskFacts(
            benchmark=benchmark.spec,
            episode_budget=config.episode_budget,
            pool_size=config.pool_size,
            max_submissions=config.submission_limit,
            max_episodes_per_submission=config.episodes_per_submission,
            finish_budget_policy=config.finish_budget_policy,
            max_candidates=config.candidate_limit,
            validation_episodes=config.validation.episodes,
            bulk_retention_bytes=config.bulk_feedback_retention_bytes,
            resumed=resumed,
            skills=skills,
            policy_abi=config.policy_abi,
        )
    )
