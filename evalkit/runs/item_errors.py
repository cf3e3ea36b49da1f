"""Whose fault an error is, for commands over many items (gather's commits, evaluate's predictions).

An odd item (a commit whose files break a parser, a prediction that is not a diff) must cost that
item alone: its error is recorded against it and the command goes on. Only what fails every item
alike stops the command: the Docker engine gone, a cluster node lost (retried later, not blamed on
the item), the machine's disk, a missing option such as the CA bundle (`SetupError`).
"""

from __future__ import annotations

import errno
from collections.abc import Callable

from evalkit.errors import EvalkitError, SetupError
from evalkit.runs.executor import NodeFailure
from evalkit.sandbox.engine_watch import EngineUnavailable

_MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EMFILE, errno.ENFILE, errno.ENOMEM})


def fails_every_item(error: BaseException, engine_unreachable: Callable[[BaseException], bool]) -> bool:
    """The error is the machine's, the engine's (as its backend's `engine_of(backend).unreachable`
    judges it), the cluster's or the options', not one item's."""
    if not isinstance(error, Exception) or isinstance(error, SetupError | EngineUnavailable | NodeFailure):
        return True
    if isinstance(error, OSError) and error.errno in _MACHINE_ERRNOS:
        return True
    return engine_unreachable(error)


def item_error_line(error: BaseException) -> str:
    """The error as one line: evalkit's own message, else the exception's type and first line (the
    type says where to look when it is a bug)."""
    text = str(error).strip()
    first = text.splitlines()[0][:200] if text else ""
    if isinstance(error, EvalkitError):
        return first or type(error).__name__
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
