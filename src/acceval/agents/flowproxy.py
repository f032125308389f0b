"""Perturbations on a user's own flow: a loopback reverse proxy in front of the user's app.

acceval cannot switch a perturbation on inside an app it does not own, so an episode that
meets one reaches the app through this proxy (127.0.0.1, a free port), which changes what
passes, whatever browser the agent drives:

- ``popup``: every HTML page gets a modal dialog covering it (``role=dialog``, a full-page
  backdrop) until its Close button is pressed (``POST /__acceval/close-popup``, answered by
  the proxy itself, never the app): overcome then.
- ``expired_session``: the cookies the browser sent at the first request after the switch
  are dropped from every later request, so the app sees a visitor without a session;
  overcome when a request carries a cookie the app set (``Set-Cookie``) after the onset (a
  new sign-in). A cookie the app sets again with a dropped value (a token derived from the
  user) is its own anew and passes again; one set before the onset (the reload's answer to
  a visitor without a session) overcomes nothing.
- ``layout``: every HTML page gets a style sheet that reverses the order of the body's
  blocks and of each form's fields and pushes the page down; overcome when the agent's
  next request after the onset succeeds (HTTP status below 400).

Redirects to the app's origin are rewritten to the proxy's, so the browser stays behind it.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from acceval.agents._loopback import LoopbackSite

#: The perturbations a flow may declare (the shop's `language` needs an app that has one).
FLOW_PERTURBATIONS = ("popup", "expired_session", "layout")
CLOSE_PATH = "/__acceval/close-popup"
_DROP = frozenset({"connection", "keep-alive", "transfer-encoding", "upgrade", "host",
                   "content-length", "content-encoding", "accept-encoding", "te", "trailer"})
LAYOUT_CSS = ("<style id=\"acceval-layout\">body{display:flex;flex-direction:column-reverse;"
              "padding-top:9rem}form{display:flex;flex-direction:row-reverse;"
              "flex-wrap:wrap;gap:2rem}</style>")


def popup_html(next_path: str) -> str:
    return ('<div class="backdrop" style="position:fixed;inset:0;z-index:2147483647;'
            'background:rgba(0,0,0,.55)"><div role="dialog" aria-label="Notice" '
            'style="background:#fff;max-width:24rem;margin:20vh auto;padding:1rem">'
            "<p>A notice covers the page. Close it to carry on.</p>"
            f'<form method="post" action="{CLOSE_PATH}"><input type="hidden" name="next" '
            f'value="{html.escape(next_path)}"><button>Close</button></form></div></div>')


@dataclass(slots=True)
class FlowPerturbation:
    """The perturbation switched on, with its stamps (perf_counter_ns), as the shop's."""

    kind: str
    onset_ns: int | None = None
    resolved_ns: int | None = None

    def resolve(self) -> None:
        if self.onset_ns is not None and self.resolved_ns is None:
            self.resolved_ns = time.perf_counter_ns()


