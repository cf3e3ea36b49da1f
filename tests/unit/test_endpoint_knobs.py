"""Endpoint knobs from evalkit.toml and the command line: validated, recorded without secrets, and
seen by a real HTTP server exactly as servers expect them (plain and streamed requests)."""

import json
import time

import pytest
from recording_server import RecordingServer

from evalkit.errors import EvalkitError
from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient, EndpointError
from evalkit.models.endpoint import ModelSpec, Sampling, read_config, resolve_model

USER = [{"role": "user", "content": "hi"}]
BASH = {
    "type": "function",
    "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
}


def _delta(**delta):
    return {"id": "s-1", "model": "rec", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


STREAM = [
    _delta(role="assistant", reasoning_content="The tests "),
    _delta(reasoning_content="come first."),
    _delta(content="Looking."),
    _delta(
        tool_calls=[{"index": 0, "id": "call_a", "type": "function", "function": {"name": "bash", "arguments": ""}}]
    ),
    _delta(tool_calls=[{"index": 0, "function": {"arguments": '{"comm'}}]),
    _delta(tool_calls=[{"index": 1, "id": "call_b", "function": {"name": "read_file", "arguments": '{"path"'}}]),
    _delta(tool_calls=[{"index": 0, "function": {"arguments": 'and": "ls"}'}}]),
    _delta(tool_calls=[{"index": 1, "function": {"arguments": ': "a.py"}'}}]),
    {"id": "s-1", "model": "rec", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    {
        "id": "s-1",
        "model": "rec",
        "choices": [],
        "usage": {"prompt_tokens": 40, "completion_tokens": 30, "completion_tokens_details": {"reasoning_tokens": 12}},
    },
    "data: [DONE]",
]


@pytest.fixture(scope="module")
def server():
    scenarios = {
        "plain": [{}],
        "stream": [{"sse": STREAM}],
        "no_end": [{"sse": [_delta(content="half an ans")]}],
        "stream_error": [{"sse": [_delta(content="x"), 'error: {"message": "1 validation error: Field required"}']}],
        "pings": [{"ping_forever": True}],
    }
    with RecordingServer(scenarios) as running:
        yield running


def ask(server, scenario, tools=(BASH,), **fields):
    options = {"request_timeout_s": 2.0, "max_retries": 0, **fields}
    spec = ModelSpec(name="m", model="some-model", base_url=server.url(scenario), **options)
    client = ChatClient(spec, endpoints=EndpointStates())
    try:
        return client.complete(USER, list(tools), time.monotonic() + 30)
    finally:
        client.close()


def test_every_knob_reaches_the_server_and_no_secret_reaches_the_record(server, monkeypatch):
    monkeypatch.setenv("TENANT_TOKEN", "tenant-secret-123")
    monkeypatch.setenv("MY_KEY", "sk-secret-456")
    spec_fields = {
        "api_key_env": "MY_KEY",
        "tool_choice": "bash",
        "parallel_tool_calls": False,
        "reasoning_effort": "high",
        "stop": ["</done>", "\nUser:"],
        "extra_body": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}},
        "extra_headers": {"X-Tenant": "TENANT_TOKEN"},
        "sampling": Sampling(temperature=0.2, max_tokens=256, seed=7),
    }
    reply = ask(server, "plain", **spec_fields)
    assert reply.message["tool_calls"][0]["function"]["name"] == "bash"
    received = server.received[-1]
    body = received.body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "bash"}}
    assert body["parallel_tool_calls"] is False and body["reasoning_effort"] == "high"
    assert body["stop"] == ["</done>", "\nUser:"]
    assert body["top_k"] == 20 and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 256, 7)
    assert "max_completion_tokens" not in body and "stream" not in body
    assert received.headers["x-tenant"] == "tenant-secret-123"
    assert received.headers["authorization"] == "Bearer sk-secret-456"
    recorded = json.dumps(ModelSpec(name="m", model="x", **spec_fields).public())
    assert "tenant-secret-123" not in recorded and "sk-secret-456" not in recorded
    public = json.loads(recorded)
    assert public["extra_headers"] == {"X-Tenant": "TENANT_TOKEN"} and public["api_key_env"] == "MY_KEY"
    assert public["tool_choice"] == "bash" and public["extra_body"]["top_k"] == 20


def test_a_reasoning_model_gets_max_completion_tokens_and_no_sampling_it_refuses(server):
    ask(server, "plain", reasoning=True, sampling=Sampling(temperature=0.5, top_p=0.9, max_tokens=512, seed=1))
    body = server.received[-1].body
    assert body["max_completion_tokens"] == 512 and body["seed"] == 1
    assert not {"max_tokens", "temperature", "top_p"} & body.keys()


def test_explicit_max_completion_tokens_replaces_max_tokens(server):
    ask(server, "plain", max_completion_tokens=64, sampling=Sampling(max_tokens=512, temperature=0.0))
    body = server.received[-1].body
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body and body["temperature"] == 0.0


def test_tool_settings_are_not_sent_without_tools(server):
    ask(server, "plain", tools=(), tool_choice="required", parallel_tool_calls=True)
    body = server.received[-1].body
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & body.keys()
    ask(server, "plain", tool_choice="required")
    assert server.received[-1].body["tool_choice"] == "required"


