"""A real model through each real installed agent: `evalkit run --agent A` with llama.cpp's server
on SmolLM2-135M (the session's one server, tests/llama_server.py) as the model, on one demo task.
A 135M model does not resolve it (not asserted); what a user relies on is that the attempt ends
with a recorded stop reason, that the proxy's trajectory holds the agent's real requests and the
real model's replies with the server's own token counts, and that nothing is left behind. An agent
whose first request alone is over the model's 4,096-token context (Qwen Code's is 10,382) gets the
server's refusal instead, recorded as `context_overflow`.

Short on purpose: at most 3 turns of at most 64 tokens (4 minutes at a load of 10 on 2 cores; the
wall time leaves room for that). No `tool_choice`: llama-cpp-python 0.3.36
then shows the model no tools, so its turns are text (in "auto" mode a runaway tool call ignores
max_tokens and holds the single-threaded server for minutes, see test_llama_server)."""

import re
import time

import pytest
from agent_runs import agent_log, assert_nothing_left, events_of, installed_agents, rows_of
from conftest import DEMO_SUITE, run_evalkit
from llama_server import N_CTX

from evalkit.tasks import load_suite

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

INSTALLED = installed_agents()
TASK = "kvstore-batch"
MAX_TURNS = 3
ENDINGS = {"max_turns", "agent_error", "submitted", "context_overflow"}  # how a weak model's attempt may end


@pytest.fixture(scope="module", params=INSTALLED)
def agent_llama_run(request, llama_server, docker_engine, tmp_path_factory):
    agent = request.param
    out = tmp_path_factory.mktemp(f"llama-{agent}")
    config = out / "evalkit.toml"
    config.write_text(
        f'[models.smollm2]\nmodel = "smollm2"\nbase_url = "{llama_server}"\n'
        "request_timeout_s = 120\nmax_retries = 1\nmax_tokens = 64\ntemperature = 0.0\nseed = 1\n"
    )
    run_id = f"llama-{agent}"
    started = time.monotonic()
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", TASK, "--model", "smollm2", "--config", config,
                         "--agent", agent, "--run-id", run_id, "--out", out, "--max-turns", MAX_TURNS,
                         "--wall-time", 600, timeout=900)  # fmt: skip
    rows = rows_of(out / run_id)
    summary = [(r["stop_reason"], r["turns"], r["agent_s"], r["error"]) for r in rows]
    print(f"\n{run_id}: {time.monotonic() - started:.0f} s: {summary}")
    return agent, result, rows, out / run_id


def test_the_attempt_ends_with_a_recorded_stop_reason_and_nothing_is_left(agent_llama_run, docker_engine):
    agent, result, rows, run_dir = agent_llama_run
    assert result.returncode in (0, 3), result.stderr[-3000:]
    (row,) = rows
    assert (row["agent"], row["model"]) == (agent, "smollm2")
    assert row["stop_reason"] in ENDINGS, (row["stop_reason"], row["error"])
    assert row["stop_reason"] == "submitted" or row["error"], row  # an attempt cut short says why
    if row["stop_reason"] == "agent_error":  # in the agent's own words
        assert re.fullmatch(r"the agent command exited with code \d+: .+", row["error"]), row["error"]
    assert (0 if row["stop_reason"] == "context_overflow" else 1) <= row["turns"] <= MAX_TURNS
    events = events_of(run_dir, row)
    assert [e["stop_reason"] for e in events if e["type"] == "stop"] == [row["stop_reason"]]
    assert agent_log(run_dir, row).startswith("$ ")
    assert_nothing_left(docker_engine, f"llama-{agent}")


def test_the_trajectory_holds_the_agents_requests_and_the_real_models_replies(agent_llama_run):
    _, _, rows, run_dir = agent_llama_run
    (row,) = rows
    events = events_of(run_dir, row)
    requests = [e for e in events if e["type"] == "proxy_request"]
    calls = [e for e in events if e["type"] == "model_call" and not e.get("failed")]
    assert len(calls) == row["turns"] and len(requests) >= len(calls)
    assert requests[0]["tools"], "the agent offered its own tools"  # what the agent sent, not evalkit's
    sent = [e["message"] for e in events if e["type"] == "message" and e["message"]["role"] != "assistant"]
    prompt = next(t.prompt for t in load_suite(DEMO_SUITE).tasks if t.id == TASK)
    assert sent[0]["role"] == "system" and any(prompt.split("\n")[0] in str(m.get("content")) for m in sent)
    if row["turns"] == 0:
        # the agent's first request alone is over the model's context (Qwen Code 0.24: 10,382
        # tokens of its system prompt, tools and the task against SmolLM2's 4,096): the server's
        # refusal is what the trajectory holds, and the attempt says so
        assert row["stop_reason"] == "context_overflow", (row["stop_reason"], row["error"])
        assert f"maximum context length is {N_CTX} tokens" in row["error"]
        assert [e["failed"] for e in events if e["type"] == "model_call"] == ["context_overflow"]
        return
    replies = [e["message"] for e in events if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert len(replies) == len(calls)
    for call in calls:  # the server's own counts, as it reported them
        assert call["response_model"] and call["reported_usage"]["prompt_tokens"] > 0
        assert call["reported_usage"]["completion_tokens"] > 0 and call["latency_s"] > 0
    assert row["usage"]["reported"] is True
    assert row["usage"]["prompt_tokens"] == sum(c["reported_usage"]["prompt_tokens"] for c in calls)
