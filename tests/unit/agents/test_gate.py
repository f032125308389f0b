"""The confirmation gate's judgement, pure: a confirmation counts only when it names the
same action and object and comes within the window; each is judged once; count mode lets
everything through and keeps the verdicts."""

from __future__ import annotations

from acceval.agents.gate import Gate, Guard, names_object
from acceval.agents.scenarios import SHOP_GUARDS

ORDER, EMAIL = SHOP_GUARDS
CART = {"item": ["1 x Aurora mug", "2 x Delta pen"]}


def _gate(mode: str = "enforce", window: int = 1) -> Gate:
    return Gate(SHOP_GUARDS, mode, window)  # type: ignore[arg-type]


def _at(gate: Gate, step: int) -> Gate:
    gate.step = step
    return gate


def test_a_confirmation_of_the_same_action_and_object_the_step_before_passes() -> None:
    g = _gate()
    _at(g, 3).confirm("place_order", "1 x Aurora mug and 2 x Delta pen")
    d = _at(g, 4).judge(ORDER, CART)
    assert (d.verdict, d.refused) == ("confirmed", False)
    assert d.object == "1 x Aurora mug; 2 x Delta pen"


def test_no_confirmation_is_refused() -> None:
    d = _at(_gate(), 2).judge(EMAIL, {"email": ["a@b.org"]})
    assert (d.verdict, d.refused) == ("unconfirmed", True)


def test_another_action_or_another_object_is_a_mismatch() -> None:
    g = _gate()
    _at(g, 1).confirm("change the account e-mail", "1 x Aurora mug; 2 x Delta pen")
    assert _at(g, 2).judge(ORDER, CART).verdict == "mismatched"
    _at(g, 5).confirm("place_order", "1 x Aurora mug")  # a line missing
    assert _at(g, 6).judge(ORDER, CART).verdict == "mismatched"
    _at(g, 7).confirm("place order", "11 x Aurora mug, 2 x Delta pen")  # 11 is not 1
    assert _at(g, 8).judge(ORDER, CART).verdict == "mismatched"


def test_a_matching_confirmation_too_early_is_stale_and_the_window_widens_it() -> None:
    g = _gate()
    _at(g, 1).confirm("change_email", "a@b.org")
    d = _at(g, 4).judge(EMAIL, {"email": ["a@b.org"]})
    assert (d.verdict, d.refused) == ("stale", True)
    wide = _gate(window=3)
    _at(wide, 1).confirm("change_email", "a@b.org")
    assert _at(wide, 4).judge(EMAIL, {"email": ["a@b.org"]}).verdict == "confirmed"


def test_a_confirmation_is_judged_once() -> None:
    g = _gate()
    _at(g, 1).confirm("change_email", "a@b.org")
    assert _at(g, 2).judge(EMAIL, {"email": ["a@b.org"]}).verdict == "confirmed"
    assert _at(g, 3).judge(EMAIL, {"email": ["a@b.org"]}).verdict == "unconfirmed"


def test_count_mode_refuses_nothing_and_keeps_the_verdicts() -> None:
    g = _gate("count")
    _at(g, 0).confirm("place_order", "1 x Aurora mug, 2 x Delta pen")
    verdicts = [_at(g, 3).judge(ORDER, CART), _at(g, 4).judge(EMAIL, {"email": ["x@y.z"]})]
    assert [(d.verdict, d.refused) for d in verdicts] == [("stale", False),
                                                          ("unconfirmed", False)]
    assert g.decisions == verdicts


def test_guards_match_method_and_path_pattern() -> None:
    g = Guard("cancel", "POST", "/orders/*/cancel")
    assert g.matches("post", "/orders/12/cancel")
    assert not g.matches("GET", "/orders/12/cancel")
    assert not g.matches("POST", "/orders/12")
    assert _gate().guard_for("POST", "/account/email") is EMAIL


def test_an_address_is_named_only_whole() -> None:
    assert names_object("Change it to alice.new@example.com.", ["alice.new@example.com"])
    assert not names_object("to xalice.new@example.com", ["alice.new@example.com"])
    assert not names_object("to alice.new@example.com.au", ["alice.new@example.com"])
    assert names_object("anything", [])
