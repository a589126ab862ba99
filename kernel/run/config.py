"""RunConfig: every setting of a Run, validated with cross-field checks and recorded in ``run-created``."""

from __future__ import annotations

from typing import Literal, Self

from evoledger.kernel.agents.sandbox import AgentIsolation
from evoledger.kernel.execution import Isolation, PolicyLimits
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import ConfigError
from evoledger.projections.refunds import DEFAULT_REFUND_FRACTION, DEFAULT_REFUND_MINIMUM, RefundRule
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "PROTOCOL_EPISODE_CAP",
    "AgentConfig",
    "AssessmentConfig",
    "FinishBudgetPolicy",
    "InfraRefundConfig",
    "RunConfig",
    "ValidationConfig",
]

PROTOCOL_EPISODE_CAP = 10_000
"""No single Submission may select more Episodes than this, whatever the configuration says."""

FinishBudgetPolicy = Literal["allow_early", "require_budget_exhaustion"]


class ValidationConfig(BaseModel):
    """Private Validation: every Candidate runs the same ``episodes`` on the validation split."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episodes: int = Field(default=10, ge=0, le=100_000)
    max_candidates: int = Field(default=3, ge=1, le=100)


class AssessmentConfig(BaseModel):
    """Held-out Assessment of the selected Program only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episodes: int = Field(default=20, ge=0, le=100_000)


class InfraRefundConfig(BaseModel):
    """How many infra faults are refunded (the rule: ``projections.refunds``).

    ``limit(n) = max(minimum, floor(fraction * n))``. A Submission's infra fault is refunded while the
    Submission has had fewer than ``limit(its Episodes)`` refunds and the Run fewer than
    ``limit(episode_budget)``; past that it is charged and reported as suspicious. In Validation and
    Assessment, ``limit(the split's Episodes)`` bounds one Candidate's retries of faulted Episodes; a
    Validation Episode still faulting after them counts as the Candidate's failure.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    minimum: int = Field(default=DEFAULT_REFUND_MINIMUM, ge=0, le=1_000_000)
    fraction: float = Field(default=DEFAULT_REFUND_FRACTION, ge=0.0, le=1.0)

    @property
    def rule(self) -> RefundRule:
        """The pure rule the Host and the audit both apply."""
        return RefundRule(self.minimum, self.fraction)


class AgentConfig(BaseModel):
    """Which Agent evolves the Program: a registry name (``hill-climb``, ``claude-code``, ``command:...``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "hill-climb"
    model: str | None = None
    args: tuple[str, ...] = ()


class RunConfig(BaseModel):
    """All settings of a Run. Defaults give a complete small CartPole Run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: BenchmarkRef = Field(default_factory=lambda: BenchmarkRef(name="cartpole"))
    episode_budget: int = Field(default=100, ge=1, le=10_000_000)
    episode_pool_size: int | None = Field(default=None, ge=1, le=10_000_000)
    max_submissions: int | None = Field(default=None, ge=1, le=10_000_000)
    max_episodes_per_submission: int | None = Field(default=None, ge=1, le=PROTOCOL_EPISODE_CAP)
    finish_budget_policy: FinishBudgetPolicy = "allow_early"
    bulk_feedback_retention_bytes: int = Field(default=1 << 30, ge=0)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    assessment: AssessmentConfig = Field(default_factory=AssessmentConfig)
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    """``None``: the Run's secret key is random. A seed derives the key: the plan is reproducible, and anyone who
    knows the seed can predict every Host seed, held-out Validation and Assessment Episodes included."""
    limits: PolicyLimits = Field(default_factory=PolicyLimits)
    agent_timeout_seconds: float = Field(default=3600.0, gt=0)
    finish_grace_seconds: float = Field(default=5.0, ge=0)
    workers: int = Field(default=1, ge=1, le=256)
    isolation: Isolation = "auto"
    """How Policies are isolated; :func:`~evoledger.kernel.run.run` records the resolved ``local`` or ``bwrap``."""
    agent_isolation: AgentIsolation = "auto"
    """How the Agent is isolated (``kernel.agents.sandbox``): ``bwrap`` sandboxes it to its workspace and the session
    socket; :func:`~evoledger.kernel.run.run` records the resolved ``local`` or ``bwrap``."""
    fallback: Literal["none", "best_public"] = "none"
    infra_refunds: InfraRefundConfig = Field(default_factory=InfraRefundConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)

    @property
    def pool_size(self) -> int:
        """The training pool size (defaults to the budget)."""
        return self.episode_pool_size or self.episode_budget

    @property
    def submission_limit(self) -> int:
        """How many Submissions may be accepted (defaults to the budget)."""
        return self.max_submissions or self.episode_budget

    @property
    def episodes_per_submission(self) -> int:
        """The most Episodes one Submission may select."""
        return min(self.pool_size, self.max_episodes_per_submission or PROTOCOL_EPISODE_CAP, PROTOCOL_EPISODE_CAP)

    @property
    def candidate_limit(self) -> int:
        """How many Candidates ``finish`` may name: one without Validation."""
        return self.validation.max_candidates if self.validation.episodes > 0 else 1

    @model_validator(mode="after")
    def _cross_field(self) -> Self:
        if self.finish_budget_policy == "require_budget_exhaustion":
            reachable = self.submission_limit * self.episodes_per_submission
            if reachable < self.episode_budget:
                raise ConfigError(
                    f"finish_budget_policy 'require_budget_exhaustion' needs the budget {self.episode_budget} to be "
                    f"spendable, but {self.submission_limit} submissions x {self.episodes_per_submission} Episodes "
                    f"each = {reachable}; raise max_submissions or max_episodes_per_submission, or lower the budget"
                )
        return self
