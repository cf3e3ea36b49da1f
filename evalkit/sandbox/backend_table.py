"""Sandbox backends by name, for `--backend NAME`: a name → (module, class) table imported only
when the backend is opened, so the command line and its help stay light (docker is loaded by the
`docker` backend, not by naming it).

Adding a backend is one row here: a class meeting the core `SandboxBackend` (protocol.py: a
`connect(run_id, log)` classmethod, `open`, `workspace`, `close`) and whichever optional
capabilities it has; tests/integration/test_backend_conformance.py runs on it.

`MAINTENANCE` names the Docker backend's upkeep behind `evalkit sandbox build-base` and
`evalkit sandbox prune` the same way, so that nothing outside evalkit/sandbox/docker/ imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalkit.lazy_table import Table, known, load

if TYPE_CHECKING:
    from evalkit.sandbox.protocol import SandboxBackend

DEFAULT_BACKEND = "docker"

BACKENDS: Table = {
    "docker": ("evalkit.sandbox.docker.backend", "DockerBackend"),
}

# `evalkit sandbox COMMAND` → the function doing it (Docker's: these commands have no --backend)
MAINTENANCE: Table = {
    "build-base": ("evalkit.sandbox.docker.maintenance", "build_base"),
    "prune": ("evalkit.sandbox.docker.maintenance", "prune_leftovers"),
}


def check_backend_name(name: str) -> str:
    """`name` when a backend has it, else one line naming the known ones."""
    return known(BACKENDS, name, "backend")


def open_backend(name: str, run_id: str, log: Callable[[str], None] = lambda line: None) -> SandboxBackend:
    """The backend called `name`, connected and owning run `run_id`; `log` hears what it did on
    the way (orphans of dead runs removed)."""
    return load(BACKENDS, name, "backend").connect(run_id, log)


def maintenance(command: str) -> Callable[..., Any]:
    """The function behind `evalkit sandbox COMMAND`, its module imported now."""
    return load(MAINTENANCE, command, "sandbox command")
