"""The built-in server over real HTTP, driven by the official openai SDK."""

import json

import openai
import pytest

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.models import ModelServer, NullPolicy, OraclePolicy


@pytest.fixture
def client(toy_task):
    with ModelServer({"oracle": OraclePolicy([toy_task]), "null": NullPolicy()}) as server:
        yield openai.OpenAI(base_url=server.base_url, api_key="not-needed", max_retries=0)


def ask(client, model, messages, tools=TOOL_SCHEMAS):
    return client.chat.completions.create(model=model, messages=messages, tools=tools)


def test_models_endpoint_lists_the_policies(client):
    assert sorted(m.id for m in client.models.list()) == ["null", "oracle"]


def test_null_model_submits_at_once_with_usage(client, toy_task):
    reply = ask(client, "null", [{"role": "user", "content": toy_task.prompt}])
    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "submit" and reply.choices[0].finish_reason == "tool_calls"
    assert reply.usage.prompt_tokens > 0 and reply.usage.total_tokens > reply.usage.prompt_tokens


def test_oracle_edits_with_the_agents_tools_then_submits(client, toy_task):
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": f"Task:\n{toy_task.prompt}\n"},
    ]
    names = []
    for _ in range(2):
        message = ask(client, "oracle", messages).choices[0].message
        (call,) = message.tool_calls
        names.append(call.function.name)
        arguments = json.loads(call.function.arguments)
        if call.function.name == "edit":
            assert arguments["path"] == "calc/__init__.py" and "def power" in arguments["new_string"]
        messages.append(message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "Edited."})
    assert names == ["edit", "submit"]
    assert "calc/__init__.py" in arguments["summary"]


def test_oracle_offered_bash_write_file_and_submit_never_calls_edit(client, toy_task):
    offered = [schema for schema in TOOL_SCHEMAS if schema["function"]["name"] in {"bash", "write_file", "submit"}]
    messages = [{"role": "user", "content": toy_task.prompt}]
    names = []
    while "submit" not in names and len(names) < 5:
        message = ask(client, "oracle", messages, offered).choices[0].message
        names += [call.function.name for call in message.tool_calls]
        messages.append(message.model_dump(exclude_none=True))
        messages += [{"role": "tool", "tool_call_id": call.id, "content": "ok"} for call in message.tool_calls]
    assert names == ["write_file", "bash", "submit"]  # the patch written, then `git apply`


def test_oracle_asked_without_tools_answers_in_text(client, toy_task):
    reply = client.chat.completions.create(model="oracle", messages=[{"role": "user", "content": toy_task.prompt}])
    message = reply.choices[0].message
    assert not message.tool_calls and "cannot make this change" in message.content


def test_a_malformed_tools_list_is_a_400(client):
    with pytest.raises(openai.BadRequestError, match="tools"):
        client.chat.completions.create(model="oracle", messages=[{"role": "user", "content": "hi"}], tools=[{"x": 1}])


def test_oracle_says_so_when_it_does_not_know_the_task(client):
    message = ask(client, "oracle", [{"role": "user", "content": "something else"}]).choices[0].message
    assert not message.tool_calls and "does not know" in message.content


def test_unknown_model_is_a_404_the_sdk_understands(client):
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        ask(client, "gpt-nope", [{"role": "user", "content": "hi"}])


def test_a_streamed_request_as_qwen_code_sends_it_gets_the_call_and_the_usage_chunk(client, toy_task):
    """Qwen Code always streams with `stream_options.include_usage`, so `evalkit serve` must too."""
    from pathlib import Path

    tools = json.loads((Path(__file__).parent.parent / "data" / "qwen_code_tools.json").read_text())
    user = {"role": "user", "content": [{"type": "text", "text": "<system-reminder>tree</system-reminder>"},
                                        {"type": "text", "text": toy_task.prompt}]}  # fmt: skip
    chunks = list(client.chat.completions.create(model="oracle", messages=[user], tools=tools, max_tokens=32000,
                                                  stream=True, stream_options={"include_usage": True}))  # fmt: skip
    calls = [call for chunk in chunks for choice in chunk.choices for call in choice.delta.tool_calls or []]
    (call,) = calls
    assert call.function.name == "run_shell_command" and "git apply" in json.loads(call.function.arguments)["command"]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
