"""The reaper of a private Ray instance, without Ray: real processes holding files in a real ``/tmp/evoledger-ray-*``
folder. A driver killed outright (``SIGKILL``) leaves nothing behind; at an orderly end the driver is spared; a
folder not named as a private instance's is never touched."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from evoledger.kernel.execution.ray_reaper import FOLDER_PREFIX, start_reaper, stop_reaper
from evoledger.tests.support.process_tree import alive, wait_until

HOLDER = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN) if sys.argv[2] == "stubborn" else None
log = open(sys.argv[1], "w")  # as a Ray process keeps its log open in the instance's folder
print("ready", flush=True)
time.sleep(600)
"""

DRIVER = """
import sys, time
from evoledger.kernel.execution.ray_reaper import start_reaper
log = open(sys.argv[1] + "/driver.log", "w")
start_reaper(sys.argv[1], term_seconds=1.0)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.fixture
def folder() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir="/tmp"))
    yield made
    shutil.rmtree(made, ignore_errors=True)


def _started(code: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def _ended(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_driver_killed_outright_leaves_no_process_and_no_folder(folder: Path) -> None:
    polite = _started(HOLDER, str(folder / "a.log"), "polite")
    stubborn = _started(HOLDER, str(folder / "b.log"), "stubborn")  # SIGKILL after its second of grace
    driver = _started(DRIVER, str(folder))
    try:
        driver.send_signal(signal.SIGKILL)
        assert wait_until(lambda: polite.poll() is not None and stubborn.poll() is not None, 60)
        assert (polite.returncode, stubborn.returncode) == (-signal.SIGTERM, -signal.SIGKILL)
        assert wait_until(lambda: not folder.exists(), 30)
    finally:
        _ended([polite, stubborn, driver])


def test_an_orderly_end_spares_the_driver_and_removes_the_folder(folder: Path) -> None:
    holder = _started(HOLDER, str(folder / "a.log"), "polite")
    try:
        with open(folder / "driver.log", "w"):  # this process, the driver, holds a file there too
            reaper = start_reaper(str(folder))
            stop_reaper(reaper)
        assert reaper.returncode == 0
        assert holder.wait(timeout=60) == -signal.SIGTERM
        assert not folder.exists()
    finally:
        _ended([holder])


def test_a_folder_not_named_as_a_private_instances_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x")
    holder = _started(HOLDER, str(tmp_path / "a.log"), "polite")
    try:
        stop_reaper(start_reaper(str(tmp_path)))
        assert alive({holder.pid}) == {holder.pid}
        assert (tmp_path / "keep").read_text() == "x"
    finally:
        _ended([holder])
