"""The Docker backend's own upkeep, for `evalkit sandbox build-base` and `evalkit sandbox prune`:
reached by the command line through `MAINTENANCE` in evalkit/sandbox/backend_table.py, so that the
command line names Docker only as a string."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.sandbox.docker.backend import docker_client
from evalkit.sandbox.docker.containers import PruneResult, prune
from evalkit.sandbox.docker.images import BASE_IMAGE, build_base_image
from evalkit.sandbox.python_bases import base_for_suite


def build_base(
    tag: str | None, *, force: bool, offline: bool, mirror: str | None, suite: str | None, log: Callable[[str], None]
) -> str:
    """The base sandbox image (of a Debian `suite`'s Python, or the default), built unless present
    (or `force`); its tag."""
    python_base = base_for_suite(suite) if suite is not None else None
    tag = tag or (python_base.image if python_base else BASE_IMAGE)
    build_base_image(
        docker_client(), tag, force=force, offline=offline, mirror=mirror, python_base=python_base, log=log
    )
    return tag


def prune_leftovers(run_id: str | None, live_too: bool) -> PruneResult:
    """The evalkit containers (and networks) left by dead processes, of every run or of `run_id`,
    removed; `live_too`: those of running processes as well."""
    return prune(docker_client(), run_id, live_too)
