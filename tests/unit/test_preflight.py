"""The endpoint check before a run, against real local servers through the real openai SDK: a dead,
slow, locked or mistyped endpoint is one problem naming the model, the URL and the error; a
`/models` list without the model id only warns; one request per endpoint, none for built-ins."""

import socket

import pytest
from hostile_server import HostileServer, turn
from recording_server import RecordingServer

from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec
from evalkit.models.preflight import PreflightReport, preflight


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spec(name: str, url: str, model: str | None = None, **fields) -> ModelSpec:
    return ModelSpec(name=name, model=model or name, base_url=url, **fields)


def test_a_refused_connection_names_the_model_the_url_and_the_cause():
    url = f"http://127.0.0.1:{free_port()}/v1"
    report = preflight([spec("foo", url)])
    assert report.problems == [f"model `foo` at {url}: connection refused; is the server running?"]
    with pytest.raises(EvalkitError) as raised:
        report.raise_first()
    assert str(raised.value).endswith("(--no-preflight skips this check)")


def test_a_listed_model_passes_with_one_request_for_the_whole_endpoint():
    with HostileServer({"v": [[turn(content="OK")]]}, models=["a", "b"]) as server:
        url = server.url("v")
        report = preflight([spec("first", url, "a"), spec("second", url, "b")])
    assert report == PreflightReport()
    assert server.gets["v"] == 1 and not server.requests  # one GET /models, no chat request


def test_a_model_the_list_leaves_out_only_warns():
    with HostileServer({"v": [[turn(content="OK")]]}, models=["qwen", "llama"]) as server:
        report = preflight([spec("mine", server.url("v"), "qwen2.5-coder")])
    assert report.problems == []
    (warning,) = report.warnings
    assert "model `mine`" in warning and "does not list `qwen2.5-coder`" in warning and "`qwen`, `llama`" in warning


def test_without_a_models_route_a_one_token_request_decides():
    with RecordingServer({"chat": [{}]}) as server:  # GET /models answers 404
        report = preflight([spec("m", server.url("chat"), "served-id")])
    assert report == PreflightReport()
    (body,) = server.bodies("chat")
    assert body["model"] == "served-id" and body["max_tokens"] == 1 and "tools" not in body


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"status": 401, "body": {"error": {"message": "Incorrect API key"}}}, "HTTP 401: Incorrect API key; check"),
        ({"status": 404, "body": {"error": {"message": "no such model"}}}, "HTTP 404: no such model; is the base URL"),
        ({"status": 500, "body": {"error": {"message": "backend down"}}}, "HTTP 500: backend down"),
    ],
)
def test_a_chat_route_that_refuses_is_a_problem(action, expected):
    with RecordingServer({"bad": [action]}) as server:
        url = server.url("bad")
        report = preflight([spec("m", url)])
    assert [p.startswith(f"model `m` at {url}: {expected}") for p in report.problems] == [True]


def test_a_server_that_answers_the_tiny_request_with_a_400_is_there():
    with RecordingServer({"strict": [{"status": 400, "body": {"error": {"message": "max_tokens too small"}}}]}) as s:
        assert preflight([spec("m", s.url("strict"))]) == PreflightReport()


def test_a_server_that_does_not_answer_in_time_is_reported_as_such():
    with HostileServer({"slow": [[{"hang": 3}]]}) as server:
        report = preflight([spec("m", server.url("slow"))], timeout_s=0.3)
    assert report.problems == [
        f"model `m` at {server.url('slow')}: no answer within 0.3 s; is the server up and the URL right?"
    ]


def test_built_in_models_need_no_check():
    builtins = [ModelSpec(name=n, model=n, builtin=n) for n in ("oracle", "null")]
    assert preflight(builtins) == PreflightReport()


def test_every_failing_endpoint_is_counted_in_the_one_line():
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    report = preflight([spec("a", urls[0]), spec("b", urls[1])])
    with pytest.raises(EvalkitError, match=r"model `a` at .* \(and 1 more endpoint problem\) \(--no-preflight"):
        report.raise_first()
