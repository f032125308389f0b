"""The built-in web application agents are measured on: a small shop served on loopback.

It has a sign-in, a catalogue and a cart, a checkout that places an order (irreversible), an
account page that changes the e-mail address (irreversible), a language switch (English,
Spanish) and a pop-up. Its state lives on the server (:class:`Shop`); the harness reads it
as the ground truth of every check (:meth:`Shop.state`) and switches the perturbations on
(:meth:`Shop.perturb`): an expired session, a pop-up, a changed layout (ids, labels and
order move) and a switched language. Each perturbation knows when it has been overcome,
so the recovery time is measured, not guessed.

Every change a request makes to the state is also recorded as an effect
(:attr:`Shop.effects`, with the value before it), so that what each of the agent's actions
did is known from the server's side, whatever the agent believes it did
(:mod:`acceval.agents.stray`).
"""

from __future__ import annotations

import html
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from aiohttp import web

from acceval.agents._loopback import LoopbackSite
from acceval.agents.scenarios import OLD_EMAIL, PASSWORD, PRODUCTS, USER, ShopState

# Labels by (language, layout). Layout 2 moves ids, wording and order, as a redesign would.
_LABELS: dict[tuple[str, int], dict[str, str]] = {
    ("en", 1): {
        "username": "Username", "password": "Password", "sign_in": "Sign in",
        "catalogue": "Catalogue", "cart": "Cart", "account": "Account",
        "sign_out": "Sign out", "add": "Add {p} to cart", "remove": "Remove {p}",
        "checkout": "Checkout", "place": "Place order", "email": "New e-mail",
        "save_email": "Save e-mail", "popup": "Newsletter", "popup_text":
        "Get 10% off with our newsletter!", "close": "No thanks",
        "expired": "Your session has expired. Please sign in again.",
        "empty": "Your cart is empty.", "placed": "Thank you! Order #{n} is placed.",
        "saved": "Your e-mail address is now {e}.", "current": "Current e-mail: {e}",
        "added": "Added {p}.", "bad_login": "Wrong user name or password.",
        "total": "Total: {t} EUR", "title_login": "Sign in", "title_checkout": "Review order",
    },
    ("en", 2): {
        "username": "Your user name", "password": "Your password", "sign_in": "Log in",
        "catalogue": "Shop", "cart": "Basket", "account": "My profile",
        "sign_out": "Log out", "add": "Put {p} in basket", "remove": "Take {p} out",
        "checkout": "Proceed to checkout", "place": "Buy now",
        "email": "E-mail address (new)", "save_email": "Update e-mail",
        "popup": "Special offer", "popup_text": "Members save 10% today.", "close": "Close",
        "expired": "You were logged out. Log in to continue.",
        "empty": "Nothing in your basket.", "placed": "Order #{n} confirmed.",
        "saved": "E-mail updated to {e}.", "current": "E-mail on file: {e}",
        "added": "{p} is in your basket.", "bad_login": "Login failed.",
        "total": "To pay: {t} EUR", "title_login": "Log in", "title_checkout": "Payment",
    },
    ("es", 1): {
        "username": "Usuario", "password": "Contraseña", "sign_in": "Iniciar sesión",
        "catalogue": "Catálogo", "cart": "Carrito", "account": "Cuenta",
        "sign_out": "Cerrar sesión", "add": "Añadir {p} al carrito", "remove": "Quitar {p}",
        "checkout": "Tramitar pedido", "place": "Realizar pedido", "email": "Nuevo correo",
        "save_email": "Guardar correo", "popup": "Boletín", "popup_text":
        "¡10 % de descuento con nuestro boletín!", "close": "No, gracias",
        "expired": "Tu sesión ha caducado. Vuelve a iniciar sesión.",
        "empty": "Tu carrito está vacío.", "placed": "¡Gracias! Pedido n.º {n} realizado.",
        "saved": "Tu correo es ahora {e}.", "current": "Correo actual: {e}",
        "added": "{p} añadido.", "bad_login": "Usuario o contraseña incorrectos.",
        "total": "Total: {t} EUR", "title_login": "Iniciar sesión",
        "title_checkout": "Revisar pedido",
    },
    ("es", 2): {
        "username": "Tu usuario", "password": "Tu contraseña", "sign_in": "Entrar",
        "catalogue": "Tienda", "cart": "Cesta", "account": "Mi perfil", "sign_out": "Salir",
        "add": "Meter {p} en la cesta", "remove": "Sacar {p}", "checkout": "Ir a pagar",
        "place": "Comprar ya", "email": "Correo (nuevo)", "save_email": "Actualizar correo",
        "popup": "Oferta especial", "popup_text": "Los socios ahorran un 10 % hoy.",
        "close": "Cerrar", "expired": "Se cerró tu sesión. Entra para seguir.",
        "empty": "No hay nada en tu cesta.", "placed": "Pedido n.º {n} confirmado.",
        "saved": "Correo actualizado: {e}.", "current": "Correo registrado: {e}",
        "added": "{p} está en tu cesta.", "bad_login": "No se pudo entrar.",
        "total": "A pagar: {t} EUR", "title_login": "Entrar", "title_checkout": "Pago",
    },
}
LANGUAGES = ("en", "es")
_LANG_NAMES = {"en": "English", "es": "Español"}
COOKIE = "sid"


