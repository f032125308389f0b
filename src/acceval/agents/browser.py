"""The browser the agent acts in: a real headless Chromium driven by Playwright.

The observation is a simplified DOM: the page's path and language, its headings, status
text, dialogs, and every visible interactive element with a number (``[3] button "Sign in"``)
that the tools refer to. Numbers are given afresh on every observation, in document order,
so a changed layout moves them as it moves the elements.

Playwright and Chromium are optional: :func:`unavailable` says, in one line, what is missing
(the agents part is then skipped with that note, never a traceback). Playwright's own browser
download is not needed: the system's Chromium is used.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from acceval.agents.gate import Gate

#: Chromium's own headless build first (Debian's chromium-headless-shell, what Playwright runs
#: for headless pages by default): the same engine without the desktop shell, it spends about
#: 40 % less CPU per episode than the full browser in headless mode (docs/agents.md).
CHROMIUM_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome",
                  "google-chrome-stable")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking"]
#: How long one action may wait for the page (a click on a covered element fails at once).
ACTION_TIMEOUT_MS = 5000

_OBSERVE_JS = r"""
() => {
  const out = [];
  let n = 0;
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none';
  };
  const nameOf = (el) => {
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
    if (el.id) {
      const lab = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (lab) return lab.innerText.trim();
    }
    return (el.innerText || el.value || '').trim();
  };
  const roleOf = (el) => {
    const t = el.tagName.toLowerCase();
    if (t === 'a') return 'link';
    if (t === 'button') return 'button';
    if (t === 'select') return 'combobox';
    if (t === 'input') return el.type === 'password' ? 'password' : 'textbox';
    return t;
  };
  document.querySelectorAll('[data-ref]').forEach(el => el.removeAttribute('data-ref'));
  const walk = (node, depth) => {
    for (const el of node.children) {
      const t = el.tagName.toLowerCase();
      const pad = '  '.repeat(depth);
      if (t === 'script' || t === 'style' || t === 'head') continue;
      if (el.getAttribute('role') === 'dialog') {
        out.push(`${pad}dialog "${el.getAttribute('aria-label') || ''}" (open, covers the page)`);
        walk(el, depth + 1);
        continue;
      }
      if (/^h[1-3]$/.test(t)) { out.push(`${pad}heading "${el.innerText.trim()}"`); continue; }
      if (el.getAttribute('role') === 'status') {
        out.push(`${pad}status "${el.innerText.trim()}"`); continue;
      }
      const interactive = (t === 'a' && el.hasAttribute('href')) || t === 'button'
        || t === 'select' || (t === 'input' && el.type !== 'hidden');
      if (interactive) {
        if (!visible(el)) continue;
        n += 1;
        el.setAttribute('data-ref', String(n));
        let line = `${pad}[${n}] ${roleOf(el)} "${nameOf(el)}"`;
        if (t === 'input') line += el.type === 'password'
          ? (el.value ? ' (filled)' : ' (empty)') : ` value="${el.value}"`;
        out.push(line);
        continue;
      }
      if (t === 'span' && el.classList.contains('name')) continue;
      if ((t === 'p' || t === 'li' || t === 'span') && el.children.length === 0) {
        const txt = el.innerText.trim();
        if (txt) out.push(`${pad}text "${txt}"`);
        continue;
      }
      if (t === 'li') {
        const own = Array.from(el.childNodes).filter(c => c.nodeType === 3)
          .map(c => c.textContent.trim()).join(' ').trim();
        const name = el.querySelector('.name');
        const label = [name ? name.innerText.trim() : '', own].filter(Boolean).join(' ');
        if (label) out.push(`${pad}item "${label}"`);
        walk(el, depth + 1);
        continue;
      }
      walk(el, depth);
    }
  };
  walk(document.body, 0);
  const head = `page ${location.pathname} (language ${document.documentElement.lang || '?'})`;
  return [head, ...out].join('\n');
}
"""

# Where a click on the element lands: its centre, and what is really there when it is not
# the element itself (a dialog covering the page, say).
_HIT_JS = r"""
(el) => {
  el.scrollIntoView({block: 'center'});
  const r = el.getBoundingClientRect();
  const x = r.x + r.width / 2, y = r.y + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  let blocker = null;
  if (!hit) blocker = 'nothing (off screen)';
  else if (hit !== el && !el.contains(hit)) {
    const dlg = hit.closest('[role=dialog]') || hit.closest('.backdrop');
    if (dlg) {
      const d = dlg.querySelector('[role=dialog]') || dlg;
      blocker = 'dialog "' + (d.getAttribute('aria-label') || '') + '"';
    } else blocker = hit.tagName.toLowerCase();
  }
  const navigates = (el.tagName === 'A' && el.hasAttribute('href'))
    || (el.tagName === 'BUTTON' && !!el.form);
  return {x, y, blocker, navigates};
}
"""


def chromium_path() -> str | None:
    """The system Chromium (``ACCEVAL_CHROMIUM`` first, then the usual names on PATH)."""
    env = os.environ.get("ACCEVAL_CHROMIUM")
    if env:
        return env if os.path.exists(env) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable() -> str | None:
    """Why agent episodes cannot run here (one line that says what to install), or None."""
    if find_spec("playwright") is None:
        return ("the browser library is missing: install acceval[agents] "
                "(pip install 'acceval[agents]', which brings playwright)")
    if chromium_path() is None:
        return ("no Chromium found: install it (e.g. apt-get install chromium) or set "
                "ACCEVAL_CHROMIUM to its path")
    return None


class BrowserError(Exception):
    """The browser could not be started or stopped working."""


def start_problem() -> str | None:
    """Why a headless Chromium cannot be started here, in one line that says what to do, or
    None once one has started and stopped. What ``acceval validate`` and the checks before
    a run's load ask: the same lookup (:func:`unavailable`) and the same launch
    (:meth:`Browser.start`) as the agents part itself, so the check cannot pass where the
    part would then fail. Call it outside a running event loop."""
    why = unavailable()
    if why is not None:
        return why
    try:
        asyncio.run(_start_and_stop())
    except BrowserError as exc:
        return (f"{exc}; install a Chromium that runs headless (e.g. apt-get install "
                "chromium) or set ACCEVAL_CHROMIUM to one")
    return None


async def _start_and_stop() -> None:
    browser = Browser()
    await browser.start()
    await browser.stop()


@dataclass(slots=True)
class ActionResult:
    ok: bool
    error: str | None = None
    filled: str | None = None  # the text field a ``type`` filled (its name): the page's side


class Browser:
    """One headless Chromium for a whole agents run. Episodes share one page; each starts
    with its cookies cleared (a fresh context per episode costs far more than an episode's
    steps on a small machine)."""

    def __init__(self) -> None:
        self._pw: Any = None
        self._browser: Any = None
        self._ctx: Any = None
        self._page: Any = None
        self.version = ""

    async def start(self) -> None:
        from playwright.async_api import async_playwright

        path = chromium_path()
        try:
            self._pw = await async_playwright().start()
            self._browser = await self._pw.chromium.launch(
                executable_path=path, headless=True, args=CHROMIUM_ARGS)
            self._ctx = await self._browser.new_context(viewport={"width": 1000,
                                                                  "height": 800})
            self._page = await self._ctx.new_page()
            self._page.set_default_timeout(ACTION_TIMEOUT_MS)
        except Exception as exc:  # Playwright raises its own Error for a failed launch
            await self.stop()
            raise BrowserError(f"could not start Chromium at {path}: "
                               f"{str(exc).splitlines()[0]}") from exc
        self.version = str(self._browser.version)

    async def stop(self) -> None:
        try:
            if self._browser is not None:
                await self._browser.close()
        finally:
            self._browser = self._ctx = self._page = None
            if self._pw is not None:
                await self._pw.stop()
                self._pw = None

    async def page(self, base_url: str, cookie: tuple[str, str] | None) -> Tab:
        """The page for a new episode: blank, no cookies but ``cookie``."""
        await self._page.goto("about:blank")
        await self._ctx.clear_cookies()
        if cookie is not None:
            await self._ctx.add_cookies([{"name": cookie[0], "value": cookie[1],
                                          "url": base_url}])
        return Tab(self._page, base_url)


class Tab:
    """One episode's view of the page: observe and act."""

    def __init__(self, page: Any, base_url: str) -> None:
        self._page, self.base_url = page, base_url
        self._route: tuple[Callable[[str], bool], Any] | None = None

    async def guard(self, gate: Gate) -> None:
        """Send every request the gate guards through it: a refused one never reaches the
        app (the browser shows the refusal page instead)."""
        from acceval.agents.gate import refusal_page

        def wanted(url: str) -> bool:
            path = urlsplit(url).path
            return any(g.matches(g.method, path) for g in gate.guards)

        async def handle(route: Any, request: Any) -> None:
            guard = gate.guard_for(str(request.method), urlsplit(str(request.url)).path)
            if guard is None:
                await route.continue_()
                return
            decision = gate.judge(guard, request_fields(request))
            if not decision.refused:
                await route.continue_()
                return
            back = urlsplit(str(request.headers.get("referer") or "/")).path or "/"
            await route.fulfill(status=403, content_type="text/html; charset=utf-8",
                                body=refusal_page(decision, back))

        self._route = (wanted, handle)
        await self._page.route(wanted, handle)

    async def unguard(self) -> None:
        if self._route is not None:
            await self._page.unroute(*self._route)
            self._route = None

    async def observe(self) -> str:
        await self._page.wait_for_load_state()
        return str(await self._page.evaluate(_OBSERVE_JS))

    async def check_dom(self, url: str, selector: str, text: str | None) -> str | None:
        """Why the page at ``url`` fails a flow's DOM check, or None (an element matches
        ``selector``, and one of them contains ``text`` when given)."""
        await self._page.goto(url)
        found = await self._page.query_selector_all(selector)
        if not found:
            return f"no element matches {selector!r} at {url}"
        if text is None:
            return None
        texts = [str(await e.inner_text()) for e in found]
        if any(text in t for t in texts):
            return None
        return f"no {selector!r} at {url} contains {text!r} (found: {texts[:5]})"

    async def goto(self, path: str) -> ActionResult:
        if not path.startswith("/") or path.startswith("//"):
            return ActionResult(False, "navigate takes a path on this site, e.g. /cart")
        await self._page.goto(self.base_url + path)
        return ActionResult(True)

    async def reload(self) -> None:
        await self._page.reload()

    def path(self) -> str:
        """The path of the page the browser shows now (no query)."""
        return urlsplit(str(self._page.url)).path

    async def _aim(self, ref: int, what: str) -> tuple[Any, dict[str, Any] | ActionResult]:
        el = await self._page.query_selector(f'[data-ref="{int(ref)}"]')
        if el is None:
            return None, ActionResult(False, f"no element [{ref}] on this page")
        aim: dict[str, Any] = await el.evaluate(_HIT_JS)
        if aim["blocker"]:
            return el, ActionResult(False, f"{what} [{ref}] was intercepted by "
                                           f"{aim['blocker']}")
        return el, aim

    async def click(self, ref: int) -> ActionResult:
        """A real mouse click at the element's centre (what a user's click would hit)."""
        _, aim = await self._aim(ref, "the click on")
        if isinstance(aim, ActionResult):
            return aim
        if not aim["navigates"]:
            await self._page.mouse.click(aim["x"], aim["y"])
            return ActionResult(True)
        async with self._page.expect_navigation(wait_until="domcontentloaded",
                                                timeout=ACTION_TIMEOUT_MS):
            await self._page.mouse.click(aim["x"], aim["y"])
        return ActionResult(True)

    async def type(self, ref: int, text: str) -> ActionResult:
        el, aim = await self._aim(ref, "typing into")
        if isinstance(aim, ActionResult):
            return aim
        tag = await el.evaluate("e => e.tagName.toLowerCase() + ':' + (e.type || '')")
        if not tag.startswith("input:"):
            return ActionResult(False, f"[{ref}] is not a text field")
        await el.fill(text, timeout=ACTION_TIMEOUT_MS)
        return ActionResult(True, filled=str(await el.evaluate("e => e.name || e.id || ''")))


def request_fields(request: Any) -> dict[str, list[str]]:
    """A request's fields: its query, and its body as a form or a JSON object (top level;
    a list's items are each a value)."""
    out: dict[str, list[str]] = {k: list(v) for k, v in
                                 parse_qs(urlsplit(str(request.url)).query).items()}
    body = request.post_data
    if not body:
        return out
    kind = str(request.headers.get("content-type") or "")
    if "json" in kind:
        try:
            data = json.loads(body)
        except ValueError:
            return out
        if isinstance(data, dict):
            for k, v in data.items():
                out.setdefault(str(k), []).extend(
                    str(x) for x in (v if isinstance(v, list) else [v]))
        return out
    for k, v in parse_qs(str(body), keep_blank_values=True).items():
        out.setdefault(k, []).extend(v)
    return out


__all__ = ["CHROMIUM_ARGS", "ActionResult", "Browser", "BrowserError", "Tab", "chromium_path",
           "request_fields", "start_problem", "unavailable"]
