"""Whole Runs placed on a Ray cluster: each cell's ``evoledger run`` / ``resume`` process is started by a Ray task.

``evoledger sweep FILE --out DIR --backend ray`` keeps the sweep process (the Ray driver, on the head) as the only
writer of the sweep's ledger; each cell's process runs on whichever node takes its Ray task, writing its run directory
and its log under ``DIR``. So ``DIR`` must be storage every node can write, at the same path: the sweep writes a probe
file into ``DIR`` and, before any Run starts, one probe task on every live node confirms it reads that file and can
write under ``DIR``; each placed task confirms it again before it starts its Run (a node may join later). A node that
cannot is a :class:`SharedStorageError`, naming the node and the fix.

* **The task** (:func:`host_cell`, a Ray generator task with ``max_retries=0``: a Run is never started twice) reserves
  ``num_cpus`` (the Run's ``--workers`` when its Episodes run on its node), starts the cell's command line in its own
  session under a shepherd (:mod:`~.run_shepherd`), so that the Run gets ``SIGTERM`` when the Ray worker that started
  it ends (Ray kills a worker's direct children: the shepherd, never the Run), and yields where it runs (node
  id, host name, address, the Run's process id), then the process's exit code.
* **Stopping** (the sweep's Ctrl-C or ``SIGTERM``): :meth:`PlacedRun.send_signal` cancels the task; Ray raises
  ``KeyboardInterrupt`` in it, and the task sends the Run ``SIGTERM`` (which stops it cleanly, resumable, as ``evoledger
  run`` stops) and waits for it. A cancelled task's result is Ray's cancellation, so the task writes the Run's exit
  code next to its log (``<cell>.log.exit``), where the sweep reads it: the sweep's ledger records it as it does a
  local Run's. :meth:`PlacedRun.kill` cancels it by force: Ray kills the worker, and the Run gets
  ``SIGTERM`` from the kernel. A sweep killed outright ends its Ray job (or, for the private instance it started, Ray
  itself), and with it every placed Run the same way.
* **A lost task** (its worker or node gone) ends the cell as ``failed``; running the sweep again resumes its Run.

``ray`` is imported only inside these functions, and this module is imported only when Runs are placed on Ray.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evoledger.kernel.sweep.record import RunWatcher
from evoledger.ledger.errors import ConfigError

__all__ = ["PlacedRun", "RunPlacer", "SharedStorageError", "check_storage", "host_cell"]

PROBE_NAME: Final = ".ray-storage-probe"
EXIT_SUFFIX: Final = ".exit"
"""A stopped placed Run's exit code is written to its log's path plus this (the cancelled task returns none)."""
_PR_SET_PDEATHSIG: Final = 1
_SHEPHERD: Final = Path(__file__).with_name("run_shepherd.py")
"""The cell's process is started through :mod:`~.run_shepherd`, which stops it cleanly when Ray ends the task."""
_POLL_SECONDS: Final = 0.1
_PROBE_SECONDS: Final = 300.0
"""How long the probe tasks may wait for a node to take them (a busy cluster) before the sweep gives up."""


class SharedStorageError(ConfigError):
    """A Ray node cannot read or write the sweep's folder: Runs placed there could not write their run directories."""


def check_storage(probe: str, token: str, logs: str) -> dict[str, Any]:
    """On a node: where it is, and ``problem`` unless it reads ``token`` from ``probe`` and can write into ``logs``."""
    where = _node()
    try:
        seen = Path(probe).read_text(encoding="utf-8")
    except OSError as exc:
        return {**where, "problem": f"cannot read the sweep's probe file {probe} ({exc.strerror or exc})"}
    if seen != token:
        return {**where, "problem": f"reads another file at {probe} than the sweep wrote (not the same storage)"}
    try:
        Path(logs).mkdir(parents=True, exist_ok=True)
        with open(Path(logs) / f".probe-{os.getpid()}", "wb") as check:
            check.write(b"ok")
        os.unlink(Path(logs) / f".probe-{os.getpid()}")
    except OSError as exc:
        return {**where, "problem": f"cannot write into {logs} ({exc.strerror or exc})"}
    return where


def _node() -> dict[str, Any]:
    where: dict[str, Any] = {"hostname": os.uname().nodename, "node_id": "", "address": ""}
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():  # not in a Ray worker (a direct call): the host name alone
        return where
    with contextlib.suppress(Exception):
        where["node_id"] = ray.get_runtime_context().get_node_id()
        where["address"] = ray.util.get_node_ip_address()
    return where


