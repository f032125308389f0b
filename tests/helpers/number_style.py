"""What a reader must never see in a report, as a scanner over rendered text.

The rules are those of :mod:`acceval.units`: no scientific notation, no raw floats (a number
with a decimal point shows at most four significant digits), no Python reprs, no "None"/"nan",
no amount of money below a hundredth of a cent (a per-unit amount shown unscaled), and one
money scale per report for every amount per task-like unit.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

SCIENTIFIC = re.compile(r"(?<![\w.#-])\d+(?:\.\d+)?[eE][+-]?\d+(?![\w.])")
DECIMAL = re.compile(r"(?<![\w.#/-])\d[\d,]*\.\d+(?![\w.])")
MISSING_WORDS = re.compile(r"\b(None|nan|NaN|inf)\b")
REPR = re.compile(r"<[\w.]+ object at 0x|\b[A-Z]\w+\(\w+=|\{'\w+': |\bdatetime\.")
TINY_MONEY = re.compile(r"\$0\.0000\d")
SCALE = re.compile(r"(?:\$[\d,.]+|\]) per (1[KMB] )?(correct tasks?|attempts?|correct workflows?|"
                   r"requests?)\b")
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?$")
MAX_SIG_DIGITS = 4


def _sig_digits(token: str) -> int:
    digits = token.replace(",", "").replace(".", "").lstrip("0")
    return len(digits)


def violations(text: str) -> list[str]:
    """Every violation in ``text``, each with a little context."""
    out: list[str] = []

    def ctx(m: re.Match[str]) -> str:
        return text[max(0, m.start() - 40):m.end() + 20].replace("\n", " ")

    for m in SCIENTIFIC.finditer(text):
        out.append(f"scientific notation {m.group(0)!r}: …{ctx(m)}…")
    for m in DECIMAL.finditer(text):
        if _sig_digits(m.group(0)) > MAX_SIG_DIGITS:
            out.append(f"raw float {m.group(0)!r}: …{ctx(m)}…")
    for pattern, what in ((MISSING_WORDS, "missing shown as"), (REPR, "repr"),
                          (TINY_MONEY, "unscaled money")):
        for m in pattern.finditer(text):
            out.append(f"{what} {m.group(0)!r}: …{ctx(m)}…")
    scales = {m.group(1) or "1" for m in SCALE.finditer(text)}
    if len(scales) > 1:
        out.append(f"money per unit in {len(scales)} scales: {sorted(scales)}")
    return out


class _Text(HTMLParser):
    """The text a reader sees (SVG labels and titles included), without scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in ("title", "aria-label", "alt") and value:
                self.parts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1
        if tag in ("p", "li", "tr", "td", "th", "div", "text", "title", "h2", "h3"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


def json_strings(text: str) -> str:
    """Every string value of a JSON document, one a line: the sentences a JSON reader
    sees (its numbers are data, kept at full precision)."""
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            if not ISO_TIME.match(v):  # a stored timestamp is data, not a figure
                out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(json.loads(text))
    return "\n".join(out)
