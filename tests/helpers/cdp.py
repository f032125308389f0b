"""A minimal Chrome DevTools Protocol client for browser tests (headless Chromium, offline).

It starts Chromium with its own throw-away profile, speaks CDP over the page's WebSocket with
aiohttp (already a core dependency), and records console errors, exceptions, log errors
(CSP violations land there) and every network request the page makes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio",
         "--remote-allow-origins=*", "--remote-debugging-port=0")


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Page:
    ws: aiohttp.ClientWebSocketResponse
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    events: dict[str, asyncio.Event] = field(default_factory=dict)
    _id: int = 0
    _pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._id] = fut
        await self.ws.send_str(json.dumps({"id": self._id, "method": method,
                                           "params": params or {}}))
        return await asyncio.wait_for(fut, 20)

    async def evaluate(self, expr: str) -> Any:
        res = await self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                                   "awaitPromise": True})
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def event(self, name: str) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())

    async def _pump(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    if "error" in data:
                        fut.set_exception(RuntimeError(data["error"]))
                    else:
                        fut.set_result(data.get("result", {}))
                continue
            method, params = data.get("method", ""), data.get("params", {})
            self.event(method).set()
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                self.errors.append("console: " + json.dumps(params.get("args"))[:500])
            elif method == "Runtime.exceptionThrown":
                self.errors.append("exception: " + json.dumps(params)[:500])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                self.errors.append("log: " + params["entry"].get("text", "")[:500])
            elif method == "Network.requestWillBeSent":
                self.requests.append(params["request"]["url"])

    async def screenshot_clip(self, x: float, y: float, w: float, h: float) -> bytes:
        res = await self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": x, "y": y, "width": w, "height": h, "scale": 1}})
        return base64.b64decode(res["data"])


def _devtools_port(profile: Path, proc: subprocess.Popen[bytes], timeout_s: float) -> int:
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if marker.exists():
            text = marker.read_text().split()
            if text:
                return int(text[0])
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


@asynccontextmanager
async def open_page(width: int = 1300, height: int = 900):  # type: ignore[no-untyped-def]
    binary = chromium_binary()
    if binary is None:
        raise RuntimeError("no chromium; install it: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="acceval-chromium-", ignore_cleanup_errors=True) as tmp:
        profile = Path(tmp)
        proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}",
                                 f"--window-size={width},{height}", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port = _devtools_port(profile, proc, 20)
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{port}/json/list") as resp:
                    targets = await resp.json()
                url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
                async with session.ws_connect(url, max_msg_size=0) as ws:
                    page = Page(ws)
                    pump = asyncio.create_task(page._pump())
                    for domain in ("Runtime", "Log", "Network", "Page"):
                        await page.send(f"{domain}.enable")
                    try:
                        yield page
                    finally:
                        pump.cancel()
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def navigate(page: Page, url: str, timeout_s: float = 20) -> None:
    loaded = page.event("Page.loadEventFired")
    loaded.clear()
    await page.send("Page.navigate", {"url": url})
    await asyncio.wait_for(loaded.wait(), timeout_s)


# In a blank page, decode a PNG with the browser itself and return the standard deviation of
# its grey levels: a blank or single-colour area has (almost) none.
PIXEL_STD_JS = """
(async (b64) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width; c.height = img.height;
  const ctx = c.getContext("2d");
  ctx.drawImage(img, 0, 0);
  const d = ctx.getImageData(0, 0, c.width, c.height).data;
  let n = 0, s = 0, s2 = 0;
  for (let i = 0; i < d.length; i += 4) {
    const g = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
    n += 1; s += g; s2 += g * g;
  }
  const m = s / n;
  return Math.sqrt(Math.max(0, s2 / n - m * m));
})
"""


async def pixel_std(page: Page, png: bytes) -> float:
    b64 = base64.b64encode(png).decode()
    return float(await page.evaluate(f"{PIXEL_STD_JS}({json.dumps(b64)})"))
