"""Errors a user can act on: one line saying what, where and what to do."""

from __future__ import annotations

from collections.abc import Iterator


class EvalkitError(Exception):
    """A problem with the user's input or machine setup; the CLI prints it as one line, no traceback."""


class SetupError(EvalkitError):
    """The machine or the options fail every item alike (no CA bundle, no package index): a command
    over many items (commits, rows, predictions) stops on it instead of blaming each item."""


class SandboxError(EvalkitError):
    """The sandbox backend failed (engine gone, image missing, container removed)."""


def causes(error: BaseException) -> Iterator[BaseException]:
    """`error`, then what it was raised from or during (`__cause__`, else `__context__`), each once:
    where a library wraps an OS error (refused, unresolvable, timed out) several layers down."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
