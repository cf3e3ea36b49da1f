"""Model endpoints: which OpenAI-compatible server a model name means, and how to sample it.

A `--model NAME` resolves, in order, to: a `[models.NAME]` entry of `evalkit.toml`; a built-in
policy (`oracle`, `null`, `replay:FILE`) served in-process on 127.0.0.1; or NAME itself at
`--base-url` / `OPENAI_BASE_URL` (the SDK's default otherwise), with the key read from
`--api-key-env` / `OPENAI_API_KEY`.

Endpoint knobs (tool_choice, reasoning, stop, extra_body, streaming, ...) live on the ModelSpec so
that they are validated once, recorded with every attempt through `public()`, and turned into the
request by `models/request.py`.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit.cutoff import cutoff_text
from evalkit.errors import EvalkitError
from evalkit.plain_errors import plain_summary

BUILTIN_POLICIES = ("oracle", "null")
REPLAY_PREFIX = "replay:"
DEFAULT_CONFIG = Path("evalkit.toml")
NO_KEY = "not-needed"  # local servers (vLLM, llama.cpp, Ollama) ignore the key, the SDK wants one
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the openai SDK's own default
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
TOOL_CHOICES = ("auto", "required", "none")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Keys of the body evalkit itself sets: an extra_body overriding them would silently change the run.
RESERVED_BODY_KEYS = frozenset({"model", "messages", "tools", "stream", "stream_options"})
# How to talk to an endpoint, beside sampling (most are also `evalkit run` flags); built-in policies
# ignore them.
ENDPOINT_KNOBS = (
    "tool_choice",
    "parallel_tool_calls",
    "reasoning_effort",
    "reasoning",
    "max_completion_tokens",
    "stop",
    "extra_body",
    "extra_headers",
    "stream",
    "max_connections",
)


class Sampling(BaseModel):
    """Sampling parameters sent with every request (None: the server's default) and recorded."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, gt=0, description="Completion tokens per request.")
    seed: int | None = None

    def request_kwargs(self) -> dict:
        return self.model_dump(exclude_none=True)


class ModelSpec(BaseModel):
    """One named model: an endpoint, an API model id, a key's environment variable and sampling."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., description="The name results are recorded under.")
    model: str = Field(..., description="Model id sent to the API.")
    base_url: str | None = Field(None, description="None: OPENAI_BASE_URL, else the SDK's default.")
    api_key_env: str | None = Field(None, description="Environment variable holding the key.")
    builtin: Literal["oracle", "null", "replay"] | None = None
    replay_path: Path | None = None
    sampling: Sampling = Field(default_factory=Sampling)
    request_timeout_s: float = Field(300, gt=0)
    max_retries: int = Field(6, ge=0, description="Retries of one request on 429, 5xx, timeouts.")
    retry_base_s: float = Field(1.0, gt=0, description="First backoff; doubles each retry (capped at 60 s).")
    tool_choice: str | None = Field(None, description="auto, required, none, or the one tool the model must call.")
    parallel_tool_calls: bool | None = None
    reasoning_effort: str | None = Field(None, min_length=1, max_length=32)
    reasoning: bool = Field(
        False, description="A reasoning model: no temperature/top_p/max_tokens; max_completion_tokens instead."
    )
    max_completion_tokens: int | None = Field(None, gt=0, description="Sent as max_completion_tokens, per request.")
    stop: list[str] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Passed verbatim at the body's top level.")
    extra_headers: dict[str, str] = Field(
        default_factory=dict, description="Header name -> environment variable holding its value (read per call)."
    )
    stream: bool = False
    max_connections: int | None = Field(None, ge=1, description="Requests in flight to this endpoint at once.")
    on_text: Literal["nudge", "stop"] = Field("nudge", description="A reply with no tool call: remind, or stop.")
    max_nudges: int = Field(3, ge=0, description="Reminders per attempt before a plain-text reply ends it.")
    tool_call_format: Literal["native", "text"] = Field(
        "native", description="`text`: also run tool calls written into the reply's text (<tool_call> blocks)."
    )
    knowledge_cutoff: str | None = Field(
        None, description="Training cutoff, 2025-06 or 2025-06-15: reports split the tasks committed after it."
    )

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice(cls, value: str | None) -> str | None:
        if value is not None and value not in TOOL_CHOICES and not _TOOL_NAME.match(value):
            raise ValueError("must be auto, required, none or a tool name")
        return value

    @field_validator("knowledge_cutoff", mode="before")
    @classmethod
    def _knowledge_cutoff(cls, value: object) -> str | None:
        return None if value is None else cutoff_text(value)  # a TOML date (2025-06-15 unquoted) too

    @field_validator("stop")
    @classmethod
    def _stop(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not all(value)):
            raise ValueError("must be a non-empty list of non-empty strings")
        return value

    @field_validator("extra_body")
    @classmethod
    def _extra_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(RESERVED_BODY_KEYS & value.keys())
        if clash:
            raise ValueError(f"{', '.join(clash)} is set by evalkit, not by extra_body")
        return value

    @field_validator("extra_headers")
    @classmethod
    def _extra_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for header, variable in value.items():
            if not _HEADER_NAME.match(header):
                raise ValueError(f"`{header}` is not a valid header name")
            if not _ENV_NAME.match(variable):
                raise ValueError(f"`{header}`: the value names an environment variable, `{variable}` is not one")
        return value

    def api_key(self) -> str:
        """The key, read at call time so it is never stored with results."""
        if self.builtin:
            return NO_KEY
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EvalkitError(f"model `{self.name}`: environment variable {self.api_key_env} is not set")
            return key
        return os.environ.get(DEFAULT_KEY_ENV) or NO_KEY

    def key_variable(self) -> str:
        """The environment variable the key is read from."""
        return self.api_key_env or DEFAULT_KEY_ENV

    def header_values(self) -> dict[str, str]:
        """The extra headers with their values, read from the environment at call time (never stored)."""
        values = {}
        for header, variable in self.extra_headers.items():
            value = os.environ.get(variable)
            if not value:
                raise EvalkitError(f"model `{self.name}`: environment variable {variable} (header {header}) is not set")
            values[header] = value
        return values

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def public(self) -> dict:
        """What is recorded with each attempt: no key and no header value, only variable names."""
        data = self.model_dump(mode="json", exclude_none=True)
        for empty in ("extra_body", "extra_headers"):
            if not data[empty]:
                del data[empty]
        data["base_url"] = (
            "built-in, in-process on 127.0.0.1"
            if self.builtin
            else self.resolved_base_url() or DEFAULT_BASE_URL
        )
        return data


def load_config(path: Path | None) -> dict:
    """The whole evalkit.toml (or `path`): `[models]`, `[scoring]`, `[prices]`; a missing default
    file is an empty config, a missing named one an error."""
    path = path or DEFAULT_CONFIG
    if not path.exists():
        if path != DEFAULT_CONFIG:
            raise EvalkitError(f"{path}: no such config file")
        return {}
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise EvalkitError(f"{path}: not valid TOML ({exc})") from None


def read_config(path: Path | None) -> dict:
    """The `[models.*]` tables of evalkit.toml (or of `path`)."""
    return models_table(load_config(path), path or DEFAULT_CONFIG)


def models_table(data: dict, path: Path) -> dict:
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise EvalkitError(f"{path}: `models` must be a table of [models.NAME] entries")
    return models


def resolve_model(
    name: str,
    config: dict,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    sampling: Sampling | None = None,
    config_path: Path = DEFAULT_CONFIG,
    knobs: dict | None = None,
) -> ModelSpec:
    """The ModelSpec a `--model NAME` means (see the module docstring for the order). `sampling`
    and `knobs` (ENDPOINT_KNOBS given on the command line; None: unset) override the config;
    built-in policies take the sampling but no knob, since they are no model server."""
    sampling = sampling or Sampling()
    knobs = {k: v for k, v in (knobs or {}).items() if v is not None}
    if unknown := sorted(set(knobs) - set(ENDPOINT_KNOBS)):
        raise EvalkitError(f"not endpoint options: {', '.join(unknown)}")
    if name in config:
        entry = config[name]
        if not isinstance(entry, dict):
            raise EvalkitError(f"{config_path}: [models.{name}] must be a table")
        entry = dict(entry)
        entry.setdefault("model", name)
        entry_sampling = {k: entry.pop(k) for k in list(entry) if k in Sampling.model_fields}
        merged = {**entry_sampling, **sampling.request_kwargs()}
        if sampling.max_tokens is not None and entry.get("max_completion_tokens") is not None:
            entry["max_completion_tokens"] = sampling.max_tokens  # --max-completion-tokens beats the file
        try:
            spec = ModelSpec(name=name, sampling=Sampling(**merged), **entry)
        except ValidationError as exc:
            raise EvalkitError(f"{config_path}: [models.{name}] {plain_summary(exc, ModelSpec, CONFIG_KEYS)}") from None
        return with_knobs(spec, knobs)
    if name in BUILTIN_POLICIES:
        return ModelSpec(name=name, model=name, builtin=name, sampling=sampling, max_retries=0)
    if name.startswith(REPLAY_PREFIX):
        path = Path(name[len(REPLAY_PREFIX) :])
        if not path.exists():
            raise EvalkitError(f"--model {name}: no trajectory file or folder at {path}")
        return ModelSpec(name=name, model=name, builtin="replay", replay_path=path, sampling=sampling, max_retries=0)
    spec = ModelSpec(name=name, model=name, base_url=base_url, api_key_env=api_key_env, sampling=sampling)
    return with_knobs(spec, knobs)


# the keys of a [models.NAME] table: the spec's own, but for those evalkit fills in, and the sampling ones
CONFIG_KEYS = [k for k in ModelSpec.model_fields if k not in {"name", "builtin", "replay_path", "sampling"}] + list(
    Sampling.model_fields
)


def with_knobs(spec: ModelSpec, knobs: dict) -> ModelSpec:
    """`spec` with command-line knobs, validated like the config; an error names the option."""
    if not knobs:
        return spec
    try:
        return ModelSpec.model_validate({**spec.model_dump(), **knobs})
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--" + str(first["loc"][0]).replace("_", "-")
        raise EvalkitError(f"{option}: {first['msg']}") from None
