"""The built-in text checkers: exact, numeric, regex, contains, choice.

Every checker is built as ``Checker(reference, **options)`` (the same call a plugin factory
gets) and validates its options at construction, raising :class:`CheckerOptionError` naming the
option. ``check`` itself never raises: the shared ``_Base.check`` turns None/empty output,
non-text junk and internal surprises into reasons, and marks wrong or unparsable answers of a
response cut by ``max_tokens`` as "truncated".
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from acceval.tasks._task import EXTRACTED_MAX_CHARS, CheckResult, Reason


class CheckerOptionError(ValueError):
    """A checker option (or the reference) is invalid. ``option`` names it."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option
        self.message = message


# --- shared plumbing ----------------------------------------------------------------------------

_EMPTY = CheckResult(False, "empty", None)


def _clip(text: str | None) -> str | None:
    return None if text is None else text[:EXTRACTED_MAX_CHARS]


def verdict(ok: bool, extracted: str | None, *, bad: Reason = "wrong") -> CheckResult:
    """A result with the extracted answer clipped for storage."""
    return CheckResult(ok, "correct" if ok else bad, _clip(extracted))


def unparsable(extracted: str | None = None) -> CheckResult:
    return CheckResult(False, "unparsable", _clip(extracted))


def finish(result: CheckResult, finish_reason: str | None) -> CheckResult:
    """A wrong or unreadable answer from a response cut at max_tokens is reported as truncated."""
    if finish_reason == "length" and result.reason in ("wrong", "unparsable"):
        return CheckResult(False, "truncated", result.extracted)
    return result


def as_text(output: object) -> str | None:
    """The output as text; bytes are decoded leniently, anything else is not an answer."""
    if isinstance(output, str):
        return output
    if isinstance(output, bytes | bytearray):
        return bytes(output).decode("utf-8", errors="replace")
    return None


class _Base:
    """Shared ``check``: subclasses implement ``_judge(text)`` for non-blank text only."""

    __slots__ = ()

    def check(self, output: str | None, *, finish_reason: str | None = None) -> CheckResult:
        text = as_text(output)
        if text is None or not text.strip():
            return _EMPTY
        try:
            result = self._judge(text)
        except Exception:  # a checker never raises (RecursionError on deep JSON, say)
            return CheckResult(False, "error", None)
        return finish(result, finish_reason)

    def _judge(self, text: str) -> CheckResult:
        raise NotImplementedError


def _want_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise CheckerOptionError(name, f"expected true or false, got {value!r}")


