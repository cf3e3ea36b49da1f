"""`evalkit sandbox`: build the base sandbox image and prune leftover containers."""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli.common import console, err_console, sandbox_app
from evalkit.wording import counted


@sandbox_app.command("build-base")
def sandbox_build_base(
    tag: Annotated[
        str | None, typer.Option(help="Image tag (default: evalkit/base:latest, or evalkit/base-SUITE:latest).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even if present.")] = False,
    offline: Annotated[bool, typer.Option(help="Skip the registry; use debootstrap.")] = False,
    mirror: Annotated[str | None, typer.Option(help="Debian mirror for debootstrap (default: the host's).")] = None,
    suite: Annotated[
        str | None,
        typer.Option(help="Build the Python base of a Debian suite: bullseye (3.9), bookworm (3.11), trixie (3.13)."),
    ] = None,
) -> None:
    """Build the base sandbox image (from a registry if one answers, else debootstrap + docker import)."""
    from evalkit.sandbox.backend_table import maintenance

    log = lambda line: err_console.print(line, highlight=False)  # noqa: E731
    tag = maintenance("build-base")(tag, force=force, offline=offline, mirror=mirror, suite=suite, log=log)
    console.print(f"base image ready: {tag}")


@sandbox_app.command("prune")
def sandbox_prune(
    run_id: Annotated[str | None, typer.Option(help="Only this run's containers.")] = None,
    live_too: Annotated[
        bool, typer.Option("--all", help="Also the containers of evalkit processes still running (their runs fail).")
    ] = False,
) -> None:
    """Remove evalkit containers (and networks) left behind by dead processes (of every run, or of one)."""
    from evalkit.sandbox.backend_table import maintenance

    result = maintenance("prune")(run_id, live_too)
    for container in result.removed:
        console.print(f"removed {container.id} (run {container.run_id}, task {container.task_id})")
    console.print(f"{counted(len(result.removed), 'container')} removed")
    if result.networks:
        console.print(f"{counted(result.networks, 'network')} removed (proxied sandboxes')")
    if result.kept:
        runs = ", ".join(sorted({c.run_id for c in result.kept}))
        console.print(
            f"{counted(len(result.kept), 'container')} of running evalkit processes kept (runs: {runs}); "
            "--all removes them too"
        )
