"""The Run: configuration, the Host coordinator, the Session loop, judging and ``run()``."""

from evoledger.kernel.run.config import (
    AgentConfig,
    AssessmentConfig,
    FinishBudgetPolicy,
    InfraRefundConfig,
    RunConfig,
    ValidationConfig,
)
from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.runner import RunResult, SubmissionRow, ValidationRow, continue_run, run

__all__ = [
    "AgentConfig",
    "AssessmentConfig",
    "FinishBudgetPolicy",
    "InfraRefundConfig",
    "RunConfig",
    "RunLayout",
    "RunResult",
    "SubmissionRow",
    "ValidationConfig",
    "ValidationRow",
    "continue_run",
    "run",
]
