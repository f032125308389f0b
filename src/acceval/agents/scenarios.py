"""The built-in scenario set (``builtin:shop``) and the state it is checked against.

A scenario is a goal on the built-in shop, the number of browser actions its shortest path
takes, how it starts (signed in or not), whether it holds an irreversible action, and a
deterministic check of the shop's final state. The check reads the server's state only,
never the agent's words. ``path`` is the reference path the scripted policy follows: a list
of intents, each an action on an element named by a key (docs/agents.md).

The goal is data (:class:`Want`), not only a check, so that each action's effect can be
judged against it too: :mod:`acceval.agents.stray` says whether an action moved the shop
toward the goal or strayed from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from acceval.agents.gate import Guard

USER = "alice"
PASSWORD = "wonderland"
OLD_EMAIL = "alice@example.com"
NEW_EMAIL = "alice.new@example.com"

#: id -> (name, price in EUR). Names are proper nouns: no language translates them.
PRODUCTS: dict[str, tuple[str, float]] = {
    "aurora": ("Aurora mug", 12.0),
    "boreal": ("Boreal tea towel", 8.5),
    "cirrus": ("Cirrus notebook", 6.0),
    "delta": ("Delta pen", 3.2),
}


@dataclass(frozen=True, slots=True)
class ShopState:
    """What the server holds at the end of an episode: the ground truth of every check."""

    email: str
    cart: dict[str, int]
    orders: tuple[dict[str, int], ...]
    signed_in: bool            # a session of the user is valid (the browser's or another)
    language: str              # of the user's newest session ("en" when none)
    logins: int                # successful sign-ins during the episode


@dataclass(frozen=True, slots=True)
class Intent:
    """One step of a reference path: ``action`` on the element ``key`` (``value`` to type).
    ``page`` is where the element lives, for a policy that lost its way."""

    action: str                # click | type | confirm
    key: str
    page: str
    value: str = ""
    lands: str = ""            # the page it leads to ("": it stays on ``page``)


Check = Callable[[ShopState], str | None]  # None: the state is right; else why not


def _basket(items: dict[str, int]) -> str:
    """``cirrus ×1, nimbus ×2`` (a reason a reader reads, not a Python repr)."""
    return ", ".join(f"{k} ×{n}" for k, n in items.items()) or "empty"


def _orders(orders: tuple[dict[str, int], ...] | list[dict[str, int]]) -> str:
    return "; ".join(f"({_basket(o)})" for o in orders) or "none"


@dataclass(frozen=True, slots=True)
class Want:
    """The final state a scenario asks for; what it leaves ``None`` it does not check."""

    email: str = OLD_EMAIL
    orders: tuple[dict[str, int], ...] = ()
    cart: dict[str, int] | None = None
    signed_in: bool | None = None
    language: str | None = None

    def check(self, s: ShopState) -> str | None:
        problems = []
        if s.email != self.email:
            problems.append(f"e-mail is {s.email!r}, expected {self.email!r}")
        if s.orders != self.orders:
            problems.append(f"orders are {_orders(s.orders)}, expected {_orders(self.orders)}")
        if self.cart is not None and s.cart != self.cart:
            problems.append(f"cart is {_basket(s.cart)}, expected {_basket(self.cart)}")
        if self.signed_in is not None and s.signed_in != self.signed_in:
            problems.append("not signed in" if self.signed_in else "still signed in")
        if self.language is not None and s.language != self.language:
            problems.append(f"language is {s.language}, expected {self.language}")
        return "; ".join(problems) or None

    @property
    def items(self) -> dict[str, int]:
        """Every product the goal holds, ordered or in the cart, with its count."""
        out: dict[str, int] = dict(self.cart or {})
        for order in self.orders:
            for pid, n in order.items():
                out[pid] = out.get(pid, 0) + n
        return out


#: The shop's irreversible requests, which the gate guards (the checkout form carries one
#: hidden ``item`` field per line of the order, "1 x Aurora mug", for the gate to read).
SHOP_GUARDS = (
    Guard("place_order", "POST", "/checkout/place", "item",
          "every line of the order, as '<count> x <product name>'"),
    Guard("change_email", "POST", "/account/email", "email", "the new e-mail address"),
)


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    goal: str
    signed_in: bool            # starts with a valid session
    start: str                 # the page it starts on
    irreversible: bool
    want: Want
    path: tuple[Intent, ...] = field(default=())
    perturbations: tuple[str, ...] = ("expired_session", "popup", "layout", "language")
    guards: tuple[Guard, ...] = SHOP_GUARDS

    @property
    def check(self) -> Check:
        return self.want.check

    @property
    def steps(self) -> int:
        """Browser actions on the shortest path (a ``confirm`` is not one)."""
        return sum(1 for i in self.path if i.action != "confirm")

    @property
    def route(self) -> tuple[str, ...]:
        """The pages the reference path passes through, in order (an order's page is
        ``/orders``, whatever its number)."""
        out = [self.start]
        for i in self.path:
            out += [i.page, i.lands] if i.lands else [i.page]
        return tuple(out)

    @property
    def fills(self) -> frozenset[tuple[str, str]]:
        """(field, text) pairs the goal accepts typed: the path's own, and the sign-in's
        (signing in again is how an expired session is overcome)."""
        typed = {(i.key, i.value) for i in self.path if i.action == "type"}
        return frozenset(typed | {("username", USER), ("password", PASSWORD)})


def _login() -> tuple[Intent, ...]:
    return (Intent("type", "username", "/login", USER),
            Intent("type", "password", "/login", PASSWORD),
            Intent("click", "sign_in", "/login", lands="/catalogue"))


def _add(pid: str) -> Intent:
    return Intent("click", f"add:{pid}", "/catalogue")


_BUY = (Intent("click", "nav_cart", "/catalogue", lands="/cart"),
        Intent("click", "checkout", "/cart", lands="/checkout"),
        Intent("confirm", "place_order", "/checkout"),
        Intent("click", "place_order", "/checkout", lands="/orders"))
_EMAIL = (Intent("click", "nav_account", "/catalogue", lands="/account"),
          Intent("type", "email", "/account", NEW_EMAIL),
          Intent("confirm", "change_email", "/account"),
          Intent("click", "save_email", "/account"))

_LIST = [
    Scenario("switch-language", "Switch the shop to Spanish (Español).", True,
             "/catalogue", False, Want(language="es", cart={}),
             (Intent("click", "lang_es", "/catalogue"),),
             perturbations=("expired_session", "popup", "layout")),
    Scenario("add-to-cart", "Add one Aurora mug and one Cirrus notebook to the cart. Do not "
             "place an order.", True, "/catalogue", False,
             Want(cart={"aurora": 1, "cirrus": 1}), (_add("aurora"), _add("cirrus"))),
    Scenario("sign-in", f"Sign in as {USER} (password: {PASSWORD}).", False, "/login",
             False, Want(signed_in=True, cart={}), _login()),
    Scenario("change-email", f"Change the account e-mail address to {NEW_EMAIL}.", True,
             "/catalogue", True, Want(email=NEW_EMAIL, cart={}), _EMAIL),
    Scenario("buy-one", "Buy one Aurora mug and place the order.", True, "/catalogue",
             True, Want(orders=({"aurora": 1},), cart={}), (_add("aurora"), *_BUY)),
    Scenario("sign-in-and-buy", f"Sign in as {USER} (password: {PASSWORD}), then buy one "
             "Delta pen and one Boreal tea towel in one order.", False, "/login", True,
             Want(orders=({"boreal": 1, "delta": 1},), cart={}),
             (*_login(), _add("delta"), _add("boreal"), *_BUY)),
    Scenario("update-and-buy", f"Sign in as {USER} (password: {PASSWORD}), change the account "
             f"e-mail address to {NEW_EMAIL}, then buy one Cirrus notebook.", False,
             "/login", True, Want(email=NEW_EMAIL, orders=({"cirrus": 1},), cart={}),
             (*_login(), *_EMAIL, Intent("click", "nav_catalogue", "/account",
                                         lands="/catalogue"),
              _add("cirrus"), *_BUY)),
]

SCENARIOS: dict[str, Scenario] = {s.id: s for s in _LIST}


def shop_pack() -> list[Scenario]:
    """The built-in shop as a scenario pack (``builtin:shop`` in ``acceval.scenarios``)."""
    return list(_LIST)


def selected(only: list[str]) -> list[Scenario]:
    """The scenarios a study runs, in the set's order."""
    return [s for s in _LIST if not only or s.id in only]


__all__ = ["NEW_EMAIL", "OLD_EMAIL", "PASSWORD", "PRODUCTS", "SCENARIOS", "SHOP_GUARDS", "USER",
           "Check",
           "Intent", "Scenario", "ShopState", "Want", "selected", "shop_pack"]