def test_a_streamed_answer_is_assembled_like_a_plain_one(server):
    reply = ask(server, "stream", stream=True)
    body = server.received[-1].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert reply.message == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
        ],
    }
    assert reply.finish_reason == "tool_calls" and reply.reasoning == "The tests come first."
    assert reply.raw["choices"][0]["message"]["reasoning_content"] == "The tests come first."
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.reasoning_tokens) == (40, 30, 12)
    assert reply.usage.reported and reply.usage.as_dict()["reasoning_tokens"] == 12


def test_a_stream_cut_short_is_a_bad_response_and_a_validation_error_in_it_is_not_retried(server):
    with pytest.raises(EndpointError) as caught:
        ask(server, "no_end", stream=True)
    assert caught.value.retries[0].kind == "bad_response" and "ended before" in caught.value.retries[0].detail
    before = len(server.bodies("stream_error"))
    with pytest.raises(EndpointError) as caught:
        ask(server, "stream_error", stream=True, max_retries=3)
    assert "Field required" in str(caught.value) and len(server.bodies("stream_error")) == before + 1


def test_a_stream_of_keepalives_is_cut_at_the_request_timeout(server):
    started = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        ask(server, "pings", stream=True, request_timeout_s=1.0)
    assert time.monotonic() - started < 3 and caught.value.retries[0].kind == "timeout"


def test_a_missing_header_variable_is_one_clear_error(server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    spec = ModelSpec(name="m", model="x", base_url=server.url("plain"), extra_headers={"X-Token": "NO_SUCH_TOKEN"})
    with pytest.raises(EvalkitError, match="NO_SUCH_TOKEN \\(header X-Token\\) is not set"):
        ChatClient(spec)


def test_config_knobs_are_read_and_the_command_line_overrides_them(tmp_path):
    config = tmp_path / "evalkit.toml"
    config.write_text(
        '[models.r1]\nmodel = "deepseek-r1"\nreasoning = true\nmax_completion_tokens = 4000\nstream = true\n'
        'tool_choice = "auto"\nstop = ["</answer>"]\nmax_connections = 4\n'
        '[models.r1.extra_body]\ntop_k = 40\n[models.r1.extra_headers]\nX-Org = "ORG_TOKEN"\n'
    )
    spec = resolve_model("r1", read_config(config), config_path=config)
    assert (spec.reasoning, spec.max_completion_tokens, spec.stream, spec.max_connections) == (True, 4000, True, 4)
    assert spec.extra_body == {"top_k": 40} and spec.extra_headers == {"X-Org": "ORG_TOKEN"}
    cli = resolve_model(
        "r1",
        read_config(config),
        config_path=config,
        sampling=Sampling(max_tokens=1000),
        knobs={"tool_choice": "required", "stream": False, "stop": None, "max_connections": 1},
    )
    assert (cli.tool_choice, cli.stream, cli.stop, cli.max_connections) == ("required", False, ["</answer>"], 1)
    assert cli.max_completion_tokens == 1000  # --max-completion-tokens beats the file's value
    assert resolve_model("oracle", {}, knobs={"stream": True}).stream is False  # built-ins take no knob


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('tool_choice = "call any"', "[models.a] `tool_choice`: must be auto, required, none or a tool"),
        ("parallel_tool_calls = 3", "[models.a] `parallel_tool_calls`"),
        ("stop = []", "[models.a] `stop`: must be a non-empty list"),
        ('stop = "</a>"', "[models.a] `stop`"),
        ("max_connections = 0", "[models.a] `max_connections`: must be at least 1, got 0"),
        ("max_completion_tokens = -1", "[models.a] `max_completion_tokens`: must be more than 0, got -1"),
        ('extra_body = {model = "other"}', "[models.a] `extra_body`: model is set by evalkit"),
        ('extra_headers = {"X-Key" = "sk-123-literal"}', "[models.a] `extra_headers`: `X-Key`"),
        ('extra_headers = {"Bad Header" = "VAR"}', "not a valid header name"),
        ('reasoning_effortt = "high"', "[models.a] unknown key `reasoning_effortt` (did you mean `reasoning_effort`?)"),
    ],
)
def test_bad_knobs_in_the_config_name_file_and_field(tmp_path, text, says):
    config = tmp_path / "evalkit.toml"
    config.write_text(f"[models.a]\n{text}\n")
    with pytest.raises(EvalkitError) as caught:
        resolve_model("a", read_config(config), config_path=config)
    assert str(config) in str(caught.value) and says in str(caught.value)


def test_bad_knobs_on_the_command_line_name_the_option():
    with pytest.raises(EvalkitError, match="^--tool-choice: Value error, must be auto"):
        resolve_model("gpt-x", {}, knobs={"tool_choice": "two words"})
    with pytest.raises(EvalkitError, match="^--stop: Value error"):
        resolve_model("gpt-x", {}, knobs={"stop": [""]})


def test_the_command_line_refuses_bad_knobs_and_missing_header_variables_before_any_run(tmp_path):
    from conftest import run_evalkit
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    out = tmp_path / "runs"
    result = run_evalkit(
        "run", "-m", "gpt-x", "--tool-choice", "two words", "--suite", suite, "--out", out, timeout=120
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "error: --tool-choice: Value error, must be auto, required, none or a tool name"
    config = tmp_path / "evalkit.toml"
    config.write_text(
        '[models.mine]\nbase_url = "http://127.0.0.1:9/v1"\nextra_headers = {"X-K" = "EVALKIT_NO_SUCH_VAR"}\n'
    )
    result = run_evalkit("run", "-m", "mine", "--config", config, "--suite", suite, "--out", out, timeout=120)
    assert result.returncode == 2 and "EVALKIT_NO_SUCH_VAR (header X-K) is not set" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
