"""Model endpoints: which OpenAI-compatible server a model name means, and how to sample it.

A `--model NAME` resolves, in order, to: a `[models.NAME]` entry of `evalkit.toml`; a built-in
policy (`oracle`, `null`, `replay:FILE`) served in-process on 127.0.0.1; or NAME itself at
`--base-url` / `OPENAI_BASE_URL` (the SDK's default otherwise), with the key read from
`--api-key-env` / `OPENAI_API_KEY`.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import EvalkitError

BUILTIN_POLICIES = ("oracle", "null")
REPLAY_PREFIX = "replay:"
DEFAULT_CONFIG = Path("evalkit.toml")
NO_KEY = "not-needed"  # local servers (vLLM, llama.cpp, Ollama) ignore the key, the SDK wants one


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

    def api_key(self) -> str:
        """The key, read at call time so it is never stored with results."""
        if self.builtin:
            return NO_KEY
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EvalkitError(f"model `{self.name}`: environment variable {self.api_key_env} is not set")
            return key
        return os.environ.get("OPENAI_API_KEY") or NO_KEY

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def public(self) -> dict:
        """What is recorded with each attempt (no key, only the variable's name)."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["base_url"] = (
            "built-in, in-process on 127.0.0.1"
            if self.builtin
            else self.resolved_base_url() or "https://api.openai.com/v1"
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
) -> ModelSpec:
    """The ModelSpec a `--model NAME` means (see the module docstring for the order)."""
    sampling = sampling or Sampling()
    if name in config:
        entry = dict(config[name])
        if not isinstance(entry, dict):
            raise EvalkitError(f"{config_path}: [models.{name}] must be a table")
        entry.setdefault("model", name)
        entry_sampling = {k: entry.pop(k) for k in list(entry) if k in Sampling.model_fields}
        merged = {**entry_sampling, **sampling.request_kwargs()}
        try:
            return ModelSpec(name=name, sampling=Sampling(**merged), **entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(map(str, first["loc"]))
            raise EvalkitError(f"{config_path}: [models.{name}] {field}: {first['msg']}") from None
    if name in BUILTIN_POLICIES:
        return ModelSpec(name=name, model=name, builtin=name, sampling=sampling, max_retries=0)
    if name.startswith(REPLAY_PREFIX):
        path = Path(name[len(REPLAY_PREFIX) :])
        if not path.exists():
            raise EvalkitError(f"--model {name}: no trajectory file or folder at {path}")
        return ModelSpec(name=name, model=name, builtin="replay", replay_path=path, sampling=sampling, max_retries=0)
    return ModelSpec(name=name, model=name, base_url=base_url, api_key_env=api_key_env, sampling=sampling)
