"""A recorded ``--agent-option executable`` is a program the record names: resuming runs it only when trusted."""

from __future__ import annotations

from pathlib import Path

import pytest
from evoledger.kernel.registry import UntrustedRecordError
from evoledger.kernel.run import AgentConfig, RunConfig
from evoledger.kernel.run.resume import _check_trust


def test_a_recorded_agent_program_needs_trust_to_resume(tmp_path: Path) -> None:
    config = RunConfig(agent=AgentConfig(name="codex", executable="/tmp/planted/codex"))
    with pytest.raises(UntrustedRecordError, match=r"records the Agent program '/tmp/planted/codex'.*--trust-recorded"):
        _check_trust(config, tmp_path, False, False, None)
    with pytest.raises(UntrustedRecordError, match="Agent program"):
        _check_trust(config, tmp_path, False, False, "codex")  # re-stating the name does not vouch for the program
    _check_trust(config, tmp_path, False, True, None)
    _check_trust(RunConfig(agent=AgentConfig(name="codex", effort="high")), tmp_path, False, False, None)