def _want_nonneg(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise CheckerOptionError(name, f"expected a number >= 0, got {value!r}")


def _want_choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise CheckerOptionError(name, f"expected one of {', '.join(allowed)}; got {value!r}")


def _want_reference(reference: Any) -> str:
    if not isinstance(reference, str) or not reference.strip():
        raise CheckerOptionError("reference", "this checker needs a non-empty reference answer")
    return reference


# --- exact --------------------------------------------------------------------------------------

# Characters `strip_punctuation` trims at both ends. '-' and '+' stay: they are signs.
_EDGE_PUNCT = ".,;:!?\"'`“”‘’«»()[]{}*_"
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class ExactChecker(_Base):
    """Equal after normalisation. Defaults: trim ends and collapse inner whitespace runs."""

    reference: str | None
    strip: bool = True
    collapse_whitespace: bool = True
    ignore_whitespace: bool = False
    casefold: bool = False
    strip_punctuation: bool = False
    remove_punctuation: bool = False
    first_line: bool = False
    _want: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("strip", "collapse_whitespace", "ignore_whitespace", "casefold",
                     "strip_punctuation", "remove_punctuation", "first_line"):
            _want_bool(name, getattr(self, name))
        want = self.normalise(_want_reference(self.reference))
        if not want:
            raise CheckerOptionError("reference", "is empty after normalisation")
        object.__setattr__(self, "_want", want)

    def normalise(self, text: str) -> str:
        if self.first_line:
            text = text.strip().split("\n", 1)[0]
        if self.remove_punctuation:
            text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        if self.ignore_whitespace:
            text = _WS.sub("", text)
        elif self.collapse_whitespace:
            text = _WS.sub(" ", text)
        if self.strip or self.strip_punctuation:
            text = text.strip()
        if self.strip_punctuation:
            text = text.strip(_EDGE_PUNCT).strip()
        if self.casefold:
            text = text.casefold()
        return text

    def _judge(self, text: str) -> CheckResult:
        got = self.normalise(text)
        if not got:
            return unparsable(None)
        return verdict(got == self._want, got)


# --- numeric ------------------------------------------------------------------------------------

# A number: optional sign (not glued to a preceding word, so the '-' in 2024-02-20 is no sign),
# thousands groups "1,234,567" or plain digits, optional decimals and exponent.
_NUMBER = re.compile(
    r"(?<![\w.])([-+\u2212]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE]([-+]?\d+))?(?!\d)",
    re.ASCII,
)
_MAX_NUMBER_CHARS = 1000  # longer digit runs are junk, not answers


def _number_of(m: re.Match[str]) -> tuple[str, Decimal] | None:
    sign, body, exp = m.group(1), m.group(2), m.group(3)
    if len(body) > _MAX_NUMBER_CHARS or (exp and len(exp) > 12):
        return None
    norm = ("-" if sign in ("-", "\u2212") else "") + body.replace(",", "")
    if exp:
        norm += "e" + exp
    try:
        return norm, Decimal(norm)
    except (InvalidOperation, ValueError):
        return None


def find_number(text: str, pick: str = "last") -> tuple[str, Decimal] | None:
    """The first or last number in ``text`` as (normalised text, value); None if there is none.

    Only the chosen match is converted, so a megabyte of digits costs one regex pass.
    """
    if pick == "first":
        for m in _NUMBER.finditer(text):
            if (num := _number_of(m)) is not None:
                return num
        return None
    last = None
    for m in _NUMBER.finditer(text):
        if len(m.group(2)) <= _MAX_NUMBER_CHARS:
            last = m
    return _number_of(last) if last is not None else None


def count_numbers(text: str) -> int:
    return sum(1 for _ in _NUMBER.finditer(text))


def close_enough(got: Decimal, want: Decimal, abs_tol: float, rel_tol: float) -> bool:
    """|got - want| <= max(abs_tol, rel_tol * |want|); exact equality when both are 0."""
    if got == want:
        return True
    if abs_tol == 0 and rel_tol == 0:
        return False
    try:
        diff = abs(got - want)
        return diff <= max(Decimal(repr(abs_tol)), Decimal(repr(rel_tol)) * abs(want))
    except ArithmeticError:  # exponents beyond Decimal's range: not a sensible answer
        return False


@dataclass(frozen=True, slots=True)
class NumericChecker(_Base):
    """The number in the output equals the reference within tolerance.

    ``pick`` chooses which number of a prose answer counts: "last" (default; "45 + 123 = 168")
    or "first" (a terse model that keeps talking after its answer).
    """

    reference: str | None
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    pick: str = "last"
    _want: Decimal = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _want_nonneg("abs_tol", self.abs_tol)
        _want_nonneg("rel_tol", self.rel_tol)
        _want_choice("pick", self.pick, ("first", "last"))
        ref = _want_reference(self.reference)
        num = find_number(ref)
        if num is None or count_numbers(ref) != 1:
            raise CheckerOptionError("reference", f"expected exactly one number, got {ref!r}")
        object.__setattr__(self, "_want", num[1])

    def _judge(self, text: str) -> CheckResult:
        num = find_number(text, self.pick)
        if num is None:
            return unparsable(None)
        norm, value = num
        return verdict(close_enough(value, self._want, self.abs_tol, self.rel_tol), norm)


# --- regex --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RegexChecker(_Base):
    """Extract with ``pattern`` (group "answer", else group 1, else the whole match), then compare
    the extracted text with the reference, exactly or numerically. No match: unparsable."""

    reference: str | None
    pattern: str = ""
    match: str = "first"
    compare: str = "exact"
    casefold: bool = False
    strip_punctuation: bool = False
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    _rx: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _inner: ExactChecker | NumericChecker = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str) or not self.pattern:
            raise CheckerOptionError("pattern", "give a regular expression with a capture group")
        try:
            rx = re.compile(self.pattern)
        except re.error as exc:
            raise CheckerOptionError("pattern", f"not a valid regular expression: {exc}") from None
        _want_choice("match", self.match, ("first", "last"))
        _want_choice("compare", self.compare, ("exact", "numeric"))
        inner: ExactChecker | NumericChecker
        if self.compare == "exact":
            inner = ExactChecker(self.reference, casefold=self.casefold,
                                 strip_punctuation=self.strip_punctuation)
        else:
            inner = NumericChecker(self.reference, abs_tol=self.abs_tol, rel_tol=self.rel_tol)
        object.__setattr__(self, "_rx", rx)
        object.__setattr__(self, "_inner", inner)

    def _group(self, m: re.Match[str]) -> str | None:
        if "answer" in self._rx.groupindex:
            return m.group("answer")
        return m.group(1) if self._rx.groups >= 1 else m.group(0)

    def _judge(self, text: str) -> CheckResult:
        if self.match == "first":
            m = self._rx.search(text)
        else:
            m = None
            for m in self._rx.finditer(text):  # noqa: B007 - we want the last match
                pass
        got = self._group(m) if m is not None else None
        if got is None or not got.strip():
            return unparsable(None)
        return self._inner._judge(got)


