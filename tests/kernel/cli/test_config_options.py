"""`run` / `evaluate` options are generated from RunConfig / EvaluationConfig: every field, help, default, bounds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from evoledger.kernel.cli import cli
from evoledger.kernel.cli.agent_options import AGENT_OPTION_FIELDS, AGENT_OPTION_KEYS
from evoledger.kernel.cli.evaluate_command import evaluate_command
from evoledger.kernel.cli.run_command import run_command
from evoledger.kernel.evaluation import EvaluationConfig
from evoledger.kernel.run import RunConfig
from pydantic import BaseModel
from pydantic.fields import FieldInfo

HANDLED_BY_THE_COMMAND = {"benchmark"}  # the BENCHMARK argument and --set KEY=VALUE


def _leaves(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], FieldInfo]]:
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _leaves(annotation, (*prefix, name))
        else:
            yield (*prefix, name), field


def _options_by_help(command: click.Command) -> dict[str, click.Option]:
    return {p.help: p for p in command.params if isinstance(p, click.Option) and p.help}


@pytest.mark.parametrize(("command", "model"), [(run_command, RunConfig), (evaluate_command, EvaluationConfig)])
def test_every_config_field_has_an_option_with_its_description_default_and_bounds(
    command: click.Command, model: type[BaseModel]
) -> None:
    options = _options_by_help(command)
    for path, field in _leaves(model):
        if path[0] in HANDLED_BY_THE_COMMAND or ".".join(path) in AGENT_OPTION_FIELDS:
            continue  # AGENT_OPTION_FIELDS: set through --agent-option KEY=VALUE
        assert field.description, f"{'.'.join(path)} has no description"
        option = options.get(field.description)
        assert option is not None, f"no option documents {'.'.join(path)}"
        default = field.get_default(call_default_factory=True)
        assert option.default == (list(default) if isinstance(default, tuple) else default) or (
            option.multiple and _as_tuple(option.default) == default
        ), path
        ge = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
        if ge is not None:
            assert isinstance(option.type, click.IntRange | click.FloatRange), path
            assert option.type.min == ge, path


def test_run_help_documents_every_option_and_its_bounds() -> None:
    text = " ".join(CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output.split())
    for path, field in _leaves(RunConfig):
        if path[0] not in HANDLED_BY_THE_COMMAND and ".".join(path) not in AGENT_OPTION_FIELDS:
            assert " ".join((field.description or "").split()) in text, path
    for key in AGENT_OPTION_KEYS:
        assert key in text.partition("--agent-option")[2], key
    for flag in ("--max-candidates", "--act-timeout", "--agent-arg", "--agent-timeout", "--finish-grace"):
        assert flag in text  # the names the README and earlier releases use
    assert "[default: 100; 1<=x<=10000000]" in text  # --episode-budget, from Field(ge=1, le=10_000_000)


def test_a_generated_option_reaches_the_recorded_config(cwd: Path) -> None:
    args = ["run", "frozen-lake", "--agent", "baseline", "--episode-budget", "4", "--validation-episodes", "0"]
    args += ["--assessment-episodes", "1", "--make-policy-timeout-seconds", "12.5", "--infra-refunds-minimum", "5"]
    result = CliRunner().invoke(cli, [*args, "--record-to", "runs/o", "--json"])
    assert result.exit_code == 0, result.output
    logged = CliRunner().invoke(cli, ["ledger", "log", "runs/o", "--kind", "run-created", "--json"])
    config: dict[str, Any] = json.loads(logged.output.splitlines()[0])["payload"]["config"]
    assert config["limits"]["make_policy_timeout_seconds"] == 12.5
    assert config["infra_refunds"]["minimum"] == 5
    assert config["episode_budget"] == 4
    assert config["validation"]["episodes"] == 0


def test_a_bound_from_the_model_is_enforced_by_the_cli() -> None:
    result = CliRunner().invoke(cli, ["run", "--infra-refunds-fraction", "1.5"])
    assert result.exit_code == 2
    assert "0.0<=x<=1.0" in result.output


def _as_tuple(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()
