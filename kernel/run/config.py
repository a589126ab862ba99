"""RunConfig: every setting of a Run, validated with cross-field checks and recorded in ``run-created``."""

from __future__ import annotations

from typing import Any, Literal, Self

from evoledger.kernel.agents.sandbox import AgentIsolation
from evoledger.kernel.execution import Isolation, PolicyLimits
from evoledger.kernel.execution.abi import DEFAULT_POLICY_ABI, PolicyAbi, check_policy_abi
from evoledger.kernel.policy_abi_setting import policy_abi_field, without_default_policy_abi
from evoledger.kernel.registry import BenchmarkRef
from evoledger.ledger.errors import ConfigError
from evoledger.projections.refunds import DEFAULT_REFUND_FRACTION, DEFAULT_REFUND_MINIMUM, RefundRule
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

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

    episodes: int = Field(
        default=10,
        ge=0,
        le=100_000,
        description="Private Validation Episodes each Candidate runs (the same ones for all); 0: no Validation, "
        "the Agent names one Candidate and it is selected.",
    )
    max_candidates: int = Field(
        default=3, ge=1, le=100, description="How many Candidates the Agent may name when it finishes."
    )


class AssessmentConfig(BaseModel):
    """Held-out Assessment of the selected Program only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episodes: int = Field(
        default=20, ge=0, le=100_000, description="Held-out Assessment Episodes of the selected Candidate; 0: none."
    )


class InfraRefundConfig(BaseModel):
    """How many infra faults are refunded (the rule: ``projections.refunds``).

    ``limit(n) = max(minimum, floor(fraction * n))``. A Submission's infra fault is refunded while the
    Submission has had fewer than ``limit(its Episodes)`` refunds and the Run fewer than
    ``limit(episode_budget)``; past that it is charged and reported as suspicious. In Validation and
    Assessment, ``limit(the split's Episodes)`` bounds one Candidate's retries of faulted Episodes; a
    Validation Episode still faulting after them counts as the Candidate's failure.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    minimum: int = Field(
        default=DEFAULT_REFUND_MINIMUM,
        ge=0,
        le=1_000_000,
        description="Infra faults refunded at least, whatever the Episode count (limit = max(minimum, fraction x n)).",
    )
    fraction: float = Field(
        default=DEFAULT_REFUND_FRACTION,
        ge=0.0,
        le=1.0,
        description="Share of n Episodes whose infra faults are refunded (limit = max(minimum, fraction x n)); "
        "past the limit they are charged and reported as suspicious.",
    )

    @property
    def rule(self) -> RefundRule:
        """The pure rule the Host and the audit both apply."""
        return RefundRule(self.minimum, self.fraction)


class AgentConfig(BaseModel):
    """Which Agent evolves the Program: a registry name (``hill-climb``, ``claude-code``, ``command:...``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(
        default="hill-climb",
        description="The Agent: hill-climb, baseline, codex, claude-code, kimi-code, qoder, or command:... "
        "(a command line run in the workspace).",
    )
    model: str | None = Field(default=None, description="Model name passed to a coding-agent CLI.")
    args: tuple[str, ...] = Field(default=(), description="Extra argument for the Agent's command line (repeatable).")
    effort: str | None = Field(default=None, description="Reasoning effort for a coding-agent CLI (low, high, ...).")
    executable: str | None = Field(default=None, description="The coding-agent CLI's program (a name or a path).")
    view_image: bool = Field(default=False, description="Let Codex view images (-c tools.view_image=true).")
    home: str | None = Field(
        default=None, description="The CLI's own configuration folder (default: a fresh one per Run)."
    )

    def adapter_options(self) -> dict[str, str | bool]:
        """The options set here, as the adapter's keyword arguments (``make_agent``); unset ones are left out."""
        found = {"effort": self.effort, "executable": self.executable, "view_image": self.view_image, "home": self.home}
        return {key: value for key, value in found.items() if value not in (None, False)}