# --- contains -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ContainsChecker(_Base):
    """The reference appears somewhere in the output (whitespace runs collapsed)."""

    reference: str | None
    casefold: bool = False
    _want: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _want_bool("casefold", self.casefold)
        object.__setattr__(self, "_want", self._norm(_want_reference(self.reference).strip()))

    def _norm(self, text: str) -> str:
        text = _WS.sub(" ", text)
        return text.casefold() if self.casefold else text

    def _judge(self, text: str) -> CheckResult:
        ok = self._want in self._norm(text)
        return verdict(ok, self._want if ok else None)


# --- multiple choice ----------------------------------------------------------------------------

_MD = re.compile(r"[*_`]")


@dataclass(frozen=True, slots=True)
class ChoiceChecker(_Base):
    """A multiple-choice letter. Reads, in order of trust: an explicit "Answer: B" / "the answer
    is (B)" (the last one), a letter opening the output ("B", "(B)", "B) text", "B. text"),
    else a single distinct bracketed "(B)" anywhere. An output that lists several options
    ("A) 12\nB) 15") without saying which, or anything else, is unparsable."""

    reference: str | None
    letters: str = "ABCDE"
    _want: str = field(init=False, repr=False, compare=False)
    _explicit: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _opening: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _bracketed: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (not isinstance(self.letters, str) or not self.letters
                or not all(c in string.ascii_uppercase for c in self.letters)
                or len(set(self.letters)) != len(self.letters)):
            raise CheckerOptionError("letters", f"expected distinct capitals like 'ABCD', "
                                                f"got {self.letters!r}")
        want = _want_reference(self.reference).strip().strip("()[]. ").upper()
        if len(want) != 1 or want not in self.letters:
            raise CheckerOptionError(
                "reference", f"expected one of the letters {self.letters}, got {self.reference!r}"
            )
        cls = f"[{self.letters}]"
        set_ = object.__setattr__
        set_(self, "_want", want)
        set_(self, "_explicit", re.compile(
            r"(?i:\banswer\b)(?:\s+(?i:is))?\s*[:=\-]?\s*(?:(?i:option|choice)\s*)?"
            rf"[(\[]?({cls})(?![A-Za-z0-9])"))
        set_(self, "_opening", re.compile(rf"\A\s*[(\[]?({cls})(?:[)\].:]|\s*\Z|[ \t]*\n)"))
        set_(self, "_bracketed", re.compile(rf"[(\[]({cls})[)\]]|^[ \t]*({cls})\)", re.M))

    def _judge(self, text: str) -> CheckResult:
        text = _MD.sub("", text)
        got: str | None = None
        explicit = list(self._explicit.finditer(text))
        listed = {m.group(1) or m.group(2) for m in self._bracketed.finditer(text)}
        if explicit:
            got = explicit[-1].group(1)
        elif len(listed) > 1:
            got = None  # the options echoed back, no pick
        elif (m := self._opening.match(text)) is not None:
            got = m.group(1)
        elif len(bare := text.strip().strip(".)(").upper()) == 1 and bare in self.letters:
            got = bare
        elif len(listed) == 1:
            got = listed.pop()
        if got is None:
            return unparsable(None)
        return verdict(got == self._want, got)
