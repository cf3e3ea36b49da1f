"""`evalkit tasks`: list, validate, import and export task suites."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import (
    DEFAULT_BACKEND,
    POOL_HELP,
    SKIP_INVALID_HELP,
    STRICT_ENV_HELP,
    BackendOption,
    ExecutorOption,
    RayAddressOption,
    RegistryOption,
    _interrupted,
    _load,
    _open_backend,
    _progress,
    _strict_env,
    console,
    err_console,
    given_options,
    new_run_id,
    tasks_app,
)
from evalkit.errors import EvalkitError
from evalkit.runs.executor import check_registry_use, concurrency_for
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.wording import counted

if TYPE_CHECKING:  # imported by the commands that use them: `evalkit --help` stays fast
    from rich.table import Table

    from evalkit.tasks import Task
    from evalkit.verify.health import TaskHealth

SIZE_COLUMNS = ("prompt chars", "changed lines", "files", "F2P", "P2P")


def _sizes(task: Task) -> tuple[int, ...]:
    """The figures of SIZE_COLUMNS for one task (the change without its tests)."""
    from evalkit.diffs import changed_lines, changed_paths

    return (
        len(task.prompt),
        changed_lines(task.patch),
        len(changed_paths(task.patch)),
        len(task.tests.fail_to_pass),
        len(task.tests.pass_to_pass),
    )


def _median(values: list[int]) -> str:
    middle = statistics.median(values)
    return f"{middle:,.0f}" if float(middle).is_integer() else f"{middle:,.1f}"


@tasks_app.command("list")
def tasks_list(
    suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")],
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help=SKIP_INVALID_HELP)] = False,
) -> None:
    """List a suite's tasks with their prompt and change sizes, and the suite's medians."""
    from rich.table import Table

    loaded = _load(suite, skip_invalid, "list")
    how_many = counted(loaded.total, "task")
    if loaded.skipped:
        how_many = f"{len(loaded.tasks)} of {how_many} loaded"
    table = Table(title=escape(f"{loaded.name}: {how_many}"))
    for column in ("task", "repo", *SIZE_COLUMNS, "tags"):
        table.add_column(column, justify="right" if column in SIZE_COLUMNS else "left")
    sizes = [_sizes(task) for task in loaded.tasks]
    for task, figures in zip(loaded.tasks, sizes, strict=True):
        table.add_row(escape(task.id), escape(task.repo), *(f"{v:,}" for v in figures), escape(", ".join(task.tags)))
    table.add_section()
    table.add_row("median", "", *(_median(list(column)) for column in zip(*sizes, strict=True)), "")
    console.print(table)


def _health_table(rows: list[TaskHealth]) -> Table:
    from rich.table import Table

    table = Table(title="Task validation (reference patch x runs, empty patch x 1)")
    for column in ("task", "gold", "empty", "flaky", "F2P", "P2P", "time s", "verdict"):
        table.add_column(column)
    for row in rows:
        gold = f"{sum(row.gold_runs)}/{len(row.gold_runs)}"
        verdict = "[green]valid[/]" if row.valid else "[red]invalid[/]: " + escape("; ".join(row.problems))
        if row.underspecified:
            verdict += f"; [yellow]underspecified[/]: {escape(', '.join(row.underspecified))}"
        table.add_row(
            row.task_id,
            gold,
            "resolved" if row.empty_resolved else "unresolved",
            "yes" if row.flaky else "no",
            str(row.fail_to_pass),
            str(row.pass_to_pass),
            f"{row.duration_s:.1f}",
            verdict,
        )
    return table


@tasks_app.command("validate")
def tasks_validate(
    ctx: typer.Context,
    suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write JSON rows to this file; `--json -` (or `--json` last) prints them."),
    ] = None,
    runs: Annotated[int, typer.Option(min=1, help="Reference-patch runs per task (flakiness check).")] = 3,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Tasks validated at once (default 2; --executor ray: the cluster's sandboxes).")
    ] = 2,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help=SKIP_INVALID_HELP)] = False,
    backend_name: BackendOption = DEFAULT_BACKEND,
    pool: Annotated[bool, typer.Option("--pool/--no-pool", help=POOL_HELP)] = True,
    strict_env: Annotated[bool, typer.Option("--strict-env", help=STRICT_ENV_HELP)] = False,
    executor_name: ExecutorOption = DEFAULT_EXECUTOR,
    ray_address: RayAddressOption = None,
    registry: RegistryOption = None,
) -> None:
    """Check every task: the reference patch must resolve it every time, the empty patch never."""
    from evalkit.files import write_atomic
    from evalkit.runs.executor_table import open_executor
    from evalkit.runs.node_validation import NodeValidation
    from evalkit.runs.task_payload import TaskPayload, travelling
    from evalkit.sandbox.pool import POOL_SLACK
    from evalkit.sandbox.protocol import prepare_ahead
    from evalkit.verify.health import failed_health, validate_task, validation_sandboxes

    loaded = _load(suite, skip_invalid, "validate")
    selected = _strict_env(loaded.select(task), strict_env)
    check_registry_use(registry, executor_name)
    executor = open_executor(executor_name, ray_address)
    concurrency = concurrency_for(executor, concurrency, "concurrency" in given_options(ctx))
    backend = _open_backend(new_run_id(), backend_name, remote=executor.remote, registry=registry)
    rows: dict[str, TaskHealth] = {}
    try:
        if executor.remote:  # each task on a node of the cluster, its workspace built here
            items: list = [travelling(t, backend, registry) for t in selected]
            job = NodeValidation(backend.run_id, backend_name, runs)
        else:
            items, job = selected, (lambda t: validate_task(t, backend, runs))
        if pool and not executor.remote:
            needed = [request for t in selected for request in validation_sandboxes(t, runs)]
            prepare_ahead(backend, needed, capacity=concurrency + POOL_SLACK)
        with _progress() as progress:
            bar = progress.add_task("validating", total=len(selected))

            def record(item: Task | TaskPayload, health: TaskHealth) -> None:
                rows[health.task_id] = health
                progress.advance(bar)

            def failed(item: Task | TaskPayload, error: BaseException) -> None:
                if not executor.remote:
                    raise error
                task = item.task if isinstance(item, TaskPayload) else item
                rows[task.id] = failed_health(task, str(error))  # a node's one line; the others go on
                progress.advance(bar)

            executor.run(items, job, backend=backend, concurrency=concurrency, on_result=record, on_error=failed)
    except KeyboardInterrupt:
        raise _interrupted(backend, "nothing was written") from None
    finally:
        backend.close()
        executor.close()
    for line in executor.notes():  # a cluster's nodes left out, and why
        err_console.print(f"[yellow]warning[/] {escape(line)}", soft_wrap=True)
    ordered = [rows[t.id] for t in selected]
    payload = json.dumps([r.model_dump(mode="json") for r in ordered], indent=2)
    if json_out == "-":
        sys.stdout.write(payload + "\n")
    else:
        console.print(_health_table(ordered))
        if json_out:
            write_atomic(Path(json_out), payload + "\n")
            console.print(f"JSON rows written to {json_out}")
    valid = sum(r.valid for r in ordered)
    err_console.print(f"{valid} of {counted(len(ordered), 'task')} valid")
    vague = [r.task_id for r in ordered if r.underspecified]
    if vague:
        err_console.print(
            f"{counted(len(vague), 'task')} underspecified (the tests need names the prompt does not give): "
            + escape(", ".join(vague[:5]) + (" …" if len(vague) > 5 else ""))
        )
    if valid < len(ordered):
        raise typer.Exit(1)


@tasks_app.command("import")
def tasks_import(
    kind: Annotated[str, typer.Argument(help="Only `swebench`.")],
    source: Annotated[
        str, typer.Argument(help="A Hugging Face dataset name\\[:split], or a JSON/JSONL/CSV/Parquet file.")
    ],
    out: Annotated[Path, typer.Option(help="Suite folder to write.")],
    repo_dir: Annotated[Path | None, typer.Option(help="Folder of local clones (owner__name or name).")] = None,
) -> None:
    """Import SWE-bench-format rows as an evalkit suite."""
    from evalkit.interchange import import_command

    if kind != "swebench":
        raise EvalkitError(f"tasks import {kind}: only `swebench` is supported")
    code = import_command(source, out, repo_dir, console, err_console)
    if code:
        raise typer.Exit(code)


@tasks_app.command("export")
def tasks_export(
    suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")],
    format: Annotated[str, typer.Option("--format", help="Only `swebench`.")] = "swebench",
    out: Annotated[Path | None, typer.Option(help="File to write (.jsonl or .json); default stdout (JSONL).")] = None,
    repo_dir: Annotated[
        Path | None,
        typer.Option(
            help="Write each snapshot task's repository here (a git repository per repo, one commit) "
            "so its row names a real base_commit; import with the same --repo-dir."
        ),
    ] = None,
) -> None:
    """Export a suite as SWE-bench rows (the 12 dataset columns), for SWE-bench tooling."""
    from evalkit.interchange import export_command

    code = export_command(suite, format, out, console, err_console, repo_dir)
    if code:
        raise typer.Exit(code)


@tasks_app.command("pack")
def tasks_pack(
    suite: Annotated[Path, typer.Argument(help="A gathered suite (tasks on local git repositories).")],
    out: Annotated[Path, typer.Option(help="Suite folder to write: tasks, repos/*.bundle, licenses, recipes.")],
    upstream: Annotated[
        list[str],
        typer.Option(help="NAME=URL=LICENSE for each repository (NAME: its folder without .git); repeatable."),
    ],
    name: Annotated[str | None, typer.Option(help="The suite's name (default: --out's folder name).")] = None,
    description: Annotated[str, typer.Option(help="The suite's description.")] = "",
) -> None:
    """Pack a gathered suite to travel alone: each repository one small git bundle of the base trees."""
    from evalkit.gather.pack import Upstream, pack_suite, write_upstreams

    upstreams = {}
    for given in upstream:
        parts = given.split("=")
        if len(parts) != 3 or not all(parts):
            raise EvalkitError(
                f"--upstream {given!r}: expected NAME=URL=LICENSE, e.g. pallets__click=https://github.com/pallets/click=BSD-3-Clause"
            )
        upstreams[parts[0]] = Upstream(parts[1], parts[2])
    packed = pack_suite(suite, out, name or out.name, description, upstreams)
    write_upstreams(out, {p.name: upstreams[p.name] for p in packed})
    for repo in packed:
        console.print(f"{repo.name}: {counted(repo.tasks, 'task')}, bundle {repo.bundle_bytes / 1e6:.2f} MB")