class PerturbingProxy:
    """The reverse proxy of one episode, in front of the app at ``origin``."""

    def __init__(self, origin: str) -> None:
        self.origin = origin.rstrip("/")
        self.perturbation: FlowPerturbation | None = None
        self._dropped: set[tuple[str, str]] | None = None   # expired: the cookies dropped
        self._fresh: set[tuple[str, str]] = set()   # expired: cookies the app set since onset
        self._site = LoopbackSite()
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post(CLOSE_PATH, self._close_popup)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        # no jar of its own: the browser's cookies are the only ones, or a dropped session
        # would come back from the proxy's jar (an app on a host name, where jars keep them)
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60),
                                              cookie_jar=aiohttp.DummyCookieJar())
        self.url = f"http://127.0.0.1:{await self._site.start(app)}"
        return self.url

    async def stop(self) -> None:
        await self._site.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def perturb(self, kind: str) -> None:
        if kind not in FLOW_PERTURBATIONS:
            raise ValueError(f"a flow has no perturbation {kind!r}; it may have "
                             f"{', '.join(FLOW_PERTURBATIONS)}")
        self.perturbation = FlowPerturbation(kind)

    def mark_onset(self) -> None:
        p = self.perturbation
        if p is not None and p.onset_ns is None:
            p.onset_ns = time.perf_counter_ns()

    def _live(self, kind: str) -> bool:
        p = self.perturbation
        return p is not None and p.kind == kind and p.resolved_ns is None

    async def _close_popup(self, request: web.Request) -> web.Response:
        nxt = str((await request.post()).get("next", "/"))
        if self._live("popup"):
            assert self.perturbation is not None
            self.perturbation.resolve()
        raise web.HTTPSeeOther(nxt if nxt.startswith("/") else "/")

    def _cookies(self, request: web.Request) -> str | None:
        """The Cookie header to send on, without the cookies an expired session dropped."""
        header = request.headers.get("Cookie")
        p = self.perturbation
        if p is None or p.kind != "expired_session":
            return header
        pairs = cookie_pairs(header or "")
        if self._dropped is None:
            self._dropped = set(pairs)  # the session the browser had when it expired
        elif self._fresh.intersection(pairs):
            p.resolve()                  # the app gave a new session since the onset
        kept = [kv for kv in pairs if kv not in self._dropped]
        return "; ".join(f"{k}={v}" for k, v in kept) or None

    def _set_cookies(self, headers: list[str]) -> None:
        """Note the cookies the app sets after an expired session's onset."""
        p = self.perturbation
        if p is None or p.kind != "expired_session" or p.onset_ns is None or not headers:
            return
        for h in headers:
            self._fresh.update(cookie_pairs(h.split(";", 1)[0]))
        if self._dropped is not None:
            self._dropped -= self._fresh

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        headers = CIMultiDict((k, v) for k, v in request.headers.items()
                              if k.lower() not in _DROP and k.lower() != "cookie")
        cookie = self._cookies(request)
        if cookie:
            headers["Cookie"] = cookie
        async with self._session.request(
                request.method, self.origin + request.path_qs, headers=headers,
                data=await request.read(), allow_redirects=False) as up:
            body = await up.read()
            out_headers = CIMultiDict((k, v) for k, v in up.headers.items()
                                      if k.lower() not in _DROP)
            status, ctype = up.status, up.headers.get("Content-Type", "")
            self._set_cookies(up.headers.getall("Set-Cookie", []))
        if "Location" in out_headers:
            out_headers["Location"] = self._local(out_headers["Location"])
        if "text/html" in ctype:
            body = self._inject(body.decode("utf-8", "replace"), request.path_qs).encode()
        p = self.perturbation
        if p is not None and p.kind == "layout" and p.onset_ns is not None and status < 400:
            p.resolve()
        return web.Response(status=status, body=body, headers=out_headers)

    def _local(self, location: str) -> str:
        """A redirect to the app's own origin, pointed at the proxy instead."""
        u = urlsplit(location)
        if u.scheme and f"{u.scheme}://{u.netloc}" == self.origin:
            return self.url + (u.path or "/") + (f"?{u.query}" if u.query else "")
        return location

    def _inject(self, page: str, path: str) -> str:
        if self._live("popup"):
            page = _before(page, "</body>", popup_html(path))
        p = self.perturbation
        if p is not None and p.kind == "layout":
            tag = "</head>" if "</head>" in page.lower() else "<body"
            page = _before(page, tag, LAYOUT_CSS)
        return page


def cookie_pairs(header: str) -> list[tuple[str, str]]:
    """``name=value`` pairs of a Cookie header (or of a Set-Cookie's first part), in order,
    values as sent: the proxy forwards them unchanged, quotes and all."""
    out = []
    for part in header.split(";"):
        name, eq, value = part.strip().partition("=")
        if eq and name:
            out.append((name.strip(), value.strip()))
    return out


def _before(page: str, tag: str, text: str) -> str:
    """``text`` inserted before ``tag`` (case aside), or at the end when there is none."""
    i = page.lower().rfind(tag)
    return page[:i] + text + page[i:] if i >= 0 else page + text


__all__ = ["CLOSE_PATH", "FLOW_PERTURBATIONS", "FlowPerturbation", "PerturbingProxy",
           "cookie_pairs", "popup_html"]
