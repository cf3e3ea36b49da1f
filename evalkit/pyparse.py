"""Python source to a syntax tree, one thread at a time.

CPython 3.11 counts the depth of the tree it is building in state shared by every thread, so two
threads parsing at once (attempts score side by side) can fail with "SystemError: AST constructor
recursion depth mismatch" (python/cpython#106905; seen here in `make test`, an attempt lost to a
sandbox error). Every parse of evalkit's host code goes through here."""

from __future__ import annotations

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse_python(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, serialised across threads (the trees are built in microseconds to milliseconds)."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename=filename, mode=mode)
