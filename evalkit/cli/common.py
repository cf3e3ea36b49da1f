"""The Typer apps, consoles and helpers the command modules share; `main` is the entry point.

Start-up stays light: this module and the command modules import only typer, rich and evalkit's
light modules at the top; what a command needs (docker, openai, pandas, scipy, the task models) is
imported inside it, so `evalkit --help` or a mistyped option answers at once
(tests/unit/test_cli_startup.py, benchmarks/cli_startup.py).
"""

from __future__ import annotations

import re
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from evalkit.errors import EvalkitError
from evalkit.files import check_run_id
from evalkit.runs.executor_table import EXECUTORS, check_executor_name
from evalkit.sandbox.backend_table import BACKENDS, DEFAULT_BACKEND, check_backend_name

if TYPE_CHECKING:
    from rich.progress import Progress

    from evalkit.sandbox.protocol import SandboxBackend
    from evalkit.tasks import Suite
    from evalkit.tasks.model import Task

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}  # inherited by every sub-command

app = typer.Typer(
    help="Evaluate coding agents on short-prompt, large-diff tasks in Docker sandboxes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings=HELP_OPTIONS,
)
tasks_app = typer.Typer(help="List and validate task suites.", no_args_is_help=True, context_settings=HELP_OPTIONS)
sandbox_app = typer.Typer(help="Sandbox images and clean-up.", no_args_is_help=True, context_settings=HELP_OPTIONS)
app.add_typer(tasks_app, name="tasks")
app.add_typer(sandbox_app, name="sandbox")


def _print_version(value: bool) -> None:
    from importlib.metadata import version

    if value:
        print(f"evalkit {version('evalkit')}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Options of `evalkit` itself (the app's help text is the Typer's own)."""


# Piped output (CI logs, `make demo | tee`) gets a wide table instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def run_id_option(value: str | None) -> str | None:
    """Typer callback for `--run-id`: a run id becomes a folder, so a bad one stops the command
    before anything is written (one line, exit 2)."""
    return None if value is None else check_run_id(value)


def backend_option(value: str) -> str:
    """Typer callback for `--backend`: an unknown name stops the command at once (one line naming
    the known backends, exit 2)."""
    return check_backend_name(value)


BackendOption = Annotated[
    str, typer.Option("--backend", callback=backend_option, help=f"Sandbox backend: {', '.join(sorted(BACKENDS))}.")
]


def executor_option(value: str) -> str:
    """Typer callback for `--executor`: an unknown name stops the command at once (one line, exit 2)."""
    return check_executor_name(value)


ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        callback=executor_option,
        help=f"What runs the attempts: {', '.join(sorted(EXECUTORS))} (local: a thread pool on this machine).",
    ),
]
RayAddressOption = Annotated[
    str | None, typer.Option("--ray-address", help="Address of the Ray cluster (--executor ray).")
]


_REGISTRY = re.compile(r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[a-z0-9._/-]+)?$")


def registry_option(value: str | None) -> str | None:
    """Typer callback for `--registry`: `value` without a trailing slash; a malformed one stops the
    command at once (one line saying what a registry looks like, exit 2)."""
    if value is None:
        return None
    value = value.rstrip("/")
    if not _REGISTRY.match(value) or "://" in value:
        raise EvalkitError(f"--registry {value}: give HOST[:PORT][/PREFIX], e.g. registry.example.com:5000/evalkit")
    return value


RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry",
        callback=registry_option,
        help="With --executor ray: push each task's image to HOST\\[:PORT]\\[/PREFIX] and let nodes pull it "
        "(default: nodes build what they lack from the same recipes).",
    ),
]


def given_options(ctx: typer.Context) -> set[str]:
    """The parameters of the running command typed on the command line (not left to defaults)."""
    sources = {name: ctx.get_parameter_source(name) for name in ctx.params}
    return {name for name, source in sources.items() if source is not None and source.name == "COMMANDLINE"}


STRICT_ENV_HELP = (
    "Refuse SWE-bench tasks whose environment's Python has no offline base (one line each) instead of "
    "running them on the nearest, marked approximate."
)
SKIP_INVALID_HELP = "Go on with the tasks that load when others of the suite do not (each is reported and recorded)."


def _load(suite_path: Path, skip_invalid: bool, verb: str) -> Suite:
    """The suite, each task that did not load reported on stderr (runs/command_setup.py)."""
    from evalkit.runs.command_setup import load_reported

    return load_reported(suite_path, skip_invalid, verb, err_console)


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )


POOL_HELP = (
    "Make the sandboxes about to be needed ahead of time (at most --concurrency + 1, removed with the command); "
    "--no-pool opens each one when it is needed. Results are the same either way."
)


def _strict_env(tasks: list[Task], strict: bool) -> list[Task]:
    """The tasks `--strict-env` keeps, each refused one a line on stderr (runs/command_setup.py)."""
    from evalkit.runs.command_setup import strict_env_kept

    return strict_env_kept(tasks, strict, err_console)


def _open_backend(
    run_id: str, name: str = DEFAULT_BACKEND, *, remote: bool = False, registry: str | None = None
) -> SandboxBackend:
    """The backend this process works with, its lines on stderr (runs/command_setup.py)."""
    from evalkit.runs.command_setup import driver_backend

    return driver_backend(run_id, name, remote=remote, registry=registry, log=err_console.print)


def _interrupted(backend: SandboxBackend, what: str) -> typer.Exit:
    from evalkit.sandbox.protocol import ListsLeftovers

    backend.close()
    cleaned = "containers removed"
    if isinstance(backend, ListsLeftovers) and len(backend.live):  # the engine did not answer: nothing removed
        cleaned = "the Docker engine does not answer, the next evalkit command removes the containers left"
    err_console.print(f"[red]interrupted[/]: {cleaned}; {what}", soft_wrap=True)
    return typer.Exit(130)


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _bare_json_means_stdout(argv: list[str]) -> list[str]:
    """`--json` given without a value (last, or before another option) means `--json -`."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        after = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--json" and (after is None or (after.startswith("-") and after != "-")):
            out.append("-")
    return out


def main() -> None:
    """Console entry point: user errors are one line on stderr and exit code 2."""
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        app(args=_bare_json_means_stdout(sys.argv[1:]), prog_name="evalkit")
    except EvalkitError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
