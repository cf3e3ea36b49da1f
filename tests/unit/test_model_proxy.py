"""The recording model proxy over real HTTP, driven by the official openai SDK as an agent in a
sandbox would drive it, in front of evalkit's built-in server and of a hostile one: what the agent
gets, what the trajectory records, what is counted, and how each budget ends an attempt."""

import json
import threading
import time
import urllib.request
from contextlib import contextmanager

import openai
import pytest
from hostile_server import HostileServer, turn

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.bridge import AttemptChannel, ModelProxy
from evalkit.models import ModelServer, NullPolicy, OraclePolicy
from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.models.policies import ReplayPolicy
from evalkit.records import StopReason
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter, read_trajectory

SECRET = "sk-real-key-that-must-stay-on-the-host"
USAGE = {"prompt_tokens": 300, "completion_tokens": 20}
HOSTILE = {
    "ls": [[turn(("bash", {"command": "ls"}), usage=USAGE)], [turn(content="done", usage=USAGE)]],
    "down": [[{"status": 503}]],
    "hang": [[{"hang": 5}]],
}


class KeyRecordingServer(HostileServer):
    """The hostile server, also keeping the Authorization header of every request."""

    def __init__(self, scenarios: dict) -> None:
        super().__init__(scenarios)
        self.keys: list[str] = []

    def handle(self, handler, scenario, request):
        self.keys.append(handler.headers.get("Authorization", ""))
        super().handle(handler, scenario, request)


@pytest.fixture(scope="module")
def proxy():
    with ModelProxy() as running:
        yield running


@pytest.fixture(scope="module")
def builtin(toy_task):
    with ModelServer({"oracle": OraclePolicy([toy_task]), "null": NullPolicy()}) as server:
        yield server


@pytest.fixture(scope="module")
def hostile():
    with KeyRecordingServer(HOSTILE) as server:
        yield server


@contextmanager
def attempt(proxy, spec, base_url, path, limits=None, wall_s=60.0, price=None, sdk_retries=0):
    """An attempt registered on the proxy: its channel and the agent's SDK client (its token as key)."""
    client = ChatClient(spec, base_url=base_url, endpoints=EndpointStates())
    writer = TrajectoryWriter(path)
    channel = AttemptChannel(client, writer, limits or Limits(), time.monotonic() + wall_s, price)
    token = proxy.register(channel)
    agent = openai.OpenAI(base_url=proxy.base_url, api_key=token, max_retries=sdk_retries)
    try:
        yield channel, agent
    finally:
        proxy.unregister(token)
        agent.close()
        client.close()
        writer.close()


def builtin_spec(name):
    return ModelSpec(name=name, model=name, builtin=name, max_retries=0)


def ask(agent, messages, stream=False):
    """One request as an agent makes it; a streamed answer assembled by hand from the SDK's chunks."""
    if not stream:
        message = agent.chat.completions.create(model="any", messages=messages, tools=TOOL_SCHEMAS).choices[0].message
        return message.model_dump(exclude_none=True), None
    content, calls, usage = "", {}, None
    chunks = agent.chat.completions.create(
        model="any", messages=messages, tools=TOOL_SCHEMAS, stream=True, stream_options={"include_usage": True}
    )
    for chunk in chunks:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": delta.id, "type": "function", "function": {}})
                function = call["function"]
                function["name"] = function.get("name", "") + (delta.function.name or "")
                function["arguments"] = function.get("arguments", "") + (delta.function.arguments or "")
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message, usage


def play(agent, prompt, stream=False, limit=10):
    """Drive the conversation as a tool-calling agent would, answering each call with "ok", until
    the model calls `submit` or stops calling tools: the conversation and the assistant messages received."""
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": prompt}]
    received = []
    for _ in range(limit):
        message, _usage = ask(agent, messages, stream)
        received.append(message)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls or any(c["function"]["name"] == "submit" for c in calls):
            return messages, received
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    raise AssertionError("the conversation did not end")