def _die_with_parent() -> None:  # in the child, between fork and exec
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def host_cell(
    argv: Sequence[str], log_path: str, cwd: str, probe: str, token: str, grace_seconds: float
) -> Generator[dict[str, Any], None, None]:
    """The body of a placed cell's Ray task: check the storage, start the cell's process, report where, then its
    exit code (see the module docstring)."""
    checked = check_storage(probe, token, str(Path(log_path).parent))
    if "problem" in checked:
        yield checked
        return
    exit_file = Path(log_path + EXIT_SUFFIX)
    exit_file.unlink(missing_ok=True)  # an earlier attempt's
    report, reported = os.pipe()
    try:
        try:
            with open(log_path, "ab") as log:
                process = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(_SHEPHERD), str(reported), *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=cwd if os.path.isdir(cwd) else None,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,  # Ray runs a task on its worker's main thread
                    pass_fds=(reported,),
                )
        finally:
            os.close(reported)
    except BaseException:
        os.close(report)
        raise
    try:
        with os.fdopen(report, "rb") as pids:
            line = pids.readline().strip()  # the Run's process id; nothing if the shepherd could not start it
        yield {**checked, "pid": int(line) if line.isdigit() else process.pid}
        while process.poll() is None:
            time.sleep(_POLL_SECONDS)
    except KeyboardInterrupt:  # the sweep cancelled this task: stop the Run as evoledger run stops on SIGTERM
        _stop(process, grace_seconds)
        with contextlib.suppress(OSError):
            exit_file.write_text(str(process.returncode), encoding="ascii")
        raise
    yield {"exit_code": process.returncode}


