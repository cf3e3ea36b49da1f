"""The reviewer's client by name: a model of evalkit.toml or an endpoint's model id, as for
`--model`, or `scripted-reviewer`, the built-in checklist (scripted.py) served on 127.0.0.1 by
evalkit's own server for as long as the client is used, so that it goes the real endpoint's way
(HTTP, the SDK, tool calls)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec, resolve_model
from evalkit.models.server import ModelServer
from evalkit.review.scripted import ScriptedReviewer

SCRIPTED_REVIEWER = "scripted-reviewer"


@contextmanager
def reviewer_client(
    name: str, models_config: dict, config_path: Path, option: str = "--reviewer"
) -> Iterator[ChatClient]:
    """A client for reviewer `name`, closed (and the built-in's server stopped) on exit."""
    if name == SCRIPTED_REVIEWER:
        with ModelServer({name: ScriptedReviewer()}) as server:
            client = ChatClient(ModelSpec(name=name, model=name, base_url=server.base_url, max_retries=0))
            try:
                yield client
            finally:
                client.close()
        return
    spec = resolve_model(name, models_config, config_path=config_path)
    if spec.builtin:
        raise EvalkitError(
            f"{option} {name}: a built-in agent policy cannot review code; name a model or {SCRIPTED_REVIEWER}"
        )
    client = ChatClient(spec)
    try:
        yield client
    finally:
        client.close()