@pytest.mark.parametrize("stream", [False, True])
def test_the_trajectory_holds_every_message_once_and_a_model_call_per_turn(proxy, builtin, toy_task, tmp_path, stream):
    path = tmp_path / "t.jsonl"
    with attempt(proxy, builtin_spec("oracle"), builtin.base_url, path) as (channel, agent):
        messages, received = play(agent, toy_task.prompt, stream)
    names = [c["function"]["name"] for m in received for c in m.get("tool_calls", [])]
    assert names == ["edit", "submit"]
    events = read_trajectory(path)
    recorded = [e["message"] for e in events if e["type"] == "message"]
    assert [(m["role"], m.get("content") or "") for m in recorded] == [
        (m["role"], m.get("content") or "") for m in messages
    ]
    calls = [e for e in events if e["type"] == "model_call"]
    assert [c["turn"] for c in calls] == [1, 2] and all(c["latency_s"] > 0 for c in calls)
    requests = [e for e in events if e["type"] == "proxy_request"]
    assert [r["stream"] for r in requests] == [stream, stream]
    assert "tools" in requests[0] and "tools" not in requests[1]  # the schemas once, until they change
    assert channel.turns == 2 and channel.stop_reason is None
    assert channel.usage.total_tokens == sum(c["usage"]["total_tokens"] for c in calls) > 0
    assert channel.model_time_s >= sum(c["latency_s"] for c in calls) - 0.001


def test_a_streamed_answer_carries_the_tool_call_and_a_final_usage_chunk(proxy, builtin, toy_task, tmp_path):
    with attempt(proxy, builtin_spec("null"), builtin.base_url, tmp_path / "t.jsonl") as (channel, agent):
        message, usage = ask(agent, [{"role": "user", "content": toy_task.prompt}], stream=True)
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "submit" and call["id"].startswith("call_")
    assert json.loads(call["function"]["arguments"])["summary"]
    assert usage is not None and usage.total_tokens == channel.usage.total_tokens > 0


def test_what_the_proxy_recorded_replays_through_the_built_in_replay_policy(proxy, builtin, toy_task, tmp_path):
    path = tmp_path / "oracle.jsonl"
    with attempt(proxy, builtin_spec("oracle"), builtin.base_url, path) as (_, agent):
        _, played = play(agent, toy_task.prompt)
    with ModelServer({"replay": ReplayPolicy(path)}) as replay_server:
        spec = ModelSpec(name="replay", model="replay", builtin="replay", replay_path=path, max_retries=0)
        with attempt(proxy, spec, replay_server.base_url, tmp_path / "replay.jsonl") as (_, agent):
            _, replayed = play(agent, toy_task.prompt)
    names = [[c["function"]["name"] for c in m.get("tool_calls", [])] for m in played]
    assert [[c["function"]["name"] for c in m.get("tool_calls", [])] for m in replayed] == names


def test_models_lists_the_attempts_model_and_an_unknown_key_is_refused(proxy, builtin, tmp_path):
    with attempt(proxy, builtin_spec("null"), builtin.base_url, tmp_path / "t.jsonl") as (channel, agent):
        assert [m.id for m in agent.models.list()] == ["null"]
        token = channel.token
    stranger = openai.OpenAI(base_url=proxy.base_url, api_key="evalkit-guessed", max_retries=0)
    gone = openai.OpenAI(base_url=proxy.base_url, api_key=token, max_retries=0)  # unregistered
    for client in (stranger, gone):
        with pytest.raises(openai.AuthenticationError):
            client.models.list()
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="null", messages=[{"role": "user", "content": "hi"}])
    assert [e["type"] for e in read_trajectory(tmp_path / "t.jsonl")] == []  # nothing recorded for strangers


def budget_error(agent, messages):
    with pytest.raises(openai.BadRequestError) as caught:
        agent.chat.completions.create(model="any", messages=messages, tools=TOOL_SCHEMAS)
    return caught.value


def test_past_max_turns_every_request_is_refused_and_the_stop_reason_says_so(proxy, builtin, toy_task, tmp_path):
    path = tmp_path / "t.jsonl"
    with attempt(proxy, builtin_spec("oracle"), builtin.base_url, path, Limits(max_turns=1)) as (channel, agent):
        messages = [{"role": "user", "content": toy_task.prompt}]
        first, _ = ask(agent, messages)
        messages += [first, {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "ok"}]
        for n in range(20):  # the request past the budget, and any after it (each a new conversation)
            error = budget_error(agent, [*messages, {"role": "user", "content": f"again {n}"}])
            assert error.code == "max_turns" and "max_turns budget is spent" in error.message
    assert channel.stop_reason is StopReason.MAX_TURNS and channel.turns == 1 and channel.refused == 20
    events = read_trajectory(path)
    assert [e["stop_reason"] for e in events if e["type"] == "proxy_end"] == ["max_turns"]
    assert [e["refused"] for e in events if e["type"] == "proxy_refused"] == [1, 2, 4, 8, 16]  # not one each
    sent = [e["message"]["content"] for e in events if e["type"] == "message" and e["message"]["role"] == "user"]
    assert sent[-1] == "again 0"  # what came after the end was neither forwarded nor written out


