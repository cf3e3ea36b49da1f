"""Name → (module, attribute) tables, the shape of every pluggable part (backends, agents): the
module is imported only when its name is asked for, so naming a part on the command line, or
asking for `--help`, loads none of them."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from evalkit.errors import EvalkitError

Table = dict[str, tuple[str, str]]


def known(table: Table, name: str, kind: str) -> str:
    """`name` when the table has it, else one line naming the known ones (`kind`: "backend")."""
    if name not in table:
        raise EvalkitError(f"unknown {kind} {name!r}; known {kind}s: {', '.join(sorted(table))}")
    return name


def load(table: Table, name: str, kind: str) -> Any:
    """The attribute `name` stands for, its module imported now."""
    module, attribute = table[known(table, name, kind)]
    return getattr(import_module(module), attribute)