class RunConfig(BaseModel):
    """All settings of a Run. Defaults give a complete small CartPole Run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: BenchmarkRef = Field(
        default_factory=lambda: BenchmarkRef(name="cartpole"),
        description="The Benchmark by name and its configuration (KEY=VALUE settings).",
    )
    episode_budget: int = Field(
        default=100, ge=1, le=10_000_000, description="Training Episodes the Agent may spend (each use costs one)."
    )
    episode_pool_size: int | None = Field(
        default=None, ge=1, le=10_000_000, description="Size of the training Episode pool (default: the budget)."
    )
    max_submissions: int | None = Field(
        default=None, ge=1, le=10_000_000, description="Submissions the Host accepts (default: the budget)."
    )
    max_episodes_per_submission: int | None = Field(
        default=None,
        ge=1,
        le=PROTOCOL_EPISODE_CAP,
        description="Most Episodes one Submission may select (default: the pool size).",
    )
    finish_budget_policy: FinishBudgetPolicy = Field(
        default="allow_early",
        description="allow_early: the Agent may finish with budget left; require_budget_exhaustion: finish is "
        "refused while budget remains.",
    )
    bulk_feedback_retention_bytes: int = Field(
        default=1 << 30,
        ge=0,
        description="Bytes of bulk Feedback Artifacts kept; past it the oldest Submissions' bulk Artifacts are "
        "evicted (never the newest Submission's).",
    )
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    assessment: AssessmentConfig = Field(default_factory=AssessmentConfig)
    seed: int | None = Field(
        default=None,
        ge=0,
        lt=2**63,
        description="Derive the Run's secret key from this seed, for a reproducible plan. WARNING: anyone who knows "
        "the seed can predict every held-out Validation and Assessment Episode. Default: a random secret key "
        "(unpredictable).",
    )
    limits: PolicyLimits = Field(default_factory=PolicyLimits)
    agent_timeout_seconds: float = Field(
        default=3600.0, gt=0, description="Seconds the Agent may work before it is stopped (agent_timeout)."
    )
    finish_grace_seconds: float = Field(
        default=5.0, ge=0, description="Seconds between SIGTERM and SIGKILL when the Agent is stopped after finish."
    )
    workers: int = Field(default=1, ge=1, le=256, description="Episodes run in parallel (results are identical).")
    isolation: Isolation = Field(
        default="auto",
        description="How Policies are isolated: bwrap (a bubblewrap sandbox per worker: no view of the Host, its "
        "/proc or the run directory), local (plain processes), auto (bwrap where it is installed and works, else "
        "local). The Run records the one used.",
    )
    agent_isolation: AgentIsolation = Field(
        default="auto",
        description="How the Agent is isolated: bwrap (a bubblewrap sandbox: the workspace read-write and the "
        "session socket, the rest of the run directory, the Host's processes and your evoledger keys out of sight; "
        "no network unless the Agent is a coding-agent CLI that needs its API), local (a plain process), auto "
        "(bwrap where it is installed and works, else local).",
    )
    fallback: Literal["none", "best_public"] = Field(
        default="none",
        description="When the Agent ends without finishing (no Candidates named): none (nothing is selected) or "
        "best_public (its Submission with the best public score is judged as the one Candidate).",
    )
    infra_refunds: InfraRefundConfig = Field(default_factory=InfraRefundConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    policy_abi: PolicyAbi = policy_abi_field()

    @model_serializer(mode="wrap")
    def _omit_default_policy_abi(self, handler: SerializerFunctionWrapHandler) -> Any:
        return without_default_policy_abi(handler(self))

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
        if self.policy_abi != DEFAULT_POLICY_ABI:  # before anything is created: a Benchmark without it is refused
            check_policy_abi(self.policy_abi, self.benchmark.name)
        if self.finish_budget_policy == "require_budget_exhaustion":
            reachable = self.submission_limit * self.episodes_per_submission
            if reachable < self.episode_budget:
                raise ConfigError(
                    f"finish_budget_policy 'require_budget_exhaustion' needs the budget {self.episode_budget} to be "
                    f"spendable, but {self.submission_limit} submissions x {self.episodes_per_submission} Episodes "
                    f"each = {reachable}; raise max_submissions or max_episodes_per_submission, or lower the budget"
                )
        return self