def test_past_max_tokens_the_next_request_is_refused(proxy, builtin, toy_task, tmp_path):
    with attempt(proxy, builtin_spec("null"), builtin.base_url, tmp_path / "t.jsonl", Limits(max_tokens=10)) as (
        channel,
        agent,
    ):
        messages = [{"role": "user", "content": toy_task.prompt}]
        ask(agent, messages)  # answered: the budget is checked before each request, as the built-in loop does
        assert budget_error(agent, messages).code == "max_tokens"
    assert channel.stop_reason is StopReason.MAX_TOKENS and channel.usage.total_tokens >= 10


def test_a_slow_model_past_the_deadline_ends_the_attempt_as_wall_time(proxy, hostile, tmp_path):
    spec = ModelSpec(name="slow", model="slow", max_retries=2, retry_base_s=0.01, request_timeout_s=30)
    with attempt(proxy, spec, hostile.url("hang"), tmp_path / "t.jsonl", wall_s=0.8) as (channel, agent):
        started = time.monotonic()
        error = budget_error(agent, [{"role": "user", "content": "hi"}])
        assert time.monotonic() - started < 3
        assert error.code == "wall_time"
        assert budget_error(agent, [{"role": "user", "content": "hi"}]).code == "wall_time"
    assert channel.stop_reason is StopReason.WALL_TIME


