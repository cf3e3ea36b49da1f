"""Child processes a test interrupts with SIGINT, as a person's Ctrl-C would.

A shell that starts a job in the background (`make test &`, a CI step detached with `&`) makes it
ignore SIGINT, and every child inherits that; Python then never installs its Ctrl-C handler, so a
test's SIGINT would do nothing. The child gets the default disposition back before it starts."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interruptible(args: list[Any], **kwargs: Any) -> subprocess.Popen:
    """`subprocess.Popen(args, **kwargs)` whose child answers SIGINT whatever this process ignores."""
    return subprocess.Popen(args, preexec_fn=_default_sigint, **kwargs)
