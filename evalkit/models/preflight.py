"""Before a run: is each model's endpoint there at all?

A dead or mistyped endpoint would otherwise cost every attempt its whole retry budget (about a
minute each) and end as `endpoint_error` rows. So each distinct endpoint (base URL, key and
headers) is asked once, with a short timeout and no retry: `GET {base_url}/models`. A server
without that route (404, 405, 501) or with a broken one gets a 1-token chat request per model
instead. What stops the run, as one line naming the model, the URL and the error: connection
refused, a host that does not resolve, no answer in time, 401/403 (the key), 404 on the chat
route (the URL or the model id), a 5xx on the chat route. A `/models` list that leaves out the
model id is only a warning: many proxies list part of what they serve. Built-in models (oracle,
null, replay) are served in-process and need no check.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import openai

from evalkit.errors import EvalkitError, causes
from evalkit.models.client import one_line, server_message
from evalkit.models.endpoint import DEFAULT_BASE_URL, ModelSpec
from evalkit.wording import counted

PREFLIGHT_TIMEOUT_S = 10.0
NO_MODELS_ROUTE = frozenset({404, 405, 501})
SKIP_HINT = "(--no-preflight skips this check)"
_LISTED_SHOWN = 5


@dataclass
class PreflightReport:
    """What the checks found: `problems` stop the run, `warnings` do not."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def raise_first(self) -> None:
        """One EvalkitError line for the first problem (and how many more there are)."""
        if not self.problems:
            return
        more = len(self.problems) - 1
        also = f" (and {counted(more, 'more endpoint problem')})" if more else ""
        raise EvalkitError(f"{self.problems[0]}{also} {SKIP_HINT}")


def base_url_of(spec: ModelSpec) -> str:
    return (spec.resolved_base_url() or DEFAULT_BASE_URL).rstrip("/")


def connection_problem(exc: openai.APIConnectionError, url: str, timeout_s: float) -> str:
    """A failed connection in a person's words: refused, unresolvable host, TLS, timeout."""
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout_s:g} s; is the server up and the URL right?"
    for cause in causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused; is the server running?"
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve host `{urlsplit(url).hostname}`; is the URL right?"
        if isinstance(cause, ssl.SSLError):
            return f"TLS error ({one_line(str(cause), 160)}); http or https?"
    text = " ".join(str(c) for c in causes(exc)).lower()
    if "connection refused" in text:
        return "connection refused; is the server running?"
    if "name or service not known" in text or "nodename nor servname" in text:
        return f"cannot resolve host `{urlsplit(url).hostname}`; is the URL right?"
    detail = next((str(c) for c in causes(exc) if str(c) and str(c) != "Connection error."), str(exc))
    return f"cannot connect: {one_line(detail, 200)}"


def _key_problem(spec: ModelSpec, exc: openai.APIStatusError) -> str:
    return f"HTTP {exc.status_code}: {server_message(exc)}; check the key in {spec.key_variable()}"


def _listed_ids(body: object) -> list[str] | None:
    """The model ids of a `/models` answer, or None when it is not a models list."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]


def _list_models(client: openai.OpenAI) -> list[str] | None:
    """GET /models; None when the server has no usable route for it (then a chat request decides).
    Raises the SDK's errors for what means the endpoint cannot be used."""
    try:
        response = client.models.with_raw_response.list()
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise
        return None  # no such route, or a broken one: the chat route decides
    try:
        return _listed_ids(response.http_response.json())
    except ValueError:  # a 200 that is not JSON (a web page at that URL): the chat route decides
        return None


def _ping(client: openai.OpenAI, spec: ModelSpec) -> str | None:
    """A 1-token chat request; the problem it shows, if any. An answer of any kind but 401/403,
    404 and 5xx means a server that speaks the API is there (a 400 for the tiny request, a 429)."""
    limit = {"max_completion_tokens": 1} if spec.reasoning else {"max_tokens": 1}
    try:
        client.chat.completions.create(model=spec.model, messages=[{"role": "user", "content": "Say OK."}], **limit)
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            return _key_problem(spec, exc)
        if exc.status_code == 404:
            return (
                f"HTTP 404: {server_message(exc)}; is the base URL right (it usually ends in /v1) "
                f"and is `{spec.model}` served there?"
            )
        if exc.status_code >= 500:
            return f"HTTP {exc.status_code}: {server_message(exc)}"
    return None


def check_endpoint(specs: list[ModelSpec], timeout_s: float = PREFLIGHT_TIMEOUT_S) -> PreflightReport:
    """Check the models of one endpoint (same base URL, key and headers) with one `/models`
    request, or a 1-token chat request per model when the server has no `/models`."""
    report = PreflightReport()
    first = specs[0]
    url = base_url_of(first)
    where = f"model `{first.name}` at {url}"
    client = openai.OpenAI(
        api_key=first.api_key(),
        base_url=url,
        max_retries=0,
        timeout=timeout_s,
        default_headers=first.header_values(),
    )
    with client:
        try:
            listed = _list_models(client)
            if listed is None:
                for spec in {s.model: s for s in specs}.values():
                    if problem := _ping(client, spec):
                        report.problems.append(f"model `{spec.name}` at {url}: {problem}")
                return report
        except openai.APIStatusError as exc:
            report.problems.append(f"{where}: {_key_problem(first, exc)}")
            return report
        except openai.APIConnectionError as exc:
            report.problems.append(f"{where}: {connection_problem(exc, url, timeout_s)}")
            return report
    for spec in specs:
        if spec.model not in listed:
            shown = ", ".join(f"`{i}`" for i in listed[:_LISTED_SHOWN]) + ("…" if len(listed) > _LISTED_SHOWN else "")
            lists = f"it lists {shown}" if listed else "it lists none"
            report.warnings.append(
                f"model `{spec.name}` at {url}: the server's /models does not list `{spec.model}` ({lists}); "
                "going on, since some servers list only part of what they serve"
            )
    return report


def preflight(specs: list[ModelSpec], timeout_s: float = PREFLIGHT_TIMEOUT_S) -> PreflightReport:
    """Check every distinct endpoint of `specs` once (built-in models need none)."""
    groups: dict[tuple, list[ModelSpec]] = {}
    for spec in specs:
        if spec.builtin:
            continue
        key = (base_url_of(spec), spec.api_key_env, tuple(sorted(spec.extra_headers.items())))
        groups.setdefault(key, []).append(spec)
    report = PreflightReport()
    for group in groups.values():
        found = check_endpoint(group, timeout_s)
        report.problems += found.problems
        report.warnings += found.warnings
    return report
