"""One chat-completion request through the official `openai` SDK, with evalkit's own retries.

The SDK's retries are turned off so that every retry is seen, counted and logged: 429 and 5xx
(honouring `Retry-After`), timeouts and dropped connections are retried with exponential
backoff. An error that would only repeat is raised after one try: a context-length error (its own
kind), other 4xx, and a 5xx whose body is a request-validation error (llama-cpp-python answers
500 to a message its pydantic models refuse). A response the SDK accepts but that has no usable
message (a broken proxy) is retried too. Nothing here raises anything but `EndpointError`.

Requests to one endpoint share a cap on connections and a 429 hold-off (`models/backoff.py`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

import openai

from evalkit.errors import EvalkitError
from evalkit.models.backoff import MAX_BACKOFF_S, SHARED_ENDPOINTS, EndpointStates, backoff_s, retry_after
from evalkit.models.endpoint import ModelSpec
from evalkit.models.messages import Usage, parse_completion, tool_message
from evalkit.models.request import request_options
from evalkit.models.stream import StreamAssembler, StreamError
from evalkit.wording import counted

__all__ = [
    "MAX_BACKOFF_S",
    "MAX_RESPONSE_BYTES",
    "ChatClient",
    "ChatReply",
    "EndpointError",
    "Retry",
    "Usage",
    "parse_completion",
    "tool_message",
]

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
MAX_MESSAGE_CHARS = 300
_CONTEXT_HINTS = (
    "context_length",
    "context length",
    "maximum context",
    "context window",
    "context size",
    "too many tokens",
    "prompt is too long",
)
# A request the server's validation refused: sending it again gets the same answer.
_VALIDATION_HINTS = (
    "validation error",
    "input should be",
    "field required",
    "extra inputs are not permitted",
    "unprocessable",
)
_INVALID_REQUEST = re.compile(r'"type"\s*:\s*"invalid_request_error"')


@dataclass(frozen=True)
class Retry:
    kind: str  # rate_limit, server_error, timeout, connection, bad_response
    status: int | None
    wait_s: float
    detail: str


@dataclass(frozen=True)
class ChatReply:
    message: dict  # the assistant message as it goes back into the conversation (strict form)
    finish_reason: str | None
    usage: Usage
    latency_s: float  # the successful request
    retries: list[Retry] = field(default_factory=list)
    raw: dict = field(default_factory=dict)  # the body as received (assembled, when streamed)
    reasoning: str | None = None  # reasoning text the server returned beside the answer


class EndpointError(Exception):
    """The endpoint gave no usable answer. `kind`: context_overflow, wall_time or endpoint_error."""

    def __init__(self, kind: str, message: str, retries: list[Retry]) -> None:
        super().__init__(message)
        self.kind = kind
        self.retries = retries


class _ResponseTooLarge(Exception):
    pass


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return " ".join(text.split())[:limit]


def _raw_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # a body that could not be read (closed stream)
        return json.dumps(exc.body) if exc.body is not None else ""


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: `error.message`, FastAPI's `detail` (a list of field errors made
    readable), else the body; one line of at most MAX_MESSAGE_CHARS characters."""
    body = exc.body
    if isinstance(body, dict):
        found = body.get("message") or body.get("detail") or body
        if isinstance(found, list):
            found = "; ".join(
                f"{'.'.join(map(str, d.get('loc', [])))}: {d.get('msg')}" if isinstance(d, dict) else str(d)
                for d in found
            )
        text = found if isinstance(found, str) else json.dumps(found)
    else:
        text = body if isinstance(body, str) and body.strip() else _raw_text(exc) or exc.response.reason_phrase
    return one_line(text)


def is_validation_error(text: str) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in _VALIDATION_HINTS) or bool(_INVALID_REQUEST.search(text))


