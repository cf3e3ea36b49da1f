"""Pydantic's validation errors as plain lines a task author can act on.

Pydantic says "Extra inputs are not permitted" and "Input should be a valid number, unable to
parse string as a number"; a person editing task.toml needs the key, what is allowed there and
what was found: "unknown key `tests.timeout`; allowed: command, fail_to_pass, ..." and
"`tests.timeout_s`: expected a number, got 'abc'".
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

MAX_SHOWN = 40  # characters of a bad value quoted back
MAX_LINES = 3  # problems named per task; the rest counted

# pydantic error type → what was expected, for the "expected X, got Y" lines
_EXPECTED = {
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "path_type": "a path",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _model_at(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The pydantic model that holds the keys at `loc` (None when it is not a model)."""
    for part in loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        candidates = getattr(annotation, "__args__", (annotation,))
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return model


def plain_line(error: Any, model: type[BaseModel] | None = None, top_keys: Sequence[str] | None = None) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as a plain sentence; `model`
    (the validated model) lets an unknown key list the keys allowed beside it; `top_keys`, when
    given, are the keys a person may write at the top (the file's view, not the model's)."""
    loc = tuple(error.get("loc", ()))
    kind = error.get("type", "")
    where = f"`{_dotted(loc)}`" if loc else "the task"
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        holder = _model_at(model, loc[:-1])
        keys = list(top_keys) if top_keys is not None and len(loc) == 1 else holder and list(holder.model_fields)
        if not keys:
            return f"unknown key {where}"
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        return f"unknown key {where}{hint}; allowed: {', '.join(keys)}"
    if kind == "missing":
        return f"missing key {where}"
    if kind in _EXPECTED:
        return f"{where}: expected {_EXPECTED[kind]}, got {_shown(value)}"
    if kind == "literal_error":
        return f"{where}: expected {ctx.get('expected', 'one of the allowed values')}, got {_shown(value)}"
    if kind == "too_short":
        return f"{where}: must not be empty" if ctx.get("min_length") == 1 else f"{where}: too short"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bound = {"greater_than": "more than", "greater_than_equal": "at least", "less_than": "less than"}
        limit = next(iter(ctx.values()), "?")
        return f"{where}: must be {bound.get(kind, 'at most')} {limit}, got {_shown(value)}"
    if kind == "string_pattern_mismatch":
        if loc == ("id",):
            rule = "may hold only letters, digits, '.', '_' and '-', starting with a letter or digit"
            return f"`id`: {_shown(value)} {rule}"
        return f"{where}: {_shown(value)} does not match {ctx.get('pattern', 'the expected form')}"
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{where}: {message[:1].lower()}{message[1:]}"


def plain_lines(
    exc: ValidationError, model: type[BaseModel] | None = None, top_keys: Sequence[str] | None = None
) -> list[str]:
    """Every error of `exc` as a plain sentence; unknown keys first, since a misspelt key is
    usually also why a required one is missing."""
    errors = sorted(exc.errors(), key=lambda error: error.get("type") != "extra_forbidden")
    return [plain_line(error, model, top_keys) for error in errors]


def plain_summary(
    exc: ValidationError, model: type[BaseModel] | None = None, top_keys: Sequence[str] | None = None
) -> str:
    """The errors as one line: the first MAX_LINES joined by "; ", the rest counted."""
    lines = plain_lines(exc, model, top_keys)
    more = f" (+{len(lines) - MAX_LINES} more)" if len(lines) > MAX_LINES else ""
    return "; ".join(lines[:MAX_LINES]) + more
