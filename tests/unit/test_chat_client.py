"""The model client through the real openai SDK against a hostile HTTP server: what is retried,
what is not, what is counted, and that no answer can keep it waiting past its timeout."""

import time

import pytest
from hostile_server import HostileServer, turn

from evalkit.models.client import MAX_RESPONSE_BYTES, ChatClient, EndpointError
from evalkit.models.endpoint import ModelSpec

OK = turn(
    ("bash", {"command": "ls"}),
    usage={"prompt_tokens": 120, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 100}},
)
PYDANTIC = (
    "1 validation error for ChatCompletionRequestAssistantMessage\ncontent\n  Input should be a valid string "
    "[type=string_type, input_value=None, input_type=NoneType]\n    For further information visit "
    "https://errors.pydantic.dev/2.9/v/string_type" + " and more" * 60
)
CONTEXT = {
    "error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}
}
SCENARIOS = {
    "ok": [[OK]],
    "rate": [[{"status": 429, "headers": {"Retry-After": "0.6"}}, OK]],
    "down": [[{"status": 503}]],
    "flaky": [[{"status": 500}, {"status": 502}, OK]],
    "hang": [[{"hang": 5}]],
    "trickle": [[{"trickle": True}]],
    "flood": [[{"flood": MAX_RESPONSE_BYTES + 1_000_000}]],
    "garbage": [[{"status": 200, "body": ["not", "a", "completion"]}]],
    "overflow": [[{"status": 400, "body": CONTEXT}]],
    "auth": [[{"status": 401}]],
    "nousage": [[turn(("submit", {"summary": "done"}))]],
    # errors that would only repeat: one try each
    "fastapi422": [
        [
            {
                "status": 422,
                "body": {
                    "detail": [{"loc": ["body", "messages", 1, "content"], "msg": "Field required", "type": "missing"}]
                },
            }
        ]
    ],
    "pydantic500": [[{"status": 500, "body": {"error": {"message": PYDANTIC, "type": "internal_server_error"}}}]],
    "invalid400": [
        [{"status": 400, "body": {"error": {"message": "Unknown parameter: 'foo'.", "type": "invalid_request_error"}}}]
    ],
    "missing404": [[{"status": 404, "body": {"error": {"message": "The model `m` does not exist."}}}]],
    "invalid500": [
        [{"status": 500, "body": {"error": {"message": "bad tool_choice", "type": "invalid_request_error"}}}]
    ],
}


@pytest.fixture(scope="module")
def server():
    with HostileServer(SCENARIOS) as running:
        yield running


def complete(server, scenario, **spec):
    options = {"request_timeout_s": 1.0, "max_retries": 2, "retry_base_s": 0.05, **spec}
    client = ChatClient(ModelSpec(name=scenario, model="m", base_url=server.url(scenario), **options))
    try:
        return client.complete([{"role": "user", "content": "hi"}], [], time.monotonic() + 30)
    finally:
        client.close()


def test_usage_as_reported_including_cached_tokens(server):
    reply = complete(server, "ok")
    assert reply.message["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (120, 7, 100)
    assert reply.usage.reported and reply.retries == []


def test_missing_usage_is_estimated_and_says_so(server):
    reply = complete(server, "nousage")
    assert not reply.usage.reported and reply.usage.total_tokens > 0


def test_429_waits_as_long_as_retry_after_says_and_is_counted(server):
    started = time.monotonic()
    reply = complete(server, "rate", retry_base_s=0.01)
    assert time.monotonic() - started >= 0.6
    assert [(r.kind, r.status, r.wait_s) for r in reply.retries] == [("rate_limit", 429, 0.6)]


def test_5xx_is_retried_until_it_works(server):
    reply = complete(server, "flaky")
    assert [r.status for r in reply.retries] == [500, 502]


def test_5xx_forever_gives_up_after_the_retries(server):
    with pytest.raises(EndpointError) as caught:
        complete(server, "down", max_retries=3)
    assert caught.value.kind == "endpoint_error" and len(caught.value.retries) == 4
    assert {r.kind for r in caught.value.retries} == {"server_error"}


@pytest.mark.parametrize("scenario", ["hang", "trickle"])
def test_a_server_that_never_finishes_is_cut_at_the_request_timeout(server, scenario):
    started = time.monotonic()
    with pytest.raises(EndpointError) as caught:
        complete(server, scenario, max_retries=1)
    assert time.monotonic() - started < 4  # two requests of 1 s each, plus backoff
    assert [r.kind for r in caught.value.retries] == ["timeout", "timeout"]


def test_an_oversized_or_unusable_body_is_a_bad_response(server):
    for scenario in ("flood", "garbage"):
        with pytest.raises(EndpointError) as caught:
            complete(server, scenario, max_retries=0)
        assert caught.value.retries[0].kind == "bad_response", scenario


def test_context_overflow_and_auth_errors_are_not_retried(server):
    with pytest.raises(EndpointError) as caught:
        complete(server, "overflow")
    assert caught.value.kind == "context_overflow" and caught.value.retries == []
    with pytest.raises(EndpointError) as caught:
        complete(server, "auth")
    assert caught.value.kind == "endpoint_error" and "HTTP 401" in str(caught.value)


def test_no_request_starts_after_the_deadline(server):
    client = ChatClient(ModelSpec(name="ok", model="m", base_url=server.url("ok")))
    with pytest.raises(EndpointError) as caught:
        client.complete([{"role": "user", "content": "hi"}], [], time.monotonic() - 1)
    assert caught.value.kind == "wall_time"


@pytest.mark.parametrize(
    ("scenario", "says"),
    [
        ("fastapi422", "HTTP 422: body.messages.1.content: Field required"),
        ("pydantic500", "HTTP 500: 1 validation error for ChatCompletionRequestAssistantMessage content Input should"),
        ("invalid400", "HTTP 400: Unknown parameter: 'foo'."),
        ("missing404", "HTTP 404: The model `m` does not exist."),
        ("invalid500", "HTTP 500: bad tool_choice"),
    ],
)
def test_errors_that_would_repeat_are_raised_after_one_try_in_the_servers_words(server, scenario, says):
    before = server.requests[scenario]
    with pytest.raises(EndpointError) as caught:
        complete(server, scenario, max_retries=3)
    message = str(caught.value)
    assert caught.value.kind == "endpoint_error" and caught.value.retries == []
    assert server.requests[scenario] == before + 1
    assert message.startswith(says) and "\n" not in message and len(message) <= len("HTTP 500: ") + 300


def test_a_genuine_5xx_is_still_retried_with_the_servers_message(server):
    before = server.requests["down"]
    with pytest.raises(EndpointError) as caught:
        complete(server, "down", max_retries=2)
    assert server.requests["down"] == before + 3
    assert caught.value.retries[0].detail == "HTTP 503"
