"""A real model server: llama-cpp-python's OpenAI-compatible server on SmolLM2-135M (CPU, 2 threads).

First what the server itself accepts, through the real `openai` SDK: it validates requests with
pydantic and is stricter than OpenAI (an assistant message with `tool_calls` must carry a string
`content`; tools are only shown to the model when `tool_choice` is sent). Then `evalkit run`
against it end to end: every attempt goes past its second turn without an endpoint error, with the
server's own token counts, and leaves no container behind.
"""

from __future__ import annotations

import json
import time

import openai
import pytest
from conftest import DEMO_SUITE, run_evalkit
from llama_server import MODEL_ALIAS

from evalkit.sandbox.docker.containers import LABEL_RUN

pytestmark = pytest.mark.integration

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command."}},
                "required": ["command"],
            },
        },
    }
]
FIRST_TURN = [
    {"role": "system", "content": "You are a software engineer. Use the bash tool to work in the repository."},
    {"role": "user", "content": "List the files in the repository."},
]
TOOL_OUTPUT = "README.md\npyproject.toml\nsrc\ntests\n[exit code 0]"
TASKS = ("kvstore-batch", "ledger-csv-import")
RUN_ID = "llama"
TOOLS_RUN_ID = "llama-tools"


@pytest.fixture(scope="module")
def client(llama_server):
    with openai.OpenAI(base_url=llama_server, api_key="unused", max_retries=0, timeout=120) as sdk:
        yield sdk


def complete(client: openai.OpenAI, messages: list[dict], **options):
    return client.chat.completions.create(
        model=MODEL_ALIAS, messages=messages, tools=TOOLS, temperature=0.0, seed=1, max_tokens=48, **options
    )