def _stop(process: subprocess.Popen[bytes], grace_seconds: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(process.pid, signal.SIGKILL)
        process.wait()


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a placed cell's process runs."""

    node_id: str
    hostname: str
    address: str
    pid: int


class PlacedRun:
    """The sweep's handle on one placed cell: its Ray task, read like a :class:`subprocess.Popen` (``poll``,
    ``returncode``, ``send_signal``, ``wait``, ``kill``)."""

    def __init__(self, ray: Any, stream: Any, root: Path, log_path: Path | None = None) -> None:
        self._ray = ray
        self._stream = stream
        self._root = root
        self._exit_file = None if log_path is None else Path(f"{log_path}{EXIT_SUFFIX}")
        self._done = False
        self.returncode: int | None = None
        self.placement: Placement | None = None
        self.failure = ""
        """Why the task ended without an exit code (its worker or node lost, or cancelled), for the cell's record."""
        self.storage_error: SharedStorageError | None = None

    def done(self) -> bool:
        """Whether the task has ended (reading every report it sent so far)."""
        while not self._done:
            ready, _ = self._ray.wait([self._stream], timeout=0)
            if not ready:
                return False
            self._take(self._next(None))
        return True

    def poll(self) -> int | None:
        self.done()
        return self.returncode

    def _next(self, timeout: float | None) -> dict[str, Any] | None:
        """The task's next report; None when it has ended without one (:class:`subprocess.TimeoutExpired` when
        none comes within ``timeout``: the stream is waited on first, since taking its next item blocks)."""
        ray = self._ray
        if timeout is not None and not ray.wait([self._stream], timeout=timeout)[0]:
            raise subprocess.TimeoutExpired("ray task", timeout)
        try:
            ref = next(self._stream)
        except StopIteration:
            return None
        try:
            report: dict[str, Any] = ray.get(ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise subprocess.TimeoutExpired("ray task", timeout or 0.0) from None
        except ray.exceptions.TaskCancelledError:
            self.failure = "its Ray task was cancelled (the sweep stopped it)"
            return self._stopped_exit_code()
        except ray.exceptions.RayError as exc:
            text = str(exc).strip()
            first = text.splitlines()[0][:500] if text else type(exc).__name__
            self.failure = f"the Ray task running it was lost ({type(exc).__name__}: {first})"
            return None
        return report

    def _stopped_exit_code(self) -> dict[str, Any] | None:
        """The exit code the cancelled task wrote for its stopped Run (None: it wrote none, killed outright)."""
        if self._exit_file is None:
            return None
        try:
            code = int(self._exit_file.read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None
        self._exit_file.unlink(missing_ok=True)
        return {"exit_code": code}

    def _take(self, report: dict[str, Any] | None) -> None:
        if report is None:
            self._done = True
        elif "problem" in report:
            self._done = True
            self.failure = f"not started: the node {report['problem']}"
            self.storage_error = storage_error(self._root, [report])
        elif "pid" in report:
            self.placement = Placement(
                str(report["node_id"]), str(report["hostname"]), str(report["address"]), int(report["pid"])
            )
        else:
            self._done = True
            self.returncode = int(report["exit_code"])

    def send_signal(self, sig: int) -> None:
        """Any stop request (``sig`` aside): cancel the task, which stops the Run with ``SIGTERM`` and waits for it."""
        if not self._done:
            with contextlib.suppress(Exception):
                self._ray.cancel(self._stream)

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until the task ends (raise :class:`subprocess.TimeoutExpired` after ``timeout``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._take(self._next(left))
        return self.returncode

    def kill(self) -> None:
        """Cancel the task by force: Ray kills its worker, and the Run gets ``SIGTERM`` from the kernel."""
        if not self._done:
            with contextlib.suppress(Exception):
                self._ray.cancel(self._stream, force=True)


def storage_error(root: Path, reports: Sequence[Mapping[str, Any]]) -> SharedStorageError:
    nodes = "; ".join(
        f"node {r.get('hostname')}{' (' + str(r['address']) + ')' if r.get('address') else ''} {r['problem']}"
        for r in reports
    )
    return SharedStorageError(
        f"--out {root} is not storage every Ray node can write at the same path: {nodes}; give --out a folder on a "
        "file system every node mounts at that path (NFS or another shared file system), or run the sweep without "
        "--backend ray (its Runs on this machine; --episodes-backend ray still sends their Episodes to the cluster)"
    )


class RunPlacer:
    """Starts cells' processes as Ray tasks (Ray already initialised by the caller) for the sweep in ``root``.

    ``episodes_on_ray``: the Runs send their Episodes to the cluster too, so a Run's task reserves no CPU of its own
    (its Episode actors reserve theirs); otherwise it reserves the Run's ``--workers``."""

    def __init__(self, ray: Any, root: Path, *, episodes_on_ray: bool = False, grace_seconds: float = 30.0) -> None:
        self._ray = ray
        self.root = root
        self._episodes_on_ray = episodes_on_ray
        self._grace = grace_seconds
        self._token = secrets.token_hex(16)
        self._probe = root / PROBE_NAME
        self._task = ray.remote(max_retries=0, retry_exceptions=False)(host_cell)
        self._check = ray.remote(num_cpus=0, max_retries=0)(check_storage)
        self.largest_node = 0.0
        """The most CPUs one live node has (known after :meth:`check_nodes`): a Run needing more never starts."""

    def __enter__(self) -> RunPlacer:
        self._probe.write_text(self._token, encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._probe.unlink()

    def check_nodes(self) -> None:
        """Refuse (:class:`SharedStorageError`) unless every live node reads the probe and writes under ``root``."""
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        live = [n for n in ray.nodes() if n.get("Alive")]
        nodes = [n["NodeID"] for n in live]
        self.largest_node = max((float(n.get("Resources", {}).get("CPU", 0)) for n in live), default=0.0)
        refs = [
            self._check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                str(self._probe), self._token, str(self.root / "logs")
            )
            for node in nodes
        ]
        reports = ray.get(refs, timeout=_PROBE_SECONDS)
        bad = [r for r in reports if "problem" in r]
        if bad:
            raise storage_error(self.root, bad)

    def cpus_of(self, workers: int | None, run_dir: Path) -> float:
        """The CPUs a cell's task reserves: its Run's workers (a resumed Run: as recorded), none when its Episodes go
        to the cluster."""
        if self._episodes_on_ray:
            return 0
        if workers is None:
            state = RunWatcher(run_dir).look().state
            recorded = None if state is None else state.config.get("workers")
            workers = recorded if isinstance(recorded, int) and recorded > 0 else 1
        return workers

    def check_cpus(self, needs: Mapping[str, float]) -> None:
        """Refuse (:class:`ConfigError`) cells whose Run needs more CPUs (``needs``: by cell) than any node has: Ray
        would keep them waiting forever."""
        over = {cell: n for cell, n in needs.items() if n > self.largest_node}
        if over:
            cell, n = next(iter(over.items()))
            raise ConfigError(
                f"cell {cell}{f' and {len(over) - 1} more' if len(over) > 1 else ''} needs {n:g} CPUs (its Run's "
                f"--workers) but the largest node of the Ray cluster has {self.largest_node:g}; set workers in the "
                "sweep file's [run] to at most that, or add larger nodes"
            )

    def place(self, argv: Sequence[str], log_path: Path, *, cpus: float) -> PlacedRun:
        stream = self._task.options(num_cpus=cpus).remote(
            list(argv), str(log_path), os.getcwd(), str(self._probe), self._token, self._grace
        )
        return PlacedRun(self._ray, stream, self.root, log_path)
