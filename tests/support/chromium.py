"""A page opened in a real headless Chromium, driven through its DevTools protocol: what a person would see.

:func:`open_page` starts ``chromium --headless`` with a fresh profile, loads a ``file://`` page at a fixed window
size and collects what the page did while it loaded: every network request it made (``data:`` URIs are content,
not requests, and are left out), every console error, uncaught exception and browser log error (a blocked request
or a Content-Security-Policy violation is one). :meth:`Page.screenshot` captures a region or the whole page as PNG.

The protocol is spoken over a WebSocket (the small ``websockets`` client of the dev extra). The browser is ended by
its own process id, and every wait has a deadline.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Page", "chromium_path", "open_page"]

_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def chromium_path() -> str | None:
    """The Chromium executable on ``PATH`` (the Debian package ``chromium``), if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@dataclass
class Page:
    """A loaded page: what it requested and logged, and the connection to capture it."""

    socket: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def call(self, method: str, deadline: float = 60.0, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer, recording the events that arrive meanwhile."""
        ident = next(self._ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        end = time.monotonic() + deadline
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, end - time.monotonic())))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    def wait_for(self, event: str, deadline: float = 60.0) -> None:
        """Read events until ``event`` arrives (recording the others)."""
        end = time.monotonic() + deadline
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, end - time.monotonic())))
            self._event(message)
            if message.get("method") == event:
                return

    def settle(self, seconds: float = 0.5) -> None:
        """Record whatever the page still does for ``seconds``."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                self._event(json.loads(self.socket.recv(timeout=left)))
            except TimeoutError:
                return

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith("data:"):
                self.requests.append(url)
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            self.errors.append("exception: " + str(params.get("exceptionDetails", {}).get("text")))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log ({params['entry'].get('source')}): {params['entry'].get('text')}")

    def load(self, path: Path, deadline: float = 60.0) -> None:
        """Navigate to ``path`` (forgetting what earlier pages did) and wait until it has loaded and settled."""
        self.requests.clear()
        self.errors.clear()
        self.call("Page.navigate", deadline, url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired", deadline)
        self.settle()

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (DevTools evaluates it; the page itself runs none)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def screenshot(self, clip: dict[str, float] | None = None) -> bytes:
        """A PNG of ``clip`` (page coordinates: x, y, width, height) or of the whole page."""
        if clip is None:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            clip = {"x": 0, "y": 0, "width": size[0], "height": size[1]}
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip={**clip, "scale": 1})
        return base64.b64decode(shot["data"])


def _devtools_url(process: subprocess.Popen[str], deadline: float) -> str:
    assert process.stderr is not None
    end = time.monotonic() + deadline
    lines = []
    while time.monotonic() < end:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = _LISTENING.search(line)
        if found:
            return found.group(1)
    raise RuntimeError("chromium printed no DevTools address:\n" + "".join(lines[-20:]))


@contextmanager
def open_page(path: Path, *, width: int = 1200, height: int = 900, deadline: float = 90.0) -> Iterator[Page]:
    """Load ``path`` in a fresh headless Chromium and yield the :class:`Page` once it has loaded and settled (then
    :meth:`Page.load` opens another page in the same browser)."""
    from websockets.sync.client import connect

    executable = chromium_path()
    if executable is None:
        raise RuntimeError("chromium is not installed")
    profile = Path(tempfile.mkdtemp(prefix="evoledger-chromium-"))
    argv = [
        executable,
        "--headless",
        "--no-sandbox",  # tests may run as root, where Chromium's own sandbox refuses to start
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",  # no update checks or field trials: only the page's own requests
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "--remote-debugging-port=0",
        "about:blank",
    ]
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": "disabled:"}
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    assert process.stderr is not None
    drain = threading.Thread(target=process.stderr.read, daemon=True)  # so that Chromium never blocks writing it
    try:
        browser = _devtools_url(process, deadline)
        drain.start()
        port = browser.split("/")[2]
        with urllib.request.urlopen(f"http://{port}/json/list", timeout=deadline) as answer:
            targets = json.load(answer)
        target = next(t for t in targets if t.get("type") == "page")
        with connect(target["webSocketDebuggerUrl"], max_size=None, open_timeout=deadline) as socket:
            page = Page(socket)
            for domain in ("Page", "Network", "Runtime", "Log"):
                page.call(f"{domain}.enable", deadline)
            page.call(
                "Emulation.setDeviceMetricsOverride",
                deadline,
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
            page.load(path, deadline)
            yield page
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the browser and its helpers: the group this call started
        process.wait(timeout=30)
        if drain.is_alive():
            drain.join(timeout=30)  # the pipe ends with the browser's helpers
        process.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)