class ChatClient:
    """Sends chat completions with tools for one ModelSpec; safe to share between threads.

    `endpoints` holds what clients of one endpoint share (connections in flight, 429 hold-off);
    by default the process-wide one."""

    def __init__(
        self,
        spec: ModelSpec,
        base_url: str | None = None,
        endpoints: EndpointStates | None = None,
        api_key: str | None = None,
    ) -> None:
        """`base_url` and `api_key`, when given, replace the spec's (a built-in model served for a cluster run)."""
        self.spec = spec
        spec.header_values()  # a missing variable is a configuration error now, not a failed attempt later
        self._client = openai.OpenAI(
            api_key=api_key or spec.api_key(),
            base_url=base_url or spec.resolved_base_url(),
            max_retries=0,
            timeout=spec.request_timeout_s,
        )
        endpoints = endpoints or SHARED_ENDPOINTS
        self._endpoint = endpoints.state(str(self._client.base_url), spec.model, spec.max_connections)

    def close(self) -> None:
        self._client.close()

    def endpoint_status(self) -> dict:
        """For a live display: `in_flight`, `waiting` (requests queued for a slot or the end of a
        hold-off), `waiting_until` (seconds from now, or 0), `rate_limited` (429s seen),
        `max_connections`, for this client's endpoint as a whole."""
        return self._endpoint.status()

    def _request(self, messages: list[dict], tools: list[dict], timeout: float) -> object:
        """POST one request and read the body in chunks, so that a server trickling an endless
        body is cut at `timeout` in total (httpx's timeout is per read) or at MAX_RESPONSE_BYTES;
        a streamed answer is assembled as it arrives, under the same caps."""
        ends = time.monotonic() + timeout
        options = request_options(self.spec, messages, tools, self.spec.header_values())
        with self._client.chat.completions.with_streaming_response.create(timeout=timeout, **options) as response:
            content_type = response.headers.get("content-type", "")
            stream = StreamAssembler() if self.spec.stream and "json" not in content_type else None
            body, size = bytearray(), 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _ResponseTooLarge(f"response body over {MAX_RESPONSE_BYTES} bytes; cut")
                if time.monotonic() > ends:
                    raise openai.APITimeoutError(request=response.http_response.request)
                if stream is not None:
                    stream.feed(chunk)
                else:
                    body += chunk
        return stream.completion() if stream is not None else json.loads(body)

    def _send(self, messages: list[dict], tools: list[dict], deadline: float, retries: list[Retry]) -> object:
        """One request once the endpoint lets it go (a free connection, no hold-off)."""
        if not self._endpoint.acquire(deadline):
            raise EndpointError("wall_time", "the attempt's time ran out waiting for the endpoint", retries)
        try:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EndpointError("wall_time", "the attempt's time ran out waiting for the endpoint", retries)
            return self._request(messages, tools, min(self.spec.request_timeout_s, remaining))
        finally:
            self._endpoint.release()

    def complete(self, messages: list[dict], tools: list[dict], deadline: float) -> ChatReply:
        """One completion (retried as needed) that must end before `deadline` (time.monotonic)."""
        retries: list[Retry] = []
        for attempt in range(self.spec.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EndpointError("wall_time", "the attempt's time ran out waiting for the model", retries)
            started = time.perf_counter()
            suggested: float | None = None
            try:
                data = self._send(messages, tools, deadline, retries)
                latency = time.perf_counter() - started
                parsed = parse_completion(data, messages) if isinstance(data, dict) else None
                if parsed is not None:
                    message, finish, usage, reasoning = parsed
                    return ChatReply(message, finish, usage, latency, retries, data, reasoning)
                retry = Retry("bad_response", None, 0, f"no usable message in the response: {str(data)[:200]}")
            except EvalkitError as exc:  # an extra header's variable went missing since the start
                raise self._give_up("not_retried", None, str(exc), str(exc), retries) from None
            except _ResponseTooLarge as exc:
                retry = Retry("bad_response", None, 0, str(exc))
            except StreamError as exc:
                if is_validation_error(str(exc)):
                    message = f"in the stream: {one_line(str(exc))}"
                    raise self._give_up("not_retried", None, message, message, retries) from None
                retry = Retry("bad_response", None, 0, f"error in the stream: {one_line(str(exc))}")
            except openai.APIStatusError as exc:
                status, text, raw = exc.status_code, server_message(exc), _raw_text(exc)
                if status == 429:
                    suggested = retry_after(exc)
                    retry = Retry("rate_limit", 429, 0, text)
                elif status in (400, 413, 422) and any(h in raw.lower() for h in _CONTEXT_HINTS):
                    raise EndpointError("context_overflow", f"HTTP {status}: {text}", retries) from None
                elif (status >= 500 and not is_validation_error(raw)) or status in (408, 409):
                    suggested = retry_after(exc)
                    retry = Retry("server_error", status, 0, text)
                else:
                    raise self._give_up("not_retried", status, text, f"HTTP {status}: {text}", retries) from None
            except openai.APITimeoutError:
                retry = Retry(
                    "timeout", None, 0, f"no answer within {min(self.spec.request_timeout_s, remaining):.0f}s"
                )
            except openai.APIConnectionError as exc:
                retry = Retry("connection", None, 0, one_line(str(exc.__cause__ or exc)))
            except (openai.OpenAIError, ValueError, TypeError) as exc:  # unparseable body and the like
                retry = Retry("bad_response", None, 0, f"{type(exc).__name__}: {one_line(str(exc))}")
            pause = backoff_s(attempt, self.spec.retry_base_s, suggested)
            if retry.kind == "rate_limit" or suggested is not None:  # every request to the endpoint waits
                self._endpoint.hold_off(pause, rate_limited=retry.kind == "rate_limit")
            if attempt == self.spec.max_retries:
                retries.append(retry)
                break
            wait = min(pause, max(0.0, deadline - time.monotonic()))
            retries.append(Retry(retry.kind, retry.status, round(wait, 3), retry.detail))
            self._endpoint.note_failure(retry.kind, retry.status, retry.detail)
            time.sleep(wait)
        last = retries[-1]
        message = f"gave up after {counted(len(retries), 'failed request')}; last: {last.kind}: {last.detail}"
        raise self._give_up(last.kind, last.status, last.detail, message, retries)

    def _give_up(self, kind: str, status: int | None, detail: str, message: str, retries: list[Retry]) -> EndpointError:
        """The error that ends the attempt as endpoint_error, counted on the endpoint for the live view."""
        self._endpoint.note_failure(kind, status, detail, gave_up=True)
        return EndpointError("endpoint_error", message, retries)
