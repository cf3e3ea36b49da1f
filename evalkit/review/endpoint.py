"""The reviewer by name: a model of evalkit.toml or an endpoint's model id, as for `--model`, or
`scripted-reviewer`, the built-in checklist (scripted.py) served on 127.0.0.1 by evalkit's own
server for as long as its client is used, so that it goes the real endpoint's way (HTTP, the
SDK, tool calls). A name is resolved (`choose_reviewer`) before anything runs, so that a wrong
one is one line at once, never a failure after the attempts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec, resolve_model
from evalkit.models.server import ModelServer
from evalkit.review.reviewer import DEFAULT_MAX_TURNS
from evalkit.review.scripted import ScriptedReviewer
from evalkit.review.verdict import ReviewMode

SCRIPTED_REVIEWER = "scripted-reviewer"
MODES = ("agentic", "no-tools")


@dataclass(frozen=True)
class ReviewerChoice:
    """A reviewer as the user named it, resolved: `spec` None is the scripted reviewer."""

    name: str
    mode: ReviewMode = "agentic"
    max_turns: int = DEFAULT_MAX_TURNS
    spec: ModelSpec | None = None


def choose_reviewer(
    name: str,
    models_config: dict,
    config_path: Path,
    mode: str = "agentic",
    max_turns: int = DEFAULT_MAX_TURNS,
    option: str = "--reviewer",
) -> ReviewerChoice:
    """The reviewer `name` resolved, or one line naming `option` and what to do."""
    if mode not in MODES:
        raise EvalkitError(f"{option}-mode {mode}: choose {' or '.join(MODES)}")
    if name == SCRIPTED_REVIEWER:
        return ReviewerChoice(name, mode, max_turns)  # type: ignore[arg-type]  # checked above
    spec = resolve_model(name, models_config, config_path=config_path)
    if spec.builtin:
        raise EvalkitError(
            f"{option} {name}: a built-in agent policy cannot review code; name a model or {SCRIPTED_REVIEWER}"
        )
    return ReviewerChoice(name, mode, max_turns, spec)  # type: ignore[arg-type]


@contextmanager
def reviewer_client(choice: ReviewerChoice) -> Iterator[ChatClient]:
    """A client for the reviewer, closed (and the built-in's server stopped) on exit."""
    if choice.spec is not None:
        client = ChatClient(choice.spec)
        try:
            yield client
        finally:
            client.close()
        return
    with ModelServer({choice.name: ScriptedReviewer()}) as server:
        client = ChatClient(ModelSpec(name=choice.name, model=choice.name, base_url=server.base_url, max_retries=0))
        try:
            yield client
        finally:
            client.close()
