"""Where a live Session is reached from: the socket path that fits, and the Host's own session-client launcher."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from evoledger.kernel.run.layout import RunLayout
from evoledger.kernel.run.session_place import SESSION_COMMAND, session_place
from evoledger.kernel.session import MAX_SOCKET_PATH_BYTES


def test_a_short_run_directory_keeps_its_socket_in_control(tmp_path: Path) -> None:
    layout = RunLayout(Path("/tmp") / "r")
    with session_place(layout) as place:
        assert place.socket == layout.socket
        assert stat.S_IMODE(place.private.stat().st_mode) == 0o700
        assert place.bin_dir.parent == place.private
    assert not place.private.exists()


def test_a_long_run_directory_gets_a_socket_that_fits(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path / ("d" * 120))
    assert len(os.fsencode(str(layout.socket))) > MAX_SOCKET_PATH_BYTES
    with session_place(layout) as place:
        assert place.socket.parent == place.private
        assert len(os.fsencode(str(place.socket))) <= MAX_SOCKET_PATH_BYTES
    assert not place.private.exists()


def test_the_launcher_runs_the_hosts_session_client_without_the_venv(tmp_path: Path) -> None:
    with session_place(RunLayout(tmp_path / "run"), environ={}) as place:
        launcher = place.bin_dir / SESSION_COMMAND
        assert os.access(launcher, os.X_OK)
        env = {"PATH": f"{place.bin_dir}:/usr/bin:/bin", "EVOLEDGER_SESSION_SOCKET": str(tmp_path / "none.sock")}
        # No PYTHONPATH and no virtual environment: the launcher still imports the evoledger the Host runs.
        done = subprocess.run(
            [SESSION_COMMAND, "status"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr  # a client-side error: nobody listens on that socket
        assert json.loads(done.stderr)["error"]["code"] == "session_unavailable"
        workspace_shadow = tmp_path / "evoledger"
        workspace_shadow.mkdir()
        (workspace_shadow / "__init__.py").write_text("raise SystemExit('shadowed')\n")
        again = subprocess.run(
            [SESSION_COMMAND, "status"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert json.loads(again.stderr)["error"]["code"] == "session_unavailable"  # cwd never shadows the client
