"""The `evalkit` command line: importing the command modules registers their commands on `app`."""

# Import order is registration order, which is the order `evalkit --help` lists commands in.
from evalkit.cli import tasks, evaluate, run, integrity, gather, report, reviewer, sandbox  # noqa: F401, I001
from evalkit.cli.common import app, main

__all__ = ["app", "main"]
