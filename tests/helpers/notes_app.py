"""A small web app of the user's own, for the bring-your-own-flow tests: notes saved as
drafts and published (irreversible), served on loopback in a thread of its own (as a user's
app runs beside acceval). ``GET /api/state`` is the state a flow's check reads;
``POST /api/reset`` empties it. With ``sign_in=True`` its pages need a session: a visitor
without one is sent to ``/login``, whose form sets a new random ``sid`` cookie."""

from __future__ import annotations

import asyncio
import html
import secrets
import threading
from typing import Any

from aiohttp import web


class NotesApp:
    def __init__(self, *, sign_in: bool = False) -> None:
        self.sign_in = sign_in
        self.sessions: set[str] = set()
        self.logins: list[int] = [0]        # sign-ins since each reset (one per episode)
        self.drafts: list[str] = []
        self.published: list[str] = []
        self.publish_requests = 0          # what reached the app
        self.base_url = ""
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/login", self._login_page)
        app.router.add_post("/login", self._login)
        app.router.add_get("/", self._home)
        app.router.add_post("/notes", self._save)
        app.router.add_post("/notes/{n}/publish", self._publish)
        app.router.add_get("/api/state", self._state)
        app.router.add_post("/api/reset", self._reset)
        return app

    def _need_session(self, request: web.Request) -> None:
        if self.sign_in and request.cookies.get("sid") not in self.sessions:
            raise web.HTTPFound("/login")

    async def _login_page(self, request: web.Request) -> web.Response:
        body = ('<h1>Sign in</h1><form method="post" action="/login"><label for="user">User'
                '</label><input id="user" name="user"><button>Sign in</button></form>')
        return web.Response(text=f'<!doctype html><html lang="en"><body>{body}</body></html>',
                            content_type="text/html")

    async def _login(self, request: web.Request) -> web.Response:
        if not str((await request.post()).get("user", "")):
            raise web.HTTPFound("/login")
        token = secrets.token_hex(8)
        self.sessions.add(token)
        self.logins[-1] += 1
        resp = web.HTTPFound("/")
        resp.set_cookie("sid", token, httponly=True)
        raise resp

    async def _home(self, request: web.Request) -> web.Response:
        self._need_session(request)
        rows = "".join(
            f'<li class="draft">{html.escape(t)} <form method="post" action="/notes/{i}/'
            f'publish"><input type="hidden" name="title" value="{html.escape(t)}">'
            f"<button>Publish {html.escape(t)}</button></form></li>"
            for i, t in enumerate(self.drafts))
        done = "".join(f'<li class="published">{html.escape(t)}</li>' for t in self.published)
        body = ('<h1>Notes</h1><form method="post" action="/notes"><label for="title">Title'
                '</label><input id="title" name="title"><button>Save draft</button></form>'
                f"<ul>{rows}</ul><h2>Published</h2><ul>{done}</ul>")
        return web.Response(text=f'<!doctype html><html lang="en"><body>{body}</body></html>',
                            content_type="text/html")

    async def _save(self, request: web.Request) -> web.Response:
        self._need_session(request)
        self.drafts.append(str((await request.post()).get("title", "")))
        raise web.HTTPFound("/")

    async def _publish(self, request: web.Request) -> web.Response:
        self._need_session(request)
        self.publish_requests += 1
        n = int(request.match_info["n"])
        if n < len(self.drafts):
            self.published.append(self.drafts.pop(n))
        raise web.HTTPFound("/")

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response({"drafts": self.drafts, "published": self.published})

    async def _reset(self, request: web.Request) -> web.Response:
        self.drafts, self.published = [], []
        self.sessions.clear()
        self.logins.append(0)
        return web.json_response({"ok": True})

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        sock: Any = site._server.sockets[0]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def start(self) -> NotesApp:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
