"""Sandbox backends by name, for `--backend NAME`: a name → (module, class) table imported only
when the backend is opened, so the command line and its help stay light (docker is loaded by the
`docker` backend, not by naming it).

Adding a backend is one row here: a class with a `connect(run_id, log)` classmethod returning a
`SandboxBackend` (protocol.py), and tests/integration/test_backend_conformance.py runs on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from evalkit.lazy_table import Table, known, load

if TYPE_CHECKING:
    from evalkit.sandbox.protocol import SandboxBackend

DEFAULT_BACKEND = "docker"

BACKENDS: Table = {
    "docker": ("evalkit.sandbox.backend", "DockerBackend"),
}


def check_backend_name(name: str) -> str:
    """`name` when a backend has it, else one line naming the known ones."""
    return known(BACKENDS, name, "backend")


def open_backend(name: str, run_id: str, log: Callable[[str], None] = lambda line: None) -> SandboxBackend:
    """The backend called `name`, connected and owning run `run_id`; `log` hears what it did on
    the way (orphans of dead runs removed)."""
    return load(BACKENDS, name, "backend").connect(run_id, log)
