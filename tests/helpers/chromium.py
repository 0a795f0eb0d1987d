"""Headless Chromium (Debian's `chromium`) driven over its DevTools protocol, for tests and screenshots of web UIs.

The browser is the system's own (no download at run time); the protocol's WebSocket is aiohttp's client. The
DevTools methods used are Page.navigate, Runtime.evaluate, Emulation.setDeviceMetricsOverride,
Page.captureScreenshot, Page.getFrameTree and Page.createIsolatedWorld (https://chromedevtools.github.io/devtools-protocol/).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class Chromium:
    """One headless Chromium with one page, `width` x `height` CSS pixels; close() ends it (its process group)."""

    def __init__(self, width: int = 1440, height: int = 900, start_timeout_s: float = 60.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
             "--disable-dev-shm-usage", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
             *(["--no-sandbox"] if os.geteuid() == 0 else []),  # Chromium's sandbox refuses to run as root
             # a sandboxed frame (MLflow's HTML artifact viewer) in its page's process, where the page's frame tree
             # holds it (evaluate_in_frame), not in a process of its own
             "--disable-features=IsolateSandboxedIframes",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self._ids = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        try:
            port = self._devtools_port(start_timeout_s)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
                page = next(target for target in json.load(response) if target["type"] == "page")
            self.loop.run_until_complete(self._connect(page["webSocketDebuggerUrl"]))
            self.set_viewport(width, height)
        except BaseException:
            self.close()
            raise

    def _devtools_port(self, timeout_s: float) -> int:
        """The port Chromium chose, from the DevToolsActivePort file it writes into its profile once it listens."""
        path = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if path.is_file() and path.read_text().strip():
                return int(path.read_text().splitlines()[0])
            if self.process.poll() is not None:
                raise RuntimeError(f"{CHROMIUM} exited with {self.process.returncode} before it listened")
            time.sleep(0.2)
        raise TimeoutError(f"{CHROMIUM} did not open its DevTools port within {timeout_s:g} s")

    async def _connect(self, url: str) -> None:
        import aiohttp

        self.session = aiohttp.ClientSession()
        self.socket = await self.session.ws_connect(url, max_msg_size=0)

    def send(self, method: str, **params):
        """Call a DevTools method; its result (an error answer raises)."""
        return self.loop.run_until_complete(self._send(method, params))

    async def _send(self, method: str, params: dict):
        number = next(self._ids)
        await self.socket.send_str(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads((await self.socket.receive(timeout=120)).data)
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def set_viewport(self, width: int, height: int) -> None:
        """The page's viewport, `width` x `height` CSS pixels, as a window of that size shows it: pages opened next
        lay out at that width (one browser serves several widths)."""
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (awaited if a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def evaluate_in_frame(self, url_start: str, expression: str):
        """The value of a JavaScript expression in the page's frame whose URL starts with `url_start` (evaluated in
        an isolated world of that frame: it reads a sandboxed frame that the page's own scripts cannot); None where
        no such frame is loaded."""
        frames, found = [self.send("Page.getFrameTree")["frameTree"]], None
        while frames and found is None:
            node = frames.pop()
            if node["frame"].get("url", "").startswith(url_start):
                found = node["frame"]
            frames += node.get("childFrames", [])
        if found is None:
            return None
        world = self.send("Page.createIsolatedWorld", frameId=found["id"])["executionContextId"]
        result = self.send("Runtime.evaluate", expression=expression, contextId=world, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 120.0, what: str = ""):
        """Evaluate `expression` until it is truthy; its value. A page that never gets there fails after
        `timeout_s` (a bound on a broken page, not a speed assumption) with the page's text."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                text = self.evaluate("document.body ? document.body.innerText : ''") or ""
                raise TimeoutError(f"waited {timeout_s:g} s for {what or expression}; the page shows:\n{text[:3000]}")
            time.sleep(0.5)

    def screenshot(self, path: str | Path) -> Path:
        """The viewport as a PNG file."""
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.loop.run_until_complete(self.socket.close())
        if getattr(self, "session", None) is not None:
            self.loop.run_until_complete(self.session.close())
        self.loop.close()
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