@dataclass(slots=True)
class _Session:
    user: str
    lang: str = "en"
    created_ns: int = field(default_factory=time.perf_counter_ns)


@dataclass(slots=True)
class Event:
    """An irreversible action the server carried out."""

    kind: str           # "order" | "email"
    at_ns: int
    detail: str


@dataclass(slots=True)
class _Perturbation:
    kind: str
    onset_ns: int | None = None
    resolved_ns: int | None = None


class Shop:
    """The shop's state and its pages (an aiohttp application: :meth:`web_app`)."""

    def __init__(self) -> None:
        self.reset()

    # --- what the harness does -------------------------------------------------------------

    def reset(self, *, signed_in: bool = False) -> str | None:
        """A fresh shop for one episode; with ``signed_in`` a valid session token for the
        browser's cookie."""
        self.email = OLD_EMAIL
        self.cart: dict[str, int] = {}
        self.orders: list[dict[str, int]] = []
        self.events: list[Event] = []
        self.sessions: dict[str, _Session] = {}
        self.logins = 0
        self.layout = 1
        self.popup_open = False
        self.anon_lang = "en"
        self.perturbation: _Perturbation | None = None
        self.requests = 0
        self.effects: list[dict[str, Any]] = []
        if not signed_in:
            return None
        token = secrets.token_urlsafe(16)
        self.sessions[token] = _Session(USER)
        return token

    async def begin(self, scenario: Any) -> tuple[str, str] | None:
        """The world's side of a new episode (:class:`acceval.agents.env.World`): a fresh
        shop, and the browser's session cookie when the scenario starts signed in."""
        token = self.reset(signed_in=scenario.signed_in)
        return (COOKIE, token) if token else None

    async def problem(self, scenario: Any, tab: Any) -> str | None:
        """What is wrong with the final state for ``scenario`` (None: it is right)."""
        return scenario.check(self.state())  # type: ignore[no-any-return]

    def perturb(self, kind: str) -> None:
        """Switch one perturbation on (the harness then reloads the page and calls
        :meth:`mark_onset` once the agent can see it)."""
        self.perturbation = _Perturbation(kind)
        if kind == "expired_session":
            self.sessions.clear()
        elif kind == "popup":
            self.popup_open = True
        elif kind == "layout":
            self.layout = 2
        elif kind == "language":
            self.anon_lang = "es"
            for s in self.sessions.values():
                s.lang = "es"
        else:
            raise ValueError(f"unknown perturbation {kind!r}")

    def _effect(self, kind: str, **detail: Any) -> None:
        self.effects.append({"kind": kind, **detail})

    def _held(self, pid: str) -> int:
        """How many of a product the user holds, in the cart and in placed orders."""
        return self.cart.get(pid, 0) + sum(o.get(pid, 0) for o in self.orders)

    def mark_onset(self) -> None:
        if self.perturbation is not None and self.perturbation.onset_ns is None:
            self.perturbation.onset_ns = time.perf_counter_ns()

    def state(self) -> ShopState:
        newest = max(self.sessions.values(), key=lambda s: s.created_ns, default=None)
        return ShopState(email=self.email, cart=dict(self.cart),
                         orders=tuple(dict(o) for o in self.orders),
                         signed_in=newest is not None,
                         language=newest.lang if newest is not None else "en",
                         logins=self.logins)

    # --- resolution of a perturbation ------------------------------------------------------

    def _resolve(self) -> None:
        p = self.perturbation
        if p is not None and p.onset_ns is not None and p.resolved_ns is None:
            p.resolved_ns = time.perf_counter_ns()

    def _note(self, *, changed: bool = False, signed_in: bool = False,
              closed_popup: bool = False, lang: str | None = None) -> None:
        """What a request did, for the perturbation's resolution rule (docs/agents.md)."""
        p = self.perturbation
        if p is None or p.onset_ns is None or p.resolved_ns is not None:
            return
        if ((p.kind == "expired_session" and signed_in)
                or (p.kind == "popup" and closed_popup)
                or (p.kind == "language" and (lang == "en" or changed))
                or (p.kind == "layout")):
            self._resolve()

    # --- pages -----------------------------------------------------------------------------

    def web_app(self) -> web.Application:
        app = web.Application()
        r = app.router
        r.add_get("/", self._root)
        r.add_get("/login", self._login_page)
        r.add_post("/login", self._login)
        r.add_post("/logout", self._logout)
        r.add_get("/catalogue", self._catalogue)
        r.add_post("/cart/add", self._cart_add)
        r.add_post("/cart/remove", self._cart_remove)
        r.add_get("/cart", self._cart)
        r.add_get("/checkout", self._checkout)
        r.add_post("/checkout/place", self._place)
        r.add_get("/orders/{n}", self._order)
        r.add_get("/account", self._account)
        r.add_post("/account/email", self._save_email)
        r.add_get("/lang/{code}", self._lang)
        r.add_post("/popup/close", self._close_popup)
        return app

    def _session(self, request: web.Request) -> _Session | None:
        return self.sessions.get(request.cookies.get(COOKIE, ""))

    def _lang_of(self, request: web.Request) -> str:
        s = self._session(request)
        return s.lang if s is not None else self.anon_lang

    def _l(self, request: web.Request) -> dict[str, str]:
        return _LABELS[(self._lang_of(request), self.layout)]

    def _id(self, name: str) -> str:
        return name if self.layout == 1 else f"v2-{name[::-1]}"

    def _page(self, request: web.Request, title: str, body: str, *,
              nav: bool = True, note: str = "") -> web.Response:
        L, lang = self._l(request), self._lang_of(request)
        here = quote(request.path_qs, safe="")
        links = [f'<a id="{self._id("nav-" + k)}" href="/{k}">{esc(L[k])}</a>'
                 for k in ("catalogue", "cart", "account")]
        if self.layout == 2:
            links.reverse()
        langs = " ".join(f'<a href="/lang/{c}?next={here}" lang="{c}">{_LANG_NAMES[c]}</a>'
                         for c in LANGUAGES)
        menu = ""
        if nav and self._session(request) is not None:
            menu = (f'<nav>{" | ".join(links)} <form method="post" action="/logout" '
                    f'class="inline"><button id="{self._id("logout")}">'
                    f'{esc(L["sign_out"])}</button></form></nav>')
        status = f'<p role="status">{esc(note)}</p>' if note else ""
        popup = ""
        if self.popup_open:
            popup = (f'<div class="backdrop"><div role="dialog" aria-modal="true" '
                     f'aria-label="{esc(L["popup"])}" class="dialog"><h2>{esc(L["popup"])}</h2>'
                     f'<p>{esc(L["popup_text"])}</p><form method="post" '
                     f'action="/popup/close?next={here}"><button id="{self._id("close")}">'
                     f'{esc(L["close"])}</button></form></div></div>')
        text = (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
                f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>"
                f'<header><span class="langs">{langs}</span>{menu}</header>'
                f"<main><h1>{esc(title)}</h1>{status}{body}</main>{popup}</body></html>")
        return web.Response(text=text, content_type="text/html")

    def _need_login(self, request: web.Request) -> web.Response | None:
        if self._session(request) is not None:
            return None
        raise web.HTTPFound(f"/login?expired=1&next={quote(request.path, safe='')}")

    async def _root(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/catalogue")

    async def _login_page(self, request: web.Request) -> web.Response:
        self._note()
        L = self._l(request)
        nxt = _safe_next(request.query.get("next", "/catalogue"))
        note = L["expired"] if request.query.get("expired") else ""
        if request.query.get("failed"):
            note = L["bad_login"]
        fields = [
            f'<label for="{self._id("username")}">{esc(L["username"])}</label>'
            f'<input id="{self._id("username")}" name="username" autocomplete="off">',
            f'<label for="{self._id("password")}">{esc(L["password"])}</label>'
            f'<input id="{self._id("password")}" name="password" type="password">',
        ]
        if self.layout == 2:
            fields.reverse()
        body = (f'<form method="post" action="/login?next={quote(nxt, safe="")}">'
                + "".join(f"<div>{f}</div>" for f in fields)
                + f'<button id="{self._id("signin")}">{esc(L["sign_in"])}</button></form>')
        return self._page(request, L["title_login"], body, note=note)

    async def _login(self, request: web.Request) -> web.Response:
        form = await request.post()
        nxt = _safe_next(request.query.get("next", "/catalogue"))
        if form.get("username") != USER or form.get("password") != PASSWORD:
            self._effect("login_failed")
            raise web.HTTPFound(f"/login?failed=1&next={quote(nxt, safe='')}")
        token = secrets.token_urlsafe(16)
        self.sessions[token] = _Session(USER, lang=self.anon_lang)
        self.logins += 1
        self._effect("login")
        self._note(signed_in=True, changed=True)
        resp = web.HTTPFound(nxt)
        resp.set_cookie(COOKIE, token, httponly=True, samesite="Lax")
        raise resp

    async def _logout(self, request: web.Request) -> web.Response:
        if self.sessions.pop(request.cookies.get(COOKIE, ""), None) is not None:
            self._effect("logout")
        raise web.HTTPFound("/login")

    async def _catalogue(self, request: web.Request) -> web.Response:
        self._need_login(request)
        self._note()
        L = self._l(request)
        items = list(PRODUCTS.items())
        if self.layout == 2:
            items.reverse()
        rows = "".join(
            f'<li><span class="name">{esc(name)}</span> {price:.2f} EUR '
            f'<form method="post" action="/cart/add" class="inline">'
            f'<input type="hidden" name="id" value="{pid}">'
            f'<button id="{self._id("add-" + pid)}">{esc(L["add"].format(p=name))}</button>'
            f"</form></li>" for pid, (name, price) in items)
        added = request.query.get("added", "")
        note = L["added"].format(p=PRODUCTS[added][0]) if added in PRODUCTS else ""
        return self._page(request, L["catalogue"], f"<ul>{rows}</ul>", note=note)

    async def _cart_add(self, request: web.Request) -> web.Response:
        self._need_login(request)
        pid = str((await request.post()).get("id", ""))
        if pid in PRODUCTS:
            self._effect("cart_add", item=pid, before=self._held(pid))
            self.cart[pid] = self.cart.get(pid, 0) + 1
            self._note(changed=True)
        raise web.HTTPFound(f"/catalogue?added={quote(pid)}")

    async def _cart_remove(self, request: web.Request) -> web.Response:
        self._need_login(request)
        pid = str((await request.post()).get("id", ""))
        if self.cart.get(pid):
            self._effect("cart_remove", item=pid, before=self._held(pid))
            self.cart[pid] -= 1
            if not self.cart[pid]:
                del self.cart[pid]
            self._note(changed=True)
        raise web.HTTPFound("/cart")

    def _lines(self, L: dict[str, str], removable: bool) -> tuple[str, float]:
        total = 0.0
        rows = []
        for pid, n in self.cart.items():
            name, price = PRODUCTS[pid]
            total += n * price
            rm = (f'<form method="post" action="/cart/remove" class="inline">'
                  f'<input type="hidden" name="id" value="{pid}"><button '
                  f'id="{self._id("rm-" + pid)}">{esc(L["remove"].format(p=name))}</button>'
                  f"</form>") if removable else ""
            rows.append(f"<li>{n} × {esc(name)} {rm}</li>")
        return "<ul>" + "".join(rows) + "</ul>", total

    async def _cart(self, request: web.Request) -> web.Response:
        self._need_login(request)
        self._note()
        L = self._l(request)
        if not self.cart:
            return self._page(request, L["cart"], f"<p>{esc(L['empty'])}</p>")
        rows, total = self._lines(L, removable=True)
        body = (rows + f"<p>{esc(L['total'].format(t=f'{total:.2f}'))}</p>"
                f'<a id="{self._id("checkout")}" class="button" href="/checkout">'
                f"{esc(L['checkout'])}</a>")
        return self._page(request, L["cart"], body)

    async def _checkout(self, request: web.Request) -> web.Response:
        self._need_login(request)
        self._note()
        L = self._l(request)
        if not self.cart:
            return self._page(request, L["title_checkout"], f"<p>{esc(L['empty'])}</p>")
        rows, total = self._lines(L, removable=False)
        body = (rows + f"<p>{esc(L['total'].format(t=f'{total:.2f}'))}</p>"
                f'<form method="post" action="/checkout/place">{self._items()}<button '
                f'id="{self._id("place")}">{esc(L["place"])}</button></form>')
        return self._page(request, L["title_checkout"], body)

    def _items(self) -> str:
        """The order's lines as hidden fields, for the gate to read what it places."""
        return "".join(f'<input type="hidden" name="item" value="{n} x {esc(PRODUCTS[p][0])}">'
                       for p, n in self.cart.items())

    async def _place(self, request: web.Request) -> web.Response:
        self._need_login(request)
        if not self.cart:
            raise web.HTTPFound("/cart")
        self._effect("order", before=len(self.orders))
        self.orders.append(dict(self.cart))
        self.events.append(Event("order", time.perf_counter_ns(),
                                 ", ".join(f"{n} x {k}" for k, n in sorted(self.cart.items()))))
        self.cart = {}
        self._note(changed=True)
        raise web.HTTPFound(f"/orders/{len(self.orders)}")

    async def _order(self, request: web.Request) -> web.Response:
        self._need_login(request)
        self._note()
        L = self._l(request)
        return self._page(request, L["catalogue"],
                          f"<p>{esc(L['placed'].format(n=request.match_info['n']))}</p>")

    async def _account(self, request: web.Request) -> web.Response:
        self._need_login(request)
        self._note()
        L = self._l(request)
        saved = request.query.get("saved")
        body = (f"<p>{esc(L['current'].format(e=self.email))}</p>"
                f'<form method="post" action="/account/email"><label '
                f'for="{self._id("email")}">{esc(L["email"])}</label><input type="email" '
                f'id="{self._id("email")}" name="email" autocomplete="off">'
                f'<button id="{self._id("save")}">{esc(L["save_email"])}</button></form>')
        note = L["saved"].format(e=self.email) if saved else ""
        return self._page(request, L["account"], body, note=note)

    async def _save_email(self, request: web.Request) -> web.Response:
        self._need_login(request)
        value = str((await request.post()).get("email", "")).strip()
        if "@" not in value:
            raise web.HTTPFound("/account")
        self._effect("email", value=value, before=self.email)
        self.email = value
        self.events.append(Event("email", time.perf_counter_ns(), value))
        self._note(changed=True)
        raise web.HTTPFound("/account?saved=1")

    async def _lang(self, request: web.Request) -> web.Response:
        code = request.match_info["code"]
        if code in LANGUAGES:
            s = self._session(request)
            self._effect("lang", value=code, before=self._lang_of(request))
            if s is not None:
                s.lang = code
            self.anon_lang = code
            self._note(lang=code)
        raise web.HTTPFound(_safe_next(request.query.get("next", "/catalogue")))

    async def _close_popup(self, request: web.Request) -> web.Response:
        if self.popup_open:
            self._effect("popup_close")
        self.popup_open = False
        self._note(closed_popup=True)
        raise web.HTTPFound(_safe_next(request.query.get("next", "/catalogue")))


def esc(v: object) -> str:
    return html.escape(str(v), quote=True)


def _safe_next(nxt: str) -> str:
    """Only a path on this site (no open redirect to another host)."""
    u = urlsplit(nxt)
    if u.scheme or u.netloc or not nxt.startswith("/"):
        return "/catalogue"
    return nxt


_CSS = ("body{font-family:sans-serif;margin:0}header{background:#234;color:#fff;padding:8px}"
        "header a{color:#fff;margin-right:8px}header button{margin-left:8px}"
        "main{padding:12px}.inline{display:inline}li{margin:6px 0}"
        ".backdrop{position:fixed;inset:0;background:rgba(0,0,0,.5)}"
        ".dialog{background:#fff;margin:80px auto;padding:16px;width:320px}"
        ".button{display:inline-block;padding:4px 8px;border:1px solid #345}")


class ShopServer:
    """The shop on 127.0.0.1 (a port the system picks), inside the caller's event loop."""

    def __init__(self, shop: Shop) -> None:
        self.shop = shop
        self._site = LoopbackSite()
        self.base_url = ""

    async def start(self) -> str:
        self.base_url = f"http://127.0.0.1:{await self._site.start(self.shop.web_app())}"
        return self.base_url

    async def stop(self) -> None:
        await self._site.stop()


__all__ = ["COOKIE", "LANGUAGES", "Event", "Shop", "ShopServer"]
