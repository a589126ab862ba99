"""The task text: everything an Agent may rely on, rendered from the Run's public facts.

The text is a pure function of :class:`TaskFacts`, so the same Run configuration always gives the same text
(the Host can record its digest). It contains only public facts: no seeds, no Validation or Assessment Episodes,
no private Benchmark data. It begins with a Markdown heading (never with ``-``), so adapters may pass it as a
positional argument.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from evoledger.kernel.authoring import BenchmarkSpec
from evoledger.ledger.errors import ConfigError

__all__ = ["FINISH_POLICIES", "FinishBudgetPolicy", "TaskFacts", "render_task_text"]

FinishBudgetPolicy = Literal["allow_early", "require_budget_exhaustion"]
FINISH_POLICIES: Final = ("allow_early", "require_budget_exhaustion")


@dataclass(frozen=True, slots=True)
class TaskFacts:
    """The public facts of a Run that the task text states.

    ``validation_episodes`` is how many private Validation Episodes each Candidate runs (never their seeds);
    ``bulk_retention_bytes`` the bulk-Feedback retention limit (``None``: unlimited); ``resumed`` that this
    Agent process continues a Run after a restart (the text then says so up front); ``skills`` the file names of the
    read-only guides (Agent Skills) placed in ``skills_dir`` (empty: none, and the text does not mention them);
    ``policy_abi`` the Policy ABI (``"evopolicygym"`` adds that contract's values to the Policy contract).
    """

    benchmark: BenchmarkSpec
    episode_budget: int
    pool_size: int
    max_submissions: int
    max_episodes_per_submission: int
    finish_budget_policy: FinishBudgetPolicy
    max_candidates: int
    validation_episodes: int
    bulk_retention_bytes: int | None
    session_command: str = "evoledger-session"
    program_dir: str = "program"
    analysis_dir: str = "analysis"
    feedback_dir: str = "feedback"
    resumed: bool = False
    skills: tuple[str, ...] = ()
    skills_dir: str = "skills"
    policy_abi: str = "evoledger"
    """The Policy ABI the Run executes Programs under (``--policy-abi``); the default text when ``"evoledger"``."""

    def __post_init__(self) -> None:
        for name in ("episode_budget", "pool_size", "max_submissions", "max_episodes_per_submission"):
            _positive(name, getattr(self, name))
        _positive("max_candidates", self.max_candidates)
        _positive("validation_episodes", self.validation_episodes, allow_zero=True)
        if self.bulk_retention_bytes is not None:
            _positive("bulk_retention_bytes", self.bulk_retention_bytes, allow_zero=True)
        if self.finish_budget_policy not in FINISH_POLICIES:
            raise ConfigError(
                f"finish_budget_policy must be one of {FINISH_POLICIES}, got {self.finish_budget_policy!r}"
            )
        for name in ("session_command", "program_dir", "analysis_dir", "feedback_dir"):
            if not getattr(self, name).strip():
                raise ConfigError(f"TaskFacts.{name} must be a non-empty name")


def _positive(name: str, value: object, *, allow_zero: bool = False) -> None:
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"TaskFacts.{name} must be an integer >= {low}, got {value!r}")


def _spec_json(spec: BenchmarkSpec) -> str:
    data: dict[str, Any] = spec.model_dump(mode="json")
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)


def _bytes(n: int) -> str:
    return f"{n} bytes ({n / 2**20:.1f} MiB)" if n >= 2**20 else f"{n} bytes"


def selector_examples(pool_size: int) -> tuple[str, str, str]:
    """A selector that fits a pool of ``pool_size`` Episodes, the indices it selects (in words), and one index.

    ``0:2,4:8`` for pools of 8 or more; smaller pools get a smaller example (``0:2,3`` for 4 Episodes), never an
    index outside the pool.
    """
    last = pool_size - 1
    if pool_size >= 8:
        return "0:2,4:8", "0, 1, 4, 5, 6 and 7", str(min(9, last))
    if pool_size >= 4:
        return f"0:2,{last}", f"0, 1 and {last}", str(last)
    if pool_size >= 2:
        return f"0:{pool_size}", ", ".join(str(i) for i in range(last)) + f" and {last}", str(last)
    return "0:1", "0", "0"


_EVOPOLICYGYM_CONTRACT: Final = (
    "\n\nThis Run executes Programs under the EvoPolicyGym 0.3 Policy ABI (`--policy-abi evopolicygym`): "
    "`from evopolicygym.policy import PolicyContext, TensorValue` works inside the Policy process, "
    "`context.observation_space` and `context.action_space` are plain-data descriptions (dicts with a `type`), "
    "observations follow EvoPolicyGym's encoding for this Benchmark (arrays arrive as "
    "`TensorValue(dtype, shape, data)` with dense little-endian bytes), and an action is a PolicyValue (None, bool, "
    "int, finite float, str, list, tuple, dict with str keys, or a `TensorValue`). A numpy value, a non-finite "
    "float or a malformed `TensorValue` as an action is an invalid action."
)


def render_task_text(facts: TaskFacts) -> str:
    """The complete task text for ``facts``, as Markdown."""
    spec = facts.benchmark
    cmd = facts.session_command
    prog, ana, fb = facts.program_dir, facts.analysis_dir, facts.feedback_dir
    last = facts.pool_size - 1
    example, example_words, one = selector_examples(facts.pool_size)
    finish_example = " ".join(f"submission-{n:06d}" for n in range(2, 2 + min(2, facts.max_candidates)))
    if facts.finish_budget_policy == "allow_early":
        finish_rule = "Finish policy `allow_early`: you may finish at any time; unspent budget is simply left unused."
    else:
        finish_rule = (
            "Finish policy `require_budget_exhaustion`: `finish` is refused while any budget remains, and a "
            "submission is refused if, after it, the remaining budget could no longer be spent within the "
            "remaining submissions and the per-submission limit. Plan to spend every unit."
        )
    retention = (
        "There is no limit on bulk Feedback."
        if facts.bulk_retention_bytes is None
        else f"Bulk Artifacts are kept up to {_bytes(facts.bulk_retention_bytes)} in total, counted across the "
        f"Host's record and your `{fb}/` mirror."
    )
    direction = "higher is better" if spec.score_direction == "maximize" else "lower is better"
    sections = [
        f"# evoledger task: evolve a Policy for `{spec.id}`",
        f"You are the Agent of an evoledger Run. Improve the Policy Program in `{prog}/` so that it scores as well "
        f"as possible on the Benchmark `{spec.id}` (primary metric `{spec.primary_metric}`, {direction}). You "
        "run experiments by submitting the Program on Episodes from a public Episode pool, you read the Feedback, "
        "and you finish by naming your best submissions as Candidates. The Host then judges the Candidates on "
        "private Episodes you never see.",
        *(
            [
                "**This Run is being resumed after a restart.** Submissions made before it stand: their Feedback is "
                f"in `{fb}/` and the budget they used is spent (`{cmd} status` tells what is left). `{ana}/` is "
                "exactly as it was left. Continue from there rather than starting over."
            ]
            if facts.resumed
            else []
        ),
        "## Workspace (your current directory)\n"
        f"- `{prog}/`: the Policy Program you edit. Each submission snapshots this whole directory; its "
        "`policy.py` is the entry point.\n"
        f"- `{ana}/`: yours alone, for notes, scripts, logs and copies of Feedback. The Host never reads, changes "
        "or deletes it.\n"
        + (
            f"- `{facts.skills_dir}/`: read-only guides from the Host; read them first: "
            + ", ".join(f"`{facts.skills_dir}/{name}`" for name in facts.skills)
            + ". Never submit them as part of a Program.\n"
            if facts.skills
            else ""
        )
        + f"- `{fb}/`: read-only, written by the Host: `{fb}/latest.json` is the newest Feedback and "
        f"`{fb}/<submission_id>/feedback.json` (plus any Artifacts next to it) the Feedback of each accepted "
        "submission, with at least `submission_id`, `score`, `content`, `episodes`, `budget_used` and "
        "`budget_left`. Feedback already present when you start (for example after a Host restart) belongs to "
        "your own earlier submissions in this Run: read it before you submit again.",
        "## The only way to touch the Environment\n"
        f"Use the `{cmd}` command; do not create, import or step the Environment (or a copy of it) yourself.\n"
        f"- `{cmd} submit {prog} --episodes {example}` submits the current Program on the selected pool "
        "Episodes and prints JSON with `submission_id` and `score` when the Episodes have run.\n"
        f"- `{cmd} finish {finish_example}` ends your experimenting and names your "
        "Candidates, best first.\n"
        f"- `{cmd} status` prints JSON with the budget left, submissions left, the pool size and the limits.\n"
        "Every reply is JSON. Exit status 0 means accepted; 1 means the Host refused (JSON on stderr: "
        '`{"error": {"code", "message", "retryable"}}`; retry only when `retryable` is true); 2 means the '
        "command line itself was wrong.",
        "## Rules\n"
        "- Do not use the network or any outside knowledge about this Environment: no searching the web, no "
        "reading its source code or published solutions, no pretrained agents for it. Learn about it only from "
        "this text, the guides in the workspace and the Feedback of your own submissions.\n"
        f"- Reach the Environment only through `{cmd}`; never create, import or step it (or a copy) yourself.\n"
        f"- Run one `{cmd}` command at a time and wait for its reply before the next; never run them in parallel "
        "or in the background.\n"
        f"- Do not exit before `{cmd} finish` has been accepted: exiting without finishing ends the Run without "
        "the Candidates you would have chosen.",
        "## Episode pool and selectors\n"
        f"The pool has {facts.pool_size} Episodes, indices 0 to {last}. Each index stands for one hidden Episode "
        "(scenario and seed are owned by the Host; you only ever see indices). A selector is a comma-separated "
        "list of parts: plain indices `i` (that one Episode) and half-open ranges `start:stop` selecting "
        f"`start` up to `stop - 1`. For example `{example}` selects {example_words}, and `{one}` "
        f"selects Episode {one} alone. Parts must be strictly increasing: in ascending order, never overlapping, "
        f"all within 0 to {last}.",
        "## Budget and limits\n"
        f"- Episode budget: {facts.episode_budget} units. Each selected index costs one unit every time it is "
        "used. Reusing an index replays the same hidden Episode with a fresh Environment and Policy runtime, "
        "which makes comparisons between Programs fair, and it costs again.\n"
        f"- At most {facts.max_submissions} submissions and at most {facts.max_episodes_per_submission} Episodes "
        "per submission.\n"
        "- An Environment or Host fault is an infra fault: it is recorded, its budget is refunded, and it is "
        "never blamed on your Policy.",
        "## Finishing and how the winner is chosen\n"
        f"- Finish with 1 to {facts.max_candidates} submission ids. After `finish` is accepted no more "
        "submissions are possible and your process is stopped; finish before you run out of time.\n"
        f"- {finish_rule}\n"
        + (
            f"- Validation: every Candidate runs the same {facts.validation_episodes} private Validation Episodes "
            "(not in the pool). The Host selects the Candidate with the best Validation score, then the one with "
            "fewer Policy failures, then the one earlier in your finish list. Only that Candidate is assessed, on "
            "held-out Episodes. Neither Validation nor Assessment results are ever shown to you."
            if facts.validation_episodes > 0
            else "- There is no Validation in this Run: finish with exactly one Candidate. It is assessed on "
            "held-out Episodes, and the Assessment result is never shown to you."
        ),
        "## Policy contract\n"
        f"`{prog}/policy.py` defines `make_policy(context)` returning an object with a method "
        "`act(observation)` that returns an action. Each Episode gets a fresh Policy runtime. `context` has:\n"
        "- `context.observation_space` and `context.action_space`: gymnasium spaces (described below);\n"
        "- `context.metadata` and `context.environment_parameters`: the dicts of the public spec below;\n"
        "- `context.policy_seed`: an integer seed for any randomness in your Policy.\n"
        "Observations arrive in the types their gymnasium space defines: numpy arrays of the space's dtype and "
        "shape for Box spaces (an image is a uint8 array of shape (height, width, 3)), MultiDiscrete and "
        "MultiBinary, an int for Discrete, a str for Text, a tuple for Tuple and a dict with the space's keys for "
        "Dict. Actions must be in the action space's own form; they are checked strictly, never clipped or "
        "repaired. In the spec below, a large Box whose bound is the same for every element gives that one value "
        "as its `low` or `high` (`null`: unbounded). Files of the "
        "Program can be read relative to `Path(__file__).parent`. `print()` is allowed. An exception, an invalid "
        "action or exceeding the Policy time limit (which excludes Environment time) is a Policy failure; the "
        "traceback of a failure in your submitted Episodes appears in their Feedback."
        + (_EVOPOLICYGYM_CONTRACT if facts.policy_abi == "evopolicygym" else ""),
        "## Feedback retention\n"
        f"{retention} When the limit is exceeded the bulk Artifacts of the oldest submissions are deleted first. "
        "The newest submission's Artifacts, permanent Artifacts, the compact Feedback "
        f"(`feedback.json`) and `{ana}/` are never deleted. Copy whatever you may need later into `{ana}/`.",
        "## Benchmark (public spec)\n"
        f"{spec.description}\n\n"
        f"- id: `{spec.id}`\n"
        f"- primary metric: `{spec.primary_metric}` ({spec.score_direction}: {direction})\n"
        f"- max Episode steps: {spec.max_episode_steps}\n\n"
        f"```json\n{_spec_json(spec)}\n```",
    ]
    return "\n\n".join(sections) + "\n"
