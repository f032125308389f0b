"""The OpenAI wire format: request validation and response/event encoding.

Streaming events are assembled from per-request string templates instead of ``json.dumps`` of
a dict per chunk: the server must never be a client benchmark's bottleneck, and a chunk is
then one ``json.dumps`` of its text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from acceval._json import loads

_dumps = json.dumps
# A string as json.dumps writes it (the C function it calls), without its dispatch: a token's
# text is one of these per streamed event.
_dumps_str = encode_basestring_ascii

# A request without max_tokens gets this cap; an engine stops earlier at its own end.
DEFAULT_MAX_TOKENS = 4096


class BadRequest(Exception):
    """The request is not a valid OpenAI request; becomes an HTTP error with an error object."""

    def __init__(self, message: str, *, param: str | None = None, status: int = 400,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status
        self.kind = kind


def error_body(message: str, *, kind: str, status: int, param: str | None = None) -> bytes:
    """An OpenAI-style error object."""
    err = {"message": message, "type": kind, "param": param, "code": status}
    return _dumps({"error": err}).encode()


@dataclass(slots=True)
class ParsedRequest:
    chat: bool
    prompt: str | None                       # completions
    messages: list[tuple[str, str]] | None   # chat
    max_tokens: int
    temperature: float
    stream: bool
    model: str | None
    ignore_eos: bool = False   # vLLM's field: generate max_tokens whatever the model says


def _content_text(content: Any, index: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text"
                    and isinstance(part.get("text"), str)):
                raise BadRequest("only text content parts are supported",
                                 param=f"messages[{index}].content")
            parts.append(part["text"])
        return "".join(parts)
    raise BadRequest("content must be a string or a list of text parts",
                     param=f"messages[{index}].content")


def parse_request(body: bytes, *, chat: bool) -> ParsedRequest:
    """Validate a completions or chat-completions body. Raises BadRequest."""
    try:
        data = loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise BadRequest("request body nests JSON arrays or objects too deeply") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    prompt: str | None = None
    messages: list[tuple[str, str]] | None = None
    if chat:
        raw = data.get("messages")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("'messages' must be a non-empty list", param="messages")
        messages = []
        for i, msg in enumerate(raw):
            if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
                raise BadRequest("each message needs a string 'role'", param=f"messages[{i}]")
            messages.append((msg["role"], _content_text(msg.get("content"), i)))
    else:
        raw = data.get("prompt")
        if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], str):
            raw = raw[0]
        if not isinstance(raw, str):
            raise BadRequest("'prompt' must be a string (one prompt per request)",
                             param="prompt")
        prompt = raw
    max_tokens = data.get("max_tokens", data.get("max_completion_tokens"))
    if max_tokens is None:
        max_tokens = DEFAULT_MAX_TOKENS
    elif isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise BadRequest("'max_tokens' must be an integer >= 1", param="max_tokens")
    temperature = data.get("temperature", 0.0)
    if temperature is None:
        temperature = 0.0
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise BadRequest("'temperature' must be a number", param="temperature")
    stream = data.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("'stream' must be a boolean", param="stream")
    n = data.get("n", 1)
    if n not in (1, None):
        raise BadRequest("only n=1 is supported", param="n")
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise BadRequest("'model' must be a string", param="model")
    ignore_eos = data.get("ignore_eos", False)
    if ignore_eos is None:
        ignore_eos = False
    if not isinstance(ignore_eos, bool):
        raise BadRequest("'ignore_eos' must be a boolean", param="ignore_eos")
    return ParsedRequest(chat, prompt, messages, max_tokens, float(temperature), stream, model,
                         ignore_eos)


def usage_json(prompt_tokens: int, completion_tokens: int, cached: int | None = None) -> str:
    details = "" if cached is None else f',"prompt_tokens_details":{{"cached_tokens":{cached}}}'
    return (f'{{"prompt_tokens":{prompt_tokens},"completion_tokens":{completion_tokens},'
            f'"total_tokens":{prompt_tokens + completion_tokens}{details}}}')


class Encoder:
    """Per-request templates for one completions or chat response (streamed or not)."""

    __slots__ = ("_chunk_mid", "_chunk_pre", "_head", "chat")

    def __init__(self, *, response_id: str, model: str, created: int, chat: bool,
                 stream: bool) -> None:
        self.chat = chat
        if chat:
            obj = "chat.completion.chunk" if stream else "chat.completion"
        else:
            obj = "text_completion"
        self._head = (f'{{"id":{_dumps(response_id)},"object":"{obj}","created":{created},'
                      f'"model":{_dumps(model)},"choices":')
        if chat:
            self._chunk_pre = 'data: ' + self._head + '[{"index":0,"delta":{"content":'
            self._chunk_mid = '},"logprobs":null,"finish_reason":'
        else:
            self._chunk_pre = 'data: ' + self._head + '[{"index":0,"text":'
            self._chunk_mid = ',"logprobs":null,"finish_reason":'

    def chunk_event(self, text: str, finish_reason: str | None) -> str:
        finish = "null" if finish_reason is None else _dumps_str(finish_reason)
        return f"{self._chunk_pre}{_dumps_str(text)}{self._chunk_mid}{finish}}}]}}\n\n"

    def role_event(self) -> str:
        # Like vLLM and OpenAI, a chat stream opens with the assistant role and empty content.
        return ('data: ' + self._head + '[{"index":0,"delta":{"role":"assistant","content":""},'
                '"logprobs":null,"finish_reason":null}]}\n\n')

    def usage_event(self, prompt_tokens: int, completion_tokens: int,
                    cached: int | None = None) -> str:
        usage = usage_json(prompt_tokens, completion_tokens, cached)
        return f'data: {self._head}[],"usage":{usage}}}\n\n'

    @staticmethod
    def error_event(message: str, status: int) -> str:
        err = {"message": message, "type": "server_error", "param": None, "code": status}
        return f"data: {_dumps({'error': err})}\n\n"

    def malformed_event(self) -> str:
        # A truncated JSON object: what a client sees when a proxy or server garbles a stream.
        return "data: " + self._head + '[{"index":0,"text":"trunc\n\n'

    def full_body(self, text: str, finish_reason: str, prompt_tokens: int,
                  completion_tokens: int, cached: int | None = None) -> bytes:
        if self.chat:
            choice = (f'[{{"index":0,"message":{{"role":"assistant","content":{_dumps(text)}}},'
                      f'"logprobs":null,"finish_reason":{_dumps(finish_reason)}}}]')
        else:
            choice = (f'[{{"index":0,"text":{_dumps(text)},"logprobs":null,'
                      f'"finish_reason":{_dumps(finish_reason)}}}]')
        usage = usage_json(prompt_tokens, completion_tokens, cached)
        return f'{self._head}{choice},"usage":{usage}}}'.encode()


def tool_call_body(*, response_id: str, model: str, created: int, call_id: str, name: str,
                   arguments: str, prompt_tokens: int, completion_tokens: int) -> bytes:
    """A non-streamed chat completion whose message is one tool call."""
    return _dumps({
        "id": response_id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                     "message": {"role": "assistant", "content": None, "tool_calls": [
                         {"id": call_id, "type": "function",
                          "function": {"name": name, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }).encode()


def tool_request(body: bytes) -> tuple[list[dict[str, Any]], int | None] | None:
    """The messages and seed of a chat request that carries ``tools`` (None: it carries
    none). Raises BadRequest for a body that is not such a request."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # parse_request has said what is wrong with it
    if not isinstance(data, dict) or not data.get("tools"):
        return None
    messages = data.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("'messages' must be a list of objects", param="messages")
    if data.get("stream"):
        raise BadRequest("this engine answers tool calls with stream=false only",
                         param="stream")
    seed = data.get("seed")
    return messages, seed if isinstance(seed, int) and not isinstance(seed, bool) else None


DONE_EVENT = "data: [DONE]\n\n"