@pytest.fixture(scope="module")
def tool_call_turn(client) -> dict:
    """The assistant message of a real first turn with a tool call, as evalkit puts it back into
    the conversation: role, content, tool_calls. The server itself answers `content: None`."""
    reply = complete(client, FIRST_TURN, tool_choice={"type": "function", "function": {"name": "bash"}})
    message = reply.choices[0].message
    assert reply.choices[0].finish_reason == "tool_calls" and message.tool_calls, message
    assert message.content is None  # what evalkit used to send straight back
    calls = [call.model_dump(include={"id", "type", "function"}) for call in message.tool_calls]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def second_turn(tool_call_turn: dict, **assistant) -> list[dict]:
    """The conversation evalkit sends on turn 2: the assistant's tool call, then its result."""
    call = tool_call_turn["tool_calls"][0]
    tool = {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": TOOL_OUTPUT}
    return [*FIRST_TURN, {**tool_call_turn, **assistant}, tool]


def test_a_tool_call_turn_with_empty_string_content_is_accepted(client, tool_call_turn):
    reply = complete(client, second_turn(tool_call_turn, content=""), tool_choice="auto")
    assert reply.choices[0].finish_reason in {"stop", "length", "tool_calls"}
    assert reply.usage.prompt_tokens > 0


def test_a_tool_call_turn_with_null_content_is_refused_with_http_500(client, tool_call_turn):
    """OpenAI's own schema allows `content: null` beside `tool_calls`; llama-cpp-python 0.3.36's
    pydantic request model does not, and answers 500 (not 400): an error that only repeats on retry."""
    with pytest.raises(openai.InternalServerError) as caught:
        complete(client, second_turn(tool_call_turn, content=None), tool_choice="auto")
    error = caught.value
    assert error.status_code == 500
    body = error.response.json()["error"]
    assert body["type"] == "internal_server_error"
    assert "validation error" in body["message"]
    assert "Input should be a valid string" in body["message"]
    assert "'ChatCompletionRequestAssistantMessage', 'content')" in body["message"]


def test_a_tool_call_turn_without_content_is_refused_too(client, tool_call_turn):
    """Leaving `content` out passes validation but breaks the chat template: 500 again."""
    messages = second_turn(tool_call_turn)
    del messages[2]["content"]
    with pytest.raises(openai.InternalServerError) as caught:
        complete(client, messages, tool_choice="auto")
    assert "has no attribute 'content'" in caught.value.response.json()["error"]["message"]


def test_tools_reach_the_model_only_with_tool_choice(client):
    """chatml-function-calling renders the tools into the prompt only when `tool_choice` is given:
    without it (OpenAI's default is "auto") the model never sees them and cannot call one."""
    bare = client.chat.completions.create(model=MODEL_ALIAS, messages=FIRST_TURN, max_tokens=1, temperature=0.0)
    implicit = client.chat.completions.create(
        model=MODEL_ALIAS, messages=FIRST_TURN, tools=TOOLS, max_tokens=1, temperature=0.0
    )
    auto = client.chat.completions.create(
        model=MODEL_ALIAS, messages=FIRST_TURN, tools=TOOLS, tool_choice="auto", max_tokens=1, temperature=0.0
    )
    assert implicit.usage.prompt_tokens == bare.usage.prompt_tokens
    assert auto.usage.prompt_tokens > bare.usage.prompt_tokens + 50


def write_config(path, url: str) -> None:
    entry = (
        '[models.{name}]\nmodel = "smollm2"\nbase_url = "{url}"\n'
        "request_timeout_s = 120\nmax_retries = 1\nmax_tokens = 256\ntemperature = 0.0\nseed = 1\n{extra}\n"
    )
    path.write_text(
        entry.format(name="smollm2", url=url, extra="")
        + entry.format(name="smollm2-tools", url=url, extra='tool_choice = "auto"\n')
    )


def evalkit_run(out, config, run_id: str, model: str, tasks, *limits: str):
    started = time.monotonic()
    result = run_evalkit(
        "run", "--suite", DEMO_SUITE, *[arg for task in tasks for arg in ("--task", task)], "--model", model,
        "--config", config, "--concurrency", "1", "--run-id", run_id, "--out", out, *limits, timeout=900,
    )  # fmt: skip
    path = out / run_id / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    summary = [(r["task_id"], r["stop_reason"], r["turns"], r["tool_calls"], r["duration_s"], r["error"]) for r in rows]
    print(f"\n{run_id} ({model}): {time.monotonic() - started:.0f} s: {summary}")
    return result, rows, out / run_id


@pytest.fixture(scope="module")
def runs_dir(llama_server, tmp_path_factory):
    out = tmp_path_factory.mktemp("llama-runs")
    write_config(out / "evalkit.toml", llama_server)
    return out


@pytest.fixture(scope="module")
def llama_run(runs_dir, docker_engine):
    """Two demo tasks as the server answers by default: without `tool_choice` the tools are not
    shown to the model, so its turns are plain text, which the loop nudges."""
    return evalkit_run(
        runs_dir, runs_dir / "evalkit.toml", RUN_ID, "smollm2", TASKS, "--max-turns", "6", "--wall-time", "300"
    )


@pytest.fixture(scope="module")
def llama_tools_run(llama_run, runs_dir, docker_engine):
    """One task with the tools offered (`tool_choice = "auto"`): real tool calls, so turn 2 sends
    the assistant's `tool_calls` back. After `llama_run`, and short: in "auto" mode llama-cpp-python
    0.3.36 ignores `max_tokens` while it writes a tool call's arguments, so a runaway call fills
    the context (minutes on 2 cores) and holds the single-threaded server after the client gave up."""
    return evalkit_run(
        runs_dir, runs_dir / "evalkit.toml", TOOLS_RUN_ID, "smollm2-tools", TASKS[1:],
        "--max-turns", "4", "--wall-time", "180",
    )  # fmt: skip


def test_evalkit_runs_every_attempt_past_turn_two_against_the_real_server(llama_run):
    result, rows, _ = llama_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(r["task_id"] for r in rows) == sorted(TASKS)
    for row in rows:
        assert row["stop_reason"] != "endpoint_error", (row["task_id"], row["error"])
        assert row["turns"] >= 2, (row["task_id"], row["stop_reason"], row["error"])


def test_a_tool_calling_attempt_sends_its_tool_calls_back(llama_tools_run):
    """The request that llama.cpp refused while evalkit sent `content: null`: native tool calls
    on turn 1, their results on turn 2, and on."""
    result, rows, _ = llama_tools_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert [r["task_id"] for r in rows] == list(TASKS[1:])
    for row in rows:
        assert row["stop_reason"] != "endpoint_error", (row["task_id"], row["error"])
        assert row["tool_calls"] >= 1 and row["turns"] >= 2, (row["stop_reason"], row["turns"], row["error"])


@pytest.mark.parametrize("which", ["llama_run", "llama_tools_run"])
def test_usage_is_the_servers_own(which, request):
    _, rows, run_dir = request.getfixturevalue(which)
    assert rows
    for row in rows:
        assert row["usage"]["reported"] is True and row["usage"]["prompt_tokens"] > 0, row["usage"]
        trajectory = run_dir / "trajectories" / f"{row['task_id']}__{row['model']}__0.jsonl"
        events = [json.loads(line) for line in trajectory.read_text().splitlines()]
        calls = [e for e in events if e["type"] == "model_call" and not e.get("failed")]
        assert calls and all(c["reported_usage"]["prompt_tokens"] > 0 for c in calls)


def test_no_container_is_left(llama_run, llama_tools_run, docker_engine):
    for run_id in (RUN_ID, TOOLS_RUN_ID):
        assert docker_engine.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []
