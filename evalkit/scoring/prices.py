"""Token prices: a pinned table shipped with evalkit (`prices.toml`), extended or overridden by
`[prices."MODEL"]` tables in evalkit.toml. A model is looked up by its API id, then by its run
name; replays of recorded trajectories cost nothing (the tokens were paid when recorded).

A simulated user's model (`--user-model`) is priced the same way, by its run name, and its cost is
kept apart from the agent's (`user_price_for`); the built-in `oracle-user` calls no model and costs
nothing."""

from __future__ import annotations

import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import EvalkitError


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(..., ge=0)
    output: float = Field(..., ge=0)
    cached_input: float | None = Field(None, ge=0, description="Default: the input price.")

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int) -> float:
        cached = min(cached_tokens, prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((prompt_tokens - cached) * self.input + cached * cached_price + completion_tokens * self.output) / 1e6


def _parse(table: object, where: str) -> dict[str, Price]:
    if not isinstance(table, dict):
        raise EvalkitError(f'{where}: `prices` must be a table of [prices."MODEL"] entries')
    prices = {}
    for model, entry in table.items():
        try:
            prices[model] = Price.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(map(str, first["loc"]))
            raise EvalkitError(f'{where}: [prices."{model}"] {field}: {first["msg"]}') from None
    return prices


def pinned_prices() -> dict[str, Price]:
    text = resources.files("evalkit.scoring").joinpath("prices.toml").read_text()
    return _parse(tomllib.loads(text)["prices"], "evalkit/scoring/prices.toml")


def price_table(overrides: object | None = None, where: str = "evalkit.toml") -> dict[str, Price]:
    """The pinned prices with the user's `[prices]` entries on top."""
    table = pinned_prices()
    if overrides:
        table.update(_parse(overrides, where))
    return table


def price_for(table: dict[str, Price], model_id: str, name: str) -> Price | None:
    if name.startswith("replay:"):
        return Price(input=0, output=0)
    return table.get(model_id) or table.get(name)


FREE_USERS = frozenset({"oracle-user"})  # built-in simulators that call no model


def user_price_for(table: dict[str, Price], user_model: str | None) -> Price | None:
    """The price of a simulated user's model (None: no user, or no price for its model)."""
    if user_model is None:
        return None
    if user_model in FREE_USERS:
        return Price(input=0, output=0)
    return price_for(table, user_model, user_model)
