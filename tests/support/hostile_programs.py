"""Policy sources that signal evoledger's own processes, shared by the executor, Run and CLI tests.

Each signals only its own worker or zygote (found through ``/proc`` by its parent links, and for the stoppers by
name): never any other process of the test machine. Run them with ``--isolation local`` or inside bwrap only.
"""

from __future__ import annotations

__all__ = ["KILL_WORKER_GROUP", "KILL_ZYGOTE", "stopper"]

KILL_WORKER_GROUP = """
import os
import signal


class _Policy:
    def act(self, observation):
        os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)  # the zygote's group: the worker and the zygote
        return 0


def make_policy(context):
    return _Policy()
"""

KILL_ZYGOTE = """
import os
import signal


class _Policy:
    def act(self, observation):
        os.kill(os.getppid(), signal.SIGKILL)
        return 0


def make_policy(context):
    return _Policy()
"""

_STOPPER = """
import os
import signal
import time


def _parent(pid):
    stat = open(f"/proc/{pid}/stat", encoding="ascii").read()
    return int(stat.rsplit(")", 1)[1].split()[1])


def _ours(pid):
    return b"evoledger.kernel.execution.worker" in open(f"/proc/{pid}/cmdline", "rb").read()


class _Policy:
    def act(self, observation):
        target = TARGET  # the zygote, or the zygote's parent: the worker
        if target > 1 and _ours(target):
            os.kill(target, signal.SIGSTOP)
        time.sleep(PAUSE)
        return 0


def make_policy(context):
    return _Policy()
"""


def stopper(target: str, pause: float = 0.0) -> str:
    """A Policy that SIGSTOPs its ``"worker"`` or ``"zygote"`` at every step, then sleeps ``pause`` seconds."""
    expression = {"worker": "_parent(os.getppid())", "zygote": "os.getppid()"}[target]
    return _STOPPER.replace("TARGET", expression).replace("PAUSE", repr(pause))
