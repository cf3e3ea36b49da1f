"""One attempt's line through the model proxy: its model (a ChatClient, so retries, knobs and the
key stay on the host), its trajectory, its budgets and what it has spent.

The agent in the sandbox sends whole conversations; the channel records what is new in each (the
messages past the part already recorded, so a trajectory reads like the built-in loop's: `message`
events, a `model_call` per turn), forwards the request, counts the reply's tokens, latency and
cost, and answers. Budgets are checked before each request, as the built-in loop checks them
before each turn: once `max_turns` turns are done, `max_tokens` tokens spent or the deadline
passed, that request and every later one is refused with an error the agent sees, and
`stop_reason` says which budget ended the attempt. An upstream failure the client gave up on ends
it the same way (`endpoint_error`, `context_overflow`, `wall_time`): the request that met it gets a
502, every later one a 400 (an agent retrying 5xx by itself, as Qwen Code does, would otherwise go
on until the wall time). One request at a time per attempt, so the budgets and the trajectory's
order stay exact. Requests after the end are only counted (`refused`, in `proxy_refused` events at
the 1st, 2nd, 4th, 8th... of them): an agent that keeps sending 1 MB conversations after its budget
is spent must not fill the disk.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from evalkit.models.client import ChatClient, ChatReply, EndpointError
from evalkit.models.messages import Usage, text_of
from evalkit.records import StopReason
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter
from evalkit.user.channel import UserChannel

BUDGETS = (StopReason.MAX_TURNS, StopReason.MAX_TOKENS, StopReason.WALL_TIME)
_UPSTREAM_ENDS = {"context_overflow": StopReason.CONTEXT_OVERFLOW, "wall_time": StopReason.WALL_TIME}
_AGENT_KEYS = ("messages", "tools", "stream", "stream_options")  # the rest are the agent's own knobs, recorded


@dataclass(frozen=True)
class Answer:
    """What the proxy sends back: a status and a JSON body (a chat.completion when 200)."""

    status: int
    body: dict


def error_answer(status: int, message: str, kind: str, code: str | None = None) -> Answer:
    return Answer(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})


def _arguments_key(arguments: object) -> object:
    """A call's arguments as their JSON value when they parse (agents that keep calls parsed send
    them back re-serialized: Qwen Code's `{"command":"ls"}` for the `{"command": "ls"}` it got)."""
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), sort_keys=True)
        except ValueError:
            return arguments
    return arguments


def _call_key(call: object) -> tuple:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    arguments = _arguments_key(function.get("arguments"))
    return (call.get("id") if isinstance(call, dict) else None, function.get("name"), arguments)


def same_message(a: object, b: object) -> bool:
    """Whether two messages are one, whatever form the agent's SDK sends it back in (content None
    or "", extra null keys, the call's arguments re-serialized): role, text, tool calls and the
    tool result's call id."""
    if a == b or not isinstance(a, dict) or not isinstance(b, dict):
        return a == b
    return (
        a.get("role") == b.get("role")
        and text_of(a.get("content")) == text_of(b.get("content"))
        and [_call_key(c) for c in a.get("tool_calls") or []] == [_call_key(c) for c in b.get("tool_calls") or []]
        and a.get("tool_call_id") == b.get("tool_call_id")
    )


def usage_body(usage: Usage) -> dict:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def completion_body(reply: ChatReply, model: str) -> dict:
    """The chat.completion the agent gets: the reply in the strict form evalkit keeps (no vendor
    field, no header of the upstream), its reasoning text beside it, usage as counted."""
    message = dict(reply.message)
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    created = reply.raw.get("created")
    return {
        "id": str(reply.raw.get("id") or f"chatcmpl-{secrets.token_hex(8)}"),
        "object": "chat.completion",
        "created": created if isinstance(created, int) else int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or "stop"}],
        "usage": usage_body(reply.usage),
    }


