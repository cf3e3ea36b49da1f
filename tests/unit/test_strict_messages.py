"""Messages go back in the form the strictest servers accept: a real server on 127.0.0.1 that
validates like llama-cpp-python (500 "Input should be a valid string" to `content: null`, no
unknown keys) takes a whole tool-call round trip; reasoning text is kept apart."""

import time

import pytest
from recording_server import COMPLETION, RecordingServer

from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient, EndpointError, Usage, parse_completion, tool_message
from evalkit.models.endpoint import ModelSpec
from evalkit.models.request import NO_PARAMETERS

ALLOWED = {"assistant": {"role", "content", "tool_calls"}, "tool": {"role", "tool_call_id", "name", "content"}}
THINKING = {
    **COMPLETION,
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Listing the files first.",
                "tool_calls": [
                    {"id": "call_9", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 50, "completion_tokens": 20, "completion_tokens_details": {"reasoning_tokens": 9}},
}


def strict(body: dict) -> dict:
    """Answer like a pydantic-validated server: refuse what llama-cpp-python 0.3.x refuses."""
    problems: list[str] = []
    for i, message in enumerate(body["messages"]):
        role = message["role"]
        problems += [
            f"messages.{i}.content\n  Input should be a valid string"
            for _ in [0]
            if not isinstance(message["content"], str)
        ]
        problems += [
            f"messages.{i}.{key}\n  Extra inputs are not permitted"
            for key in message.keys() - ALLOWED.get(role, message.keys())
        ]
        if role == "assistant" and "tool_calls" in message and not message["tool_calls"]:
            problems.append(f"messages.{i}.tool_calls\n  List should have at least 1 item")
    for i, tool in enumerate(body.get("tools") or []):
        if "parameters" not in tool["function"]:
            problems.append(f"tools.{i}.function.parameters\n  Field required")
    if problems:
        text = f"{len(problems)} validation error(s) for ChatCompletionRequest\n" + "\n".join(problems)
        return {"status": 500, "body": {"error": {"message": text, "type": "internal_server_error"}}}
    return {"body": THINKING}


@pytest.fixture(scope="module")
def server():
    with RecordingServer({"strict": strict}) as running:
        yield running


def test_a_tool_call_round_trip_is_accepted_by_a_strict_server(server):
    client = ChatClient(
        ModelSpec(name="s", model="m", base_url=server.url("strict"), max_retries=3), endpoints=EndpointStates()
    )
    messages = [{"role": "user", "content": "list the files"}]
    try:
        first = client.complete(messages, [], time.monotonic() + 30)
        call = first.message["tool_calls"][0]
        messages += [first.message, tool_message(call["id"], call["function"]["name"], "a.py\nb.py")]
        second = client.complete(messages, [], time.monotonic() + 30)
    finally:
        client.close()
    assert first.message["content"] == "" and "reasoning_content" not in first.message
    assert first.reasoning == "Listing the files first." and first.usage.reasoning_tokens == 9
    assert second.retries == [] and len(server.bodies("strict")) == 2


def test_the_strict_server_does_refuse_what_servers_used_to_be_sent(server):
    """The check above can fail: the old form (content null, reasoning kept) is refused, once."""
    client = ChatClient(
        ModelSpec(name="s", model="m", base_url=server.url("strict"), max_retries=3), endpoints=EndpointStates()
    )
    old_form = {**THINKING["choices"][0]["message"]}
    before = len(server.bodies("strict"))
    try:
        with pytest.raises(EndpointError) as caught:
            client.complete([{"role": "user", "content": "x"}, old_form], [], time.monotonic() + 30)
    finally:
        client.close()
    assert "Input should be a valid string" in str(caught.value) and "Extra inputs" in str(caught.value)
    assert len(server.bodies("strict")) == before + 1  # a validation error is not retried


def test_parse_completion_keeps_only_role_content_and_tool_calls():
    def parsed(message):
        return parse_completion({"choices": [{"message": message, "finish_reason": "stop"}]}, [])

    message, finish, usage, reasoning = parsed(
        {"role": "assistant", "content": None, "tool_calls": [], "reasoning": "hmm", "refusal": None, "audio": None}
    )
    assert message == {"role": "assistant", "content": ""} and reasoning == "hmm" and finish == "stop"
    assert not usage.reported
    message, *_ = parsed(
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    )
    assert message == {"role": "assistant", "content": "ab"}


def test_tool_message_and_usage_shapes():
    assert tool_message("call_1", "bash", "out") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "bash",
        "content": "out",
    }
    total = Usage(10, 5, 0, True, 3) + Usage(1, 1, 0, True, 1)
    assert total.reasoning_tokens == 4 and total.as_dict()["reasoning_tokens"] == 4 and total.total_tokens == 17


def test_a_tool_without_parameters_reaches_a_strict_server_as_a_function_of_no_arguments(server):
    """OpenAI's schema lets `parameters` be left out (Qwen Code's `get_goal`); llama-cpp-python
    refuses that with a 500 and the attempt ended as `endpoint_error` at its first request."""
    client = ChatClient(
        ModelSpec(name="s", model="m", base_url=server.url("strict"), max_retries=0), endpoints=EndpointStates()
    )
    tools = [
        {"type": "function", "function": {"name": "get_goal", "description": "Read the goal."}},
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}},
    ]
    try:
        reply = client.complete([{"role": "user", "content": "x"}], tools, time.monotonic() + 30)
    finally:
        client.close()
    assert reply.retries == []
    sent = server.bodies("strict")[-1]["tools"]
    assert sent[0]["function"] == {"name": "get_goal", "description": "Read the goal.", "parameters": NO_PARAMETERS}
    assert sent[1] == tools[1] and "parameters" not in tools[0]["function"]  # the caller's list untouched
