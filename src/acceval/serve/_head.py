"""Reading one HTTP/1.1 request head (RFC 9112), strictly: whatever could frame the body two
ways is refused, because a server that guesses desynchronises the connection (a hang at best,
request smuggling behind a proxy at worst)."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_HEAD_BYTES = 64 * 1024
"""The request line, the header lines and the blank line that ends them, in bytes."""
MAX_BODY_BYTES = 16 * 1024 * 1024

_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") ([\x21-\x7e]+) HTTP/1\.([0-9])")
# Every header line at once (one C call; a request's head is parsed on the hot path): a name,
# no space before the colon, and a value without control characters other than HT.
_VALUE = rb"[\t\x20-\x7e\x80-\xff]*"
_FIELDS = re.compile(rb"(?:\r\n" + _TOKEN + rb":" + _VALUE + rb")*")
_FIELD = re.compile(_TOKEN + rb":" + _VALUE)
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_DIGITS = re.compile(rb"[0-9]{1,19}")


class HeadError(Exception):
    """The head cannot be answered; the connection is answered ``status`` and closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class RequestHead:
    method: str
    path: str
    http10: bool
    keep_alive: bool
    request_id: str | None
    content_length: int
    expect_continue: bool


def check_request_line(line: bytes) -> re.Match[bytes]:
    """``line`` as ``METHOD TARGET HTTP/1.x``; raises HeadError when it is not."""
    match = _REQUEST_LINE.fullmatch(line)
    if match is None:
        raise HeadError(400, f"malformed request line {line[:80].decode('latin-1')!r}; "
                             "expected 'METHOD /path HTTP/1.1'")
    return match


def parse_head(head: bytes) -> RequestHead:
    """The head without its final blank line. Raises HeadError."""
    lines = head.split(b"\r\n")
    match = check_request_line(lines[0])
    if _FIELDS.fullmatch(head, len(lines[0])) is None:
        _bad_line(lines[1:])
    http10 = match.group(3) == b"0"
    lengths: list[bytes] = []
    codings: list[bytes] = []
    connection: list[bytes] = []
    request_id: str | None = None
    expect_continue = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.lower()
        if name == b"content-length":
            lengths.append(value.strip(b" \t"))
        elif name == b"transfer-encoding":
            codings.append(value.strip(b" \t"))
        elif name == b"connection":
            connection += [t.strip(b" \t").lower() for t in value.split(b",")]
        elif name == b"x-request-id":
            request_id = value.strip(b" \t").decode("latin-1")
        elif name == b"expect":
            expect_continue = value.strip(b" \t").lower() == b"100-continue"
    length = _content_length(lengths, codings, http10)
    if request_id is not None and (len(request_id) > 200 or not request_id.isprintable()):
        raise HeadError(400, "X-Request-Id must be printable text of at most 200 characters")
    keep_alive = (b"keep-alive" in connection) if http10 else (b"close" not in connection)
    return RequestHead(match.group(1).decode("latin-1"),
                       match.group(2).decode("latin-1").split("?", 1)[0],
                       http10, keep_alive, request_id, length, expect_continue)


def _bad_line(lines: list[bytes]) -> None:
    for line in lines:
        if _FIELD.fullmatch(line) is None:
            shown = line[:80].decode("latin-1")
            if _CONTROL.search(line):
                raise HeadError(400, f"header line {shown!r} holds a control character (or a "
                                     "bare CR or LF); end lines with CRLF")
            # Also a line folded onto the previous one (obs-fold), and a space before the
            # colon: RFC 9112 §5 says to reject both.
            raise HeadError(400, f"malformed header line {shown!r}; expected 'Name: value'")
    raise AssertionError("unreachable: a header line must have failed")


def _content_length(lengths: list[bytes], codings: list[bytes], http10: bool) -> int:
    """The body's length per RFC 9112 §6.3; anything ambiguous is a 400."""
    if codings:
        if lengths:
            raise HeadError(400, "both Transfer-Encoding and Content-Length; send only "
                                 "Content-Length")
        if http10:
            raise HeadError(400, "Transfer-Encoding in an HTTP/1.0 request; send "
                                 "Content-Length")
        coding = b", ".join(codings).decode("latin-1")
        raise HeadError(501, f"Transfer-Encoding {coding!r} is not supported for request "
                             "bodies; send Content-Length")
    if not lengths:
        return 0
    if len(lengths) > 1:
        raise HeadError(400, f"{len(lengths)} Content-Length headers; send exactly one")
    if _DIGITS.fullmatch(lengths[0]) is None:
        raise HeadError(400, f"Content-Length {lengths[0][:40].decode('latin-1')!r} is not a "
                             "decimal number of bytes")
    length = int(lengths[0])
    if length > MAX_BODY_BYTES:
        raise HeadError(413, f"request body of {length} bytes is larger than the limit of "
                             f"{MAX_BODY_BYTES // (1024 * 1024)} MiB ({MAX_BODY_BYTES} bytes)")
    return length
