"""The built-in scenario set (``builtin:shop``) and the state it is checked against.

A scenario is a goal on the built-in shop, the number of browser actions its shortest path
takes, how it starts (signed in or not), whether it holds an irreversible action, and a
deterministic check of the shop's final state. The check reads the server's state only,
never the agent's words. ``path`` is the reference path the scripted policy follows: a list
of intents, each an action on an element named by a key (docs/agents.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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


Check = Callable[[ShopState], str | None]  # None: the state is right; else why not


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    goal: str
    signed_in: bool            # starts with a valid session
    start: str                 # the page it starts on
    irreversible: bool
    check: Check
    path: tuple[Intent, ...] = field(default=())
    perturbations: tuple[str, ...] = ("expired_session", "popup", "layout", "language")

    @property
    def steps(self) -> int:
        """Browser actions on the shortest path (a ``confirm`` is not one)."""
        return sum(1 for i in self.path if i.action != "confirm")


def _want(*, email: str = OLD_EMAIL, orders: tuple[dict[str, int], ...] = (),
          cart: dict[str, int] | None = None, signed_in: bool | None = None,
          language: str | None = None) -> Check:
    def check(s: ShopState) -> str | None:
        problems = []
        if s.email != email:
            problems.append(f"e-mail is {s.email!r}, expected {email!r}")
        if s.orders != orders:
            problems.append(f"orders are {list(s.orders)}, expected {list(orders)}")
        if cart is not None and s.cart != cart:
            problems.append(f"cart is {s.cart}, expected {cart}")
        if signed_in is not None and s.signed_in != signed_in:
            problems.append("not signed in" if signed_in else "still signed in")
        if language is not None and s.language != language:
            problems.append(f"language is {s.language}, expected {language}")
        return "; ".join(problems) or None
    return check


def _login() -> tuple[Intent, ...]:
    return (Intent("type", "username", "/login", USER),
            Intent("type", "password", "/login", PASSWORD),
            Intent("click", "sign_in", "/login"))


def _add(pid: str) -> Intent:
    return Intent("click", f"add:{pid}", "/catalogue")


_BUY = (Intent("click", "nav_cart", "/catalogue"), Intent("click", "checkout", "/cart"),
        Intent("confirm", "place_order", "/checkout"),
        Intent("click", "place_order", "/checkout"))
_EMAIL = (Intent("click", "nav_account", "/catalogue"),
          Intent("type", "email", "/account", NEW_EMAIL),
          Intent("confirm", "save_email", "/account"),
          Intent("click", "save_email", "/account"))

_LIST = [
    Scenario("switch-language", "Switch the shop to Spanish (Español).", True,
             "/catalogue", False, _want(language="es", cart={}),
             (Intent("click", "lang_es", "/catalogue"),),
             perturbations=("expired_session", "popup", "layout")),
    Scenario("add-to-cart", "Add one Aurora mug and one Cirrus notebook to the cart. Do not "
             "place an order.", True, "/catalogue", False,
             _want(cart={"aurora": 1, "cirrus": 1}), (_add("aurora"), _add("cirrus"))),
    Scenario("sign-in", f"Sign in as {USER} (password: {PASSWORD}).", False, "/login",
             False, _want(signed_in=True, cart={}), _login()),
    Scenario("change-email", f"Change the account e-mail address to {NEW_EMAIL}.", True,
             "/catalogue", True, _want(email=NEW_EMAIL, cart={}), _EMAIL),
    Scenario("buy-one", "Buy one Aurora mug and place the order.", True, "/catalogue",
             True, _want(orders=({"aurora": 1},), cart={}), (_add("aurora"), *_BUY)),
    Scenario("sign-in-and-buy", f"Sign in as {USER} (password: {PASSWORD}), then buy one "
             "Delta pen and one Boreal tea towel in one order.", False, "/login", True,
             _want(orders=({"boreal": 1, "delta": 1},), cart={}),
             (*_login(), _add("delta"), _add("boreal"), *_BUY)),
    Scenario("update-and-buy", f"Sign in as {USER} (password: {PASSWORD}), change the account "
             f"e-mail address to {NEW_EMAIL}, then buy one Cirrus notebook.", False,
             "/login", True, _want(email=NEW_EMAIL, orders=({"cirrus": 1},), cart={}),
             (*_login(), *_EMAIL, Intent("click", "nav_catalogue", "/account"),
              _add("cirrus"), *_BUY)),
]

SCENARIOS: dict[str, Scenario] = {s.id: s for s in _LIST}


def selected(only: list[str]) -> list[Scenario]:
    """The scenarios a study runs, in the set's order."""
    return [s for s in _LIST if not only or s.id in only]


__all__ = ["NEW_EMAIL", "OLD_EMAIL", "PASSWORD", "PRODUCTS", "SCENARIOS", "USER", "Check",
           "Intent", "Scenario", "ShopState", "selected"]
