"""What the commands that run work on a suite (run, tasks validate, evaluate, gather) set up
before the work: the suite with each task that did not load reported, the tasks `--strict-env`
keeps, and the sandbox backend this process works with.
Lines for the user go to `err`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from evalkit.errors import EvalkitError, SandboxError

if TYPE_CHECKING:
    from rich.console import Console

    from evalkit.sandbox.protocol import SandboxBackend
    from evalkit.tasks import Suite
    from evalkit.tasks.model import Task


def load_reported(suite_path: Path, skip_invalid: bool, verb: str, err: Console) -> Suite:
    """The suite; each task that did not load is one line (file and reason). Unless `skip_invalid`,
    any such task stops the command (exit 2) with a line saying `--skip-invalid` would `verb` the rest."""
    from evalkit.tasks import load_suite

    suite = load_suite(suite_path)
    label = "[yellow]skipped[/]" if skip_invalid else "[red]invalid task[/]"
    for skipped in suite.skipped:
        err.print(f"{label} {escape(str(skipped))}", highlight=False, soft_wrap=True)
    if not suite.tasks:
        raise EvalkitError(f"{suite_path}: no usable task")
    if suite.skipped and not skip_invalid:
        count = len(suite.skipped)
        raise EvalkitError(
            f"{count} of the {suite.total} tasks of {suite_path} cannot be loaded (above); fix "
            f"{'it' if count == 1 else 'them'}, or pass --skip-invalid to {verb} the other {len(suite.tasks)}"
        )
    return suite


def strict_env_kept(tasks: list[Task], strict: bool, err: Console) -> list[Task]:
    """The tasks `--strict-env` keeps; each refused one is a line. None left is a user error."""
    if not strict:
        return tasks
    from evalkit.sandbox.env_choice import strict_environments

    kept, refused = strict_environments(tasks)
    for line in refused:
        err.print(f"[yellow]refused[/] {escape(line)}", highlight=False, soft_wrap=True)
    if not kept:
        raise EvalkitError("--strict-env refused every selected task (their Python has no offline base)")
    return kept


def driver_backend(
    run_id: str, name: str, *, remote: bool = False, registry: str | None = None, log: Callable[[str], None]
) -> SandboxBackend:
    """The backend this process works with. The driver of a cluster run (`remote`) without a
    registry only builds workspaces (the nodes open `name`'s sandboxes), so it needs no engine;
    with a registry it builds and pushes the images, and says so when it has no engine."""
    from evalkit.sandbox.backend_table import open_backend

    if remote and registry is None:
        from evalkit.sandbox.workspace_backend import WorkspaceBackend

        return WorkspaceBackend(run_id)
    try:
        return open_backend(name, run_id, log=log)
    except SandboxError as exc:
        if registry is None:
            raise
        raise SandboxError(f"--registry {registry}: this machine builds and pushes the images, and {exc}") from None
