"""Executors by name, for `--executor NAME`: a name → (module, class) table imported only when the
executor is opened, so naming one loads nothing (Ray is imported by the `ray` executor only).

Adding an executor is one row here: a class with a `connect(address)` classmethod returning an
`Executor` (executor.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.lazy_table import Table, known, load

if TYPE_CHECKING:
    from evalkit.runs.executor import Executor

DEFAULT_EXECUTOR = "local"

EXECUTORS: Table = {
    "local": ("evalkit.runs.local_executor", "LocalExecutor"),
    "ray": ("evalkit.runs.ray_executor", "RayExecutor"),
}

ADDRESSED = {"ray"}  # executors that take --ray-address


def check_executor_name(name: str) -> str:
    """`name` when an executor has it, else one line naming the known ones."""
    return known(EXECUTORS, name, "executor")


def open_executor(name: str, address: str | None = None) -> Executor:
    """The executor called `name`, attached to the cluster at `address` (None: its default)."""
    check_executor_name(name)
    if address is not None and name not in ADDRESSED:
        raise EvalkitError(f"--ray-address {address}: give it with --executor ray, not --executor {name}")
    return load(EXECUTORS, name, "executor").connect(address)