class AttemptChannel:
    """One attempt's budgets, counters and trajectory behind its own random `token` (the key the
    agent is given). `price` turns a reply's usage into USD (None: cost not counted)."""

    def __init__(
        self,
        client: ChatClient,
        trajectory: TrajectoryWriter,
        limits: Limits,
        deadline: float,
        price: Callable[[Usage], float] | None = None,
        user: UserChannel | None = None,
    ) -> None:
        self.token = "evalkit-" + secrets.token_urlsafe(24)
        self.client = client
        self.model = client.spec.name
        self.trajectory = trajectory
        self.limits = limits
        self.deadline = deadline  # time.monotonic()
        self.price = price
        self.user = user  # the attempt's simulated user, asked through `ask-user` (None: nobody answers)
        self.requests = 0
        self.turns = 0
        self.tool_calls = 0  # asked for in the model's replies (the agent runs them itself)
        self.final_message: str | None = None  # the last reply's text, when it called no tool
        self.usage = Usage()
        self.model_time_s = 0.0
        self.cost_usd = 0.0
        self.retries: Counter[str] = Counter()
        self.stop_reason: StopReason | None = None
        self.error: str | None = None
        self.refused = 0  # requests answered with the error that ended the attempt
        self._lock = threading.Lock()
        self._recorded: list[dict] = []  # the conversation as the trajectory holds it
        self._tools: object = None

    def settle(self) -> None:
        """Wait for a request still in flight (its client gives up at the deadline at the latest):
        an agent killed at the wall time while the model had not answered leaves one, and the
        attempt's stop reason, error and counters must be the channel's final ones."""
        with self._lock:
            pass

    def exchange(self, request: dict) -> Answer:
        """Answer one chat-completion request (its JSON body) of the agent."""
        messages, tools = request.get("messages"), request.get("tools")
        if not isinstance(messages, list) or not messages or not isinstance(tools, list | None):
            return error_answer(400, "body needs a non-empty `messages` list and optionally a `tools` list",
                                "invalid_request_error")  # fmt: skip
        with self._lock:
            self.requests += 1
            if self.stop_reason is not None:  # ended: neither forwarded nor written out (an agent may loop)
                return self._refuse()
            self._record_request(request, messages, tools)
            self._check_budgets()
            if self.stop_reason is not None:
                return self._refuse()
            try:
                reply = self.client.complete(messages, tools or [], self.deadline)
            except EndpointError as exc:
                self.retries.update(r.kind for r in exc.retries)
                self.trajectory.event("model_call", turn=self.turns + 1, failed=exc.kind, error=str(exc),
                                      retries=[vars(r) for r in exc.retries])  # fmt: skip
                self._end(_UPSTREAM_ENDS.get(exc.kind, StopReason.ENDPOINT_ERROR), str(exc))
                return self._refuse()
            self._count(reply)
            model = request.get("model") if isinstance(request.get("model"), str) else self.model
            return Answer(200, completion_body(reply, model))

    def ask_user(self, body: object) -> Answer:
        """Answer one `ask-user` question (a JSON body `{"question": ...}`) through the attempt's
        simulated user, within its question budget; the exchange is a `user` event, as in the tool
        loop. No user: 404. The attempt ended: the error every model request gets too."""
        question = body.get("question") if isinstance(body, dict) else None
        if not isinstance(question, str) or not question.strip():
            return error_answer(400, 'the body needs a non-empty "question" string', "invalid_request_error")
        if self.user is None:
            return error_answer(404, "nobody answers questions in this attempt: decide from the code and the request",
                                "invalid_request_error", "no_user")  # fmt: skip
        with self._lock:
            if self.stop_reason is not None:
                return self._refuse()
            text, fields = self.user.ask(question.strip(), self.deadline)
            self.trajectory.event("user", turn=self.turns, via="ask-user", **fields)
        return Answer(200, {"answer": text})

    def _record_request(self, request: dict, messages: list, tools: object) -> None:
        """A `proxy_request` event (the agent's own knobs; the tools when they change), then the
        messages not yet recorded; a conversation the agent rewrote (compacted) says so."""
        kept = 0
        while kept < min(len(messages), len(self._recorded)) and same_message(messages[kept], self._recorded[kept]):
            kept += 1
        fields: dict = {"request": self.requests, "stream": bool(request.get("stream"))}
        fields["params"] = {k: v for k, v in request.items() if k not in _AGENT_KEYS}
        if tools != self._tools:
            fields["tools"] = tools
            self._tools = tools
        if kept < len(self._recorded):
            fields["rewritten"] = {"kept": kept, "dropped": len(self._recorded) - kept}
        self.trajectory.event("proxy_request", **fields)
        for message in messages[kept:]:
            self.trajectory.message(message)
        self._recorded = list(messages)

    def _check_budgets(self) -> None:
        if self.turns >= self.limits.max_turns:
            self._end(StopReason.MAX_TURNS, f"{self.turns} turns done, the budget is {self.limits.max_turns}")
        elif self.usage.total_tokens >= self.limits.max_tokens:
            self._end(StopReason.MAX_TOKENS,
                      f"{self.usage.total_tokens} tokens spent, the budget is {self.limits.max_tokens}")  # fmt: skip
        elif time.monotonic() >= self.deadline:
            self._end(StopReason.WALL_TIME, f"the attempt's {self.limits.wall_time_s:g} s are up")

    def _end(self, reason: StopReason, error: str) -> None:
        self.stop_reason, self.error = reason, error
        self.trajectory.event("proxy_end", stop_reason=reason.value, error=error)

    def _refuse(self) -> Answer:
        """The error every request gets once the attempt has ended, naming why."""
        assert self.stop_reason is not None
        reason, error = self.stop_reason, self.error or ""
        self.refused += 1
        if self.refused & (self.refused - 1) == 0:  # the 1st, 2nd, 4th, 8th...: a few lines, however many
            self.trajectory.event(
                "proxy_refused", request=self.requests, stop_reason=reason.value, refused=self.refused
            )
        if reason is StopReason.ENDPOINT_ERROR and self.refused == 1:  # the request that met the failure
            return error_answer(502, f"evalkit: the model endpoint failed: {error}", "upstream_error", reason.value)
        if reason is StopReason.ENDPOINT_ERROR:  # a 400 from then on, which agents do not retry
            return error_answer(400, f"evalkit: this attempt has ended, the model endpoint failed: {error}; stop now",
                                "upstream_error", reason.value)  # fmt: skip
        if reason is StopReason.CONTEXT_OVERFLOW:
            return error_answer(400, f"evalkit: {error}", "invalid_request_error", "context_length_exceeded")
        return error_answer(400, f"evalkit: this attempt's {reason.value} budget is spent ({error}); stop now",
                            "budget_exceeded", reason.value)  # fmt: skip

    def _count(self, reply: ChatReply) -> None:
        self.turns += 1
        calls = reply.message.get("tool_calls") or []
        self.tool_calls += len(calls)
        self.final_message = None if calls else (text_of(reply.message.get("content")).strip() or None)
        self.usage += reply.usage
        self.model_time_s += reply.latency_s
        self.retries.update(r.kind for r in reply.retries)
        cost = self.price(reply.usage) if self.price else None
        self.cost_usd += cost or 0.0
        self.trajectory.event(
            "model_call",
            turn=self.turns,
            latency_s=round(reply.latency_s, 4),
            usage=reply.usage.as_dict(),
            cost_usd=cost,
            finish_reason=reply.finish_reason,
            retries=[vars(r) for r in reply.retries],
            response_id=reply.raw.get("id"),
            response_model=reply.raw.get("model"),
            reported_usage=reply.raw.get("usage"),
            reasoning=reply.reasoning,
        )
        self.trajectory.message(reply.message)
        self._recorded.append(reply.message)
