"""Server-sent events framing: response bytes as they arrive, out come the events' ``data``.

The work is linear in the bytes received. Each read is decoded and searched for line ends
once; a line that spans reads is kept as the list of its pieces and joined once, when its end
arrives. (Joining the partial line to every new read and searching it all again is quadratic:
one 32 MB line took 2.7 s, while every other request on the event loop waited.) A line is
never longer than its response, which the HTTP layer bounds (``endpoint.max_response_bytes``).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

_utf8_decoder = codecs.getincrementaldecoder("utf-8")


class EventSplitter:
    """One response's SSE stream. Only ``data:`` lines are kept; other fields (``event:``,
    ``id:``, ``retry:``) and ``:`` comments carry nothing a benchmark uses."""

    __slots__ = ("_data", "_decode", "_more", "_tail", "scanned")

    def __init__(self) -> None:
        self._decode: Callable[..., str] = _utf8_decoder("replace").decode
        self._tail: list[str] = []             # the pieces of the line not yet ended
        self._data: str | None = None          # the first data line of the event not yet ended
        self._more: list[str] = []             # and its other data lines
        self.scanned = 0                       # characters searched for line ends

    def feed(self, data: bytes) -> list[str]:
        """The events completed by ``data``, in order."""
        text = self._decode(data)
        self.scanned += len(text)
        lines = text.split("\n")
        tail = self._tail
        if len(lines) == 1:
            if text:
                tail.append(text)
            return []
        if tail:
            tail.append(lines[0])
            lines[0] = "".join(tail)
            tail.clear()
        last = lines.pop()
        if last:
            tail.append(last)
        events: list[str] = []
        data_ = self._data
        more = self._more
        for line in lines:
            if line.startswith("data:"):
                payload = line[6:] if line[5:6] == " " else line[5:]
                if payload.endswith("\r"):
                    payload = payload[:-1]
                if data_ is None:
                    data_ = payload
                else:
                    more.append(payload)
            elif data_ is not None and (not line or line == "\r"):
                if more:
                    data_ = "\n".join([data_, *more])
                    more.clear()
                events.append(data_)
                data_ = None
        self._data = data_
        return events

    def close(self) -> list[str]:
        """The events left when the response ends: a last line or event that lacks its blank
        line still counts, and a character cut at the end becomes U+FFFD."""
        rest = self._decode(b"", True)
        if rest:
            self._tail.append(rest)
        return self.feed(b"\n\n")
