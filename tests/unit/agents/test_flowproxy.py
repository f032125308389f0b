"""The perturbing proxy's expired session, on loopback: a small upstream app echoes the
Cookie header it receives and signs a visitor in with a Set-Cookie; the proxy in front of
it drops the cookies the browser had when the session expired, from that request on, lets
every other cookie through unchanged, and marks the perturbation overcome only when a
request carries a cookie the app set after the onset."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

from acceval.agents.flowproxy import PerturbingProxy, cookie_pairs

Check = Callable[[PerturbingProxy, "Client"], Awaitable[None]]


class Client:
    """A browser reduced to what the proxy sees: the Cookie header it sends."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session, self.url = session, url

    async def seen(self, cookie: str | None, path: str = "/echo") -> str:
        """What the app received as its Cookie header ("" for none)."""
        headers = {"Cookie": cookie} if cookie is not None else {}
        async with self.session.get(self.url + path, headers=headers) as r:
            assert r.status == 200, r.status
            return await r.text()

    async def sign_in(self, token: str) -> str:
        """The Set-Cookie the app answered a sign-in with."""
        async with self.session.post(f"{self.url}/login?token={token}") as r:
            assert r.status == 200, r.status
            return r.headers["Set-Cookie"]


def _upstream() -> web.Application:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=request.headers.get("Cookie", ""))

    async def login(request: web.Request) -> web.Response:
        resp = web.Response(text="signed in")
        resp.headers["Set-Cookie"] = f"sid={request.query['token']}; Path=/; HttpOnly"
        return resp

    app = web.Application()
    app.router.add_get("/echo", echo)
    app.router.add_post("/login", login)
    return app


def _through_proxy(check: Check, host: str = "127.0.0.1") -> None:
    async def main() -> None:
        runner = web.AppRunner(_upstream(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        proxy = PerturbingProxy(f"http://{host}:{port}")
        try:
            url = await proxy.start()
            async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as s:
                await check(proxy, Client(s, url))
        finally:
            await proxy.stop()
            await runner.cleanup()

    asyncio.run(main())


def test_the_session_is_dropped_from_the_switch_on_and_a_new_sign_in_overcomes_it() -> None:
    async def check(proxy: PerturbingProxy, c: Client) -> None:
        assert await c.seen("sid=old; theme=dark") == "sid=old; theme=dark"  # not yet
        proxy.perturb("expired_session")
        # the first request after the switch (the harness's reload) fixes what is dropped:
        # every cookie the browser had then
        assert await c.seen("sid=old; theme=dark") == ""
        proxy.mark_onset()
        p = proxy.perturbation
        assert p is not None and p.onset_ns is not None
        assert await c.seen("sid=old") == ""              # still expired, every request
        assert await c.seen("sid=old; lang=fr") == "lang=fr"  # a cookie it never had passes
        assert p.resolved_ns is None                      # ... and overcomes nothing
        set_cookie = await c.sign_in("new")
        assert cookie_pairs(set_cookie.split(";")[0]) == [("sid", "new")]
        assert p.resolved_ns is None                      # the browser has not sent it yet
        assert await c.seen("sid=new; theme=dark") == "sid=new"
        assert p.resolved_ns is not None and p.resolved_ns > p.onset_ns
        first = p.resolved_ns
        assert await c.seen("theme=dark; sid=new") == "sid=new"  # once dropped, dropped
        assert p.resolved_ns == first                     # overcome once

    _through_proxy(check)


def test_a_cookie_set_again_with_its_old_value_is_the_apps_anew() -> None:
    """An app whose session token is derived from the user signs in again with the same
    value: that cookie passes again and overcomes the expiry, instead of being dropped for
    good."""
    async def check(proxy: PerturbingProxy, c: Client) -> None:
        proxy.perturb("expired_session")
        assert await c.seen("sid=alice") == ""
        proxy.mark_onset()
        assert await c.seen("sid=alice") == ""
        await c.sign_in("alice")
        assert await c.seen("sid=alice") == "sid=alice"
        p = proxy.perturbation
        assert p is not None and p.resolved_ns is not None

    _through_proxy(check)


def test_a_cookie_the_app_set_before_the_onset_overcomes_nothing() -> None:
    """The reload's answer to a visitor without a session may carry a fresh anonymous
    cookie; that is not a sign-in."""
    async def check(proxy: PerturbingProxy, c: Client) -> None:
        proxy.perturb("expired_session")
        await c.seen("sid=old")
        await c.sign_in("anonymous")       # before mark_onset: the reload's own answer
        proxy.mark_onset()
        assert await c.seen("sid=anonymous") == "sid=anonymous"
        p = proxy.perturbation
        assert p is not None and p.resolved_ns is None

    _through_proxy(check)


def test_the_proxy_keeps_no_cookies_of_its_own() -> None:
    """An app on ``localhost`` (a name, where an HTTP client's jar keeps cookies): what the
    app set reaches the browser, never a later request the browser did not send it with."""
    async def check(proxy: PerturbingProxy, c: Client) -> None:
        await c.sign_in("new")
        assert await c.seen(None) == ""
        proxy.perturb("expired_session")
        assert await c.seen("sid=old") == ""

    _through_proxy(check, host="localhost")


def test_cookie_values_are_forwarded_as_sent() -> None:
    assert cookie_pairs(' a="x y" ; b=1;bad; =v; c=') == [("a", '"x y"'), ("b", "1"),
                                                            ("c", "")]
