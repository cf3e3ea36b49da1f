"""One chat-completion request through the official `openai` SDK, with evalkit's own retries.

The SDK's retries are turned off so that every retry is seen, counted and logged: 429 and 5xx
(honouring `Retry-After`), timeouts and dropped connections are retried with exponential
backoff; a context-length error and other 4xx are not. A response the SDK accepts but that has
no usable message (a broken proxy) is retried too. Nothing here raises anything but
`EndpointError`.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass, field

import openai

from evalkit.models.endpoint import ModelSpec

MAX_BACKOFF_S = 60.0
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_CONTEXT_HINTS = ("context_length", "context length", "maximum context", "too many tokens", "prompt is too long")


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more requests. `reported` is False when the provider gave no usage and
    the figures are estimates (characters / 4)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reported: bool = True

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reported and other.reported,
        )

    def as_dict(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "total_tokens": self.total_tokens,
            "reported": self.reported,
        }


@dataclass(frozen=True)
class Retry:
    kind: str  # rate_limit, server_error, timeout, connection, bad_response
    status: int | None
    wait_s: float
    detail: str


@dataclass(frozen=True)
class ChatReply:
    message: dict  # the assistant message as it goes back into the conversation
    finish_reason: str | None
    usage: Usage
    latency_s: float  # the successful request
    retries: list[Retry] = field(default_factory=list)
    raw: dict = field(default_factory=dict)


class EndpointError(Exception):
    """The endpoint gave no usable answer. `kind`: context_overflow, wall_time or endpoint_error."""

    def __init__(self, kind: str, message: str, retries: list[Retry]) -> None:
        super().__init__(message)
        self.kind = kind
        self.retries = retries


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _estimate(messages: list[dict], message: dict) -> Usage:
    return Usage(len(json.dumps(messages)) // 4, len(json.dumps(message)) // 4, 0, reported=False)


def _tool_call(raw: object) -> dict | None:
    if not isinstance(raw, dict):
        return None
    function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    arguments = function.get("arguments")
    return {
        "id": str(raw.get("id") or f"call_{random.getrandbits(48):012x}"),
        "type": "function",
        "function": {
            "name": str(function.get("name") or ""),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def parse_completion(data: dict, messages: list[dict]) -> tuple[dict, str | None, Usage] | None:
    """The assistant message, finish reason and usage of a completion body; None if unusable."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    raw_message = choices[0].get("message")
    if not isinstance(raw_message, dict):
        return None
    content = raw_message.get("content")
    message: dict = {"role": "assistant", "content": content if isinstance(content, str) else None}
    calls = [c for c in map(_tool_call, raw_message.get("tool_calls") or []) if c]
    if calls:
        message["tool_calls"] = calls
    usage_data = data.get("usage")
    if isinstance(usage_data, dict) and isinstance(usage_data.get("prompt_tokens"), int):
        details = usage_data.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        usage = Usage(
            usage_data["prompt_tokens"],
            int(usage_data.get("completion_tokens") or 0),
            int(cached or 0),
        )
    else:
        usage = _estimate(messages, message)
    finish = choices[0].get("finish_reason")
    return message, finish if isinstance(finish, str) else None, usage


class _ResponseTooLarge(Exception):
    pass


class ChatClient:
    """Sends chat completions with tools for one ModelSpec; safe to share between threads."""

    def __init__(self, spec: ModelSpec, base_url: str | None = None) -> None:
        self.spec = spec
        self._client = openai.OpenAI(
            api_key=spec.api_key(),
            base_url=base_url or spec.resolved_base_url(),
            max_retries=0,
            timeout=spec.request_timeout_s,
        )

    def close(self) -> None:
        self._client.close()

    def _request(self, messages: list[dict], tools: list[dict], timeout: float) -> object:
        """POST one request and read the body in chunks, so that a server trickling an endless
        body is cut at `timeout` in total (httpx's timeout is per read) or at MAX_RESPONSE_BYTES."""
        ends = time.monotonic() + timeout
        extra = {"tools": tools} if tools else {}  # some servers refuse an empty tool list
        with self._client.chat.completions.with_streaming_response.create(
            model=self.spec.model,
            messages=messages,
            timeout=timeout,
            **extra,
            **self.spec.sampling.request_kwargs(),
        ) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise _ResponseTooLarge(f"response body over {MAX_RESPONSE_BYTES} bytes; cut")
                if time.monotonic() > ends:
                    raise openai.APITimeoutError(request=response.http_response.request)
        return json.loads(body)

    def _backoff(self, attempt: int, suggested: float | None) -> float:
        if suggested is not None:
            return min(MAX_BACKOFF_S, suggested)
        return min(MAX_BACKOFF_S, self.spec.retry_base_s * 2**attempt) * random.uniform(0.8, 1.2)

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
                data = self._request(messages, tools, min(self.spec.request_timeout_s, remaining))
                latency = time.perf_counter() - started
                parsed = parse_completion(data, messages) if isinstance(data, dict) else None
                if parsed is not None:
                    message, finish, usage = parsed
                    return ChatReply(message, finish, usage, latency, retries, data)
                retry = Retry("bad_response", None, 0, f"no usable message in the response: {str(data)[:200]}")
            except _ResponseTooLarge as exc:
                retry = Retry("bad_response", None, 0, str(exc))
            except openai.APIStatusError as exc:
                text = str(exc)[:300]
                if exc.status_code == 429:
                    suggested = _retry_after(exc)
                    retry = Retry("rate_limit", 429, 0, text)
                elif exc.status_code >= 500 or exc.status_code in (408, 409):
                    suggested = _retry_after(exc)
                    retry = Retry("server_error", exc.status_code, 0, text)
                elif exc.status_code in (400, 413) and any(h in text.lower() for h in _CONTEXT_HINTS):
                    raise EndpointError("context_overflow", text, retries) from None
                else:
                    raise EndpointError("endpoint_error", f"HTTP {exc.status_code}: {text}", retries) from None
            except openai.APITimeoutError:
                retry = Retry(
                    "timeout", None, 0, f"no answer within {min(self.spec.request_timeout_s, remaining):.0f}s"
                )
            except openai.APIConnectionError as exc:
                retry = Retry("connection", None, 0, str(exc.__cause__ or exc)[:300])
            except (openai.OpenAIError, ValueError, TypeError) as exc:  # unparseable body and the like
                retry = Retry("bad_response", None, 0, f"{type(exc).__name__}: {str(exc)[:300]}")
            if attempt == self.spec.max_retries:
                retries.append(retry)
                break
            wait = min(self._backoff(attempt, suggested), max(0.0, deadline - time.monotonic()))
            retries.append(Retry(retry.kind, retry.status, round(wait, 3), retry.detail))
            time.sleep(wait)
        last = retries[-1]
        raise EndpointError(
            "endpoint_error",
            f"gave up after {len(retries)} failed request(s); last: {last.kind}: {last.detail}",
            retries,
        )