def test_an_endpoint_the_client_gave_up_on_is_a_502_the_agent_sees(proxy, hostile, tmp_path):
    path = tmp_path / "t.jsonl"
    spec = ModelSpec(name="down", model="down", max_retries=1, retry_base_s=0.01)
    with (
        attempt(proxy, spec, hostile.url("down"), path) as (channel, agent),
        pytest.raises(openai.InternalServerError) as caught,
    ):
        agent.chat.completions.create(model="down", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502 and caught.value.code == "endpoint_error"
    assert "gave up after 2 failed requests" in caught.value.message
    assert channel.stop_reason is StopReason.ENDPOINT_ERROR and channel.retries["server_error"] == 2
    (failed,) = [e for e in read_trajectory(path) if e["type"] == "model_call"]
    assert failed["failed"] == "endpoint_error" and len(failed["retries"]) == 2


def test_the_proxys_refusal_is_final_an_agents_sdk_does_not_retry_it(proxy, hostile, tmp_path):
    """A 502 after the proxy's client gave up (or any refusal of an ended attempt) cannot change on
    a retry: `x-should-retry: false` tells the openai SDKs (Python's, which litellm and
    mini-swe-agent use, and Node's) not to send it again, at their default of 2 retries."""
    spec = ModelSpec(name="down", model="down", max_retries=0)
    with (
        attempt(proxy, spec, hostile.url("down"), tmp_path / "t.jsonl", sdk_retries=2) as (channel, agent),
        pytest.raises(openai.InternalServerError) as caught,
    ):
        agent.chat.completions.create(model="down", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert channel.requests == channel.refused == 1


def test_after_an_endpoint_failure_an_agent_retrying_by_itself_gets_a_400(proxy, hostile, tmp_path):
    """The request that met the failure gets the 502; an agent whose own loop retries 5xx whatever
    the SDK says (Qwen Code: until the wall time) gets a 400 next, which agents take as final."""
    spec = ModelSpec(name="down", model="down", max_retries=0)
    with attempt(proxy, spec, hostile.url("down"), tmp_path / "t.jsonl") as (channel, agent):
        with pytest.raises(openai.InternalServerError) as first:
            agent.chat.completions.create(model="down", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.BadRequestError) as again:
            agent.chat.completions.create(model="down", messages=[{"role": "user", "content": "hi"}])
    assert first.value.status_code == 502 and again.value.code == "endpoint_error"
    assert "this attempt has ended, the model endpoint failed: gave up after 1 failed request" in again.value.message
    assert channel.stop_reason is StopReason.ENDPOINT_ERROR and channel.refused == 2


def fetch(url, token, body=None):
    """Everything the agent receives for one request: status line, headers and body."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    request = urllib.request.Request(url, data, headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return f"{response.status} {response.headers}{response.read().decode()}"


def test_the_real_key_reaches_the_model_and_never_the_agent(proxy, hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("BRIDGE_TEST_KEY", SECRET)
    spec = ModelSpec(name="ls", model="ls", api_key_env="BRIDGE_TEST_KEY", max_retries=0)
    path = tmp_path / "t.jsonl"
    hostile.keys.clear()
    with attempt(proxy, spec, hostile.url("ls"), path, price=lambda u: u.prompt_tokens * 1e-6) as (channel, _):
        seen = []
        for stream in (False, True):
            body = {"model": "ls", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
            seen.append(fetch(f"{proxy.base_url}/chat/completions", channel.token, body))
        seen.append(fetch(f"{proxy.base_url}/models", channel.token))
    assert hostile.keys == [f"Bearer {SECRET}"] * 2
    assert not any(SECRET in text for text in seen)
    assert SECRET not in path.read_text()
    assert channel.usage.prompt_tokens == 600 and channel.cost_usd == pytest.approx(600e-6)  # the model's own usage


def test_concurrent_attempts_keep_their_own_conversations_and_counters(proxy, builtin, toy_task, tmp_path):
    outcomes = {}

    def run(name):
        with attempt(proxy, builtin_spec(name), builtin.base_url, tmp_path / f"{name}.jsonl") as (channel, agent):
            outcomes[name] = (channel, play(agent, f"{toy_task.prompt}", stream=name == "null"))

    threads = [threading.Thread(target=run, args=(name,)) for name in ("oracle", "null")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes["oracle"][0].turns == 2 and outcomes["null"][0].turns == 1
    for name, (_, (messages, _)) in outcomes.items():
        recorded = [e["message"] for e in read_trajectory(tmp_path / f"{name}.jsonl") if e["type"] == "message"]
        assert len(recorded) == len(messages)
        assert [c.get("id") for m in recorded for c in m.get("tool_calls", [])] == [
            c["id"] for m in messages for c in m.get("tool_calls", [])
        ]


def test_a_conversation_the_agent_rewrote_is_recorded_as_such(proxy, builtin, toy_task, tmp_path):
    path = tmp_path / "t.jsonl"
    with attempt(proxy, builtin_spec("oracle"), builtin.base_url, path) as (_, agent):
        messages = [{"role": "user", "content": toy_task.prompt}]
        ask(agent, messages)
        ask(agent, [{"role": "user", "content": toy_task.prompt + "\n(summary of earlier work)"}])
    (_, second) = [e for e in read_trajectory(path) if e["type"] == "proxy_request"]
    assert second["rewritten"] == {"kept": 0, "dropped": 2}


def test_a_reply_sent_back_in_another_form_is_no_rewrite(proxy, builtin, toy_task, tmp_path):
    """Qwen Code keeps a call parsed and sends it back as `JSON.stringify` writes it (no spaces),
    with content null and its texts as parts: the same conversation, recorded once."""
    path = tmp_path / "t.jsonl"
    with attempt(proxy, builtin_spec("oracle"), builtin.base_url, path) as (_, agent):
        messages = [{"role": "user", "content": [{"type": "text", "text": toy_task.prompt}]}]
        reply, _ = ask(agent, messages, stream=True)
        (call,) = reply["tool_calls"]
        arguments = json.dumps(json.loads(call["function"]["arguments"]), separators=(",", ":"))
        assert arguments != call["function"]["arguments"]
        again = {"role": "assistant", "content": None,
                 "tool_calls": [{**call, "function": {**call["function"], "arguments": arguments}}]}  # fmt: skip
        result = {"role": "tool", "tool_call_id": call["id"], "content": [{"type": "text", "text": "ok"}]}
        ask(agent, [*messages, again, result], stream=True)
    events = read_trajectory(path)
    assert not any("rewritten" in e for e in events if e["type"] == "proxy_request")
    roles = [e["message"]["role"] for e in events if e["type"] == "message"]
    assert roles == ["user", "assistant", "tool", "assistant"]
