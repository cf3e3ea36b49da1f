"""`evalkit gather`: mine a repository's history for short-prompt, large-diff tasks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import (
    ExecutorOption,
    RayAddressOption,
    RegistryOption,
    _interrupted,
    _open_backend,
    app,
    console,
    err_console,
    given_options,
    new_run_id,
)
from evalkit.errors import EvalkitError
from evalkit.gather.sampling import MAX_IDS_PER_FUNCTION
from evalkit.runs.executor import check_registry_use, concurrency_for
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.sandbox.env_recipe import HOST_CA_BUNDLE
from evalkit.wording import counted


@app.command("gather")
def gather_command(
    ctx: typer.Context,
    repo: Annotated[str, typer.Argument(help="A local git repository, or a URL to clone.")],
    out: Annotated[
        Path,
        typer.Option(help="Suite folder to write; the same --out again continues (decided commits are skipped)."),
    ],
    since: Annotated[str | None, typer.Option(help="Only commits after this date (git --since).")] = None,
    until: Annotated[str | None, typer.Option(help="Only commits before this date (git --until).")] = None,
    max_tasks: Annotated[int, typer.Option(min=1)] = 20,
    min_lines: Annotated[int, typer.Option(min=0, help="Minimum changed source (non-test) lines.")] = 40,
    max_lines: Annotated[int, typer.Option(min=1, help="Maximum changed source (non-test) lines.")] = 1000,
    min_files: Annotated[int, typer.Option(min=1, help="Minimum files changed, tests included.")] = 2,
    test_glob: Annotated[
        list[str] | None,
        typer.Option(
            "--test-glob",
            help="Test file globs (repeatable). Default: where the project keeps its tests (pytest testpaths"
            " and python_files, its test modules' folders, files they open), then tests/**, test_*.py...",
        ),
    ] = None,
    max_prompt_chars: Annotated[int, typer.Option(min=40)] = 400,
    rewriter: Annotated[str | None, typer.Option(help="Model that rewrites prompts (any --model name).")] = None,
    runs: Annotated[int, typer.Option(min=1, help="Test runs before and after, to drop flaky tests.")] = 3,
    test_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds one test run may take; a slower candidate is left out.")
    ] = 180,
    max_pass_to_pass: Annotated[int, typer.Option(min=0, help="PASS_TO_PASS tests kept per task (sampled).")] = 50,
    neighbour_modules: Annotated[
        int, typer.Option(min=0, help="Existing test modules beside the touched ones, run for PASS_TO_PASS.")
    ] = 5,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1, help="Candidates validated side by side (default 2; --executor ray: the cluster's sandboxes)."
        ),
    ] = 2,
    max_ids_per_test: Annotated[
        int, typer.Option(min=1, help="FAIL_TO_PASS ids kept per test function (parametrised; sampled).")
    ] = MAX_IDS_PER_FUNCTION,
    ca_bundle: Annotated[Path, typer.Option(help="CA bundle image builds use to reach PyPI.")] = HOST_CA_BUNDLE,
    config: Annotated[Path | None, typer.Option(help="Model config for --rewriter (default ./evalkit.toml).")] = None,
    keep_underspecified: Annotated[
        bool, typer.Option(help="Keep tasks whose tests need names no prompt gives (flagged underspecified).")
    ] = False,
    executor_name: ExecutorOption = DEFAULT_EXECUTOR,
    ray_address: RayAddressOption = None,
    registry: RegistryOption = None,
) -> None:
    """Mine a repository's history for validated short-prompt, large-diff tasks."""
    from rich.table import Table

    from evalkit.diffs import changed_lines, changed_paths
    from evalkit.gather.display import GatherDisplay
    from evalkit.gather.gather import REPORT, GatherOptions, gather, open_repository
    from evalkit.gather.history import SizeLimits
    from evalkit.gather.journal import JOURNAL
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import DEFAULT_CONFIG, load_config, models_table, resolve_model
    from evalkit.runs.executor_table import open_executor

    config_path = config or DEFAULT_CONFIG
    open_repository(repo)  # a bad path or an unreachable URL is one line, before any container starts
    rewriter_client = None
    if rewriter:
        spec = resolve_model(rewriter, models_table(load_config(config), config_path), config_path=config_path)
        if spec.builtin:
            raise EvalkitError(f"--rewriter {rewriter}: a built-in policy cannot rewrite prompts; name a real model")
        rewriter_client = ChatClient(spec)
    options = GatherOptions(
        since=since,
        until=until,
        max_tasks=max_tasks,
        limits=SizeLimits(min_lines, max_lines, min_files),
        test_globs=tuple(test_glob) if test_glob else None,
        max_prompt_chars=max_prompt_chars,
        runs=runs,
        test_timeout_s=test_timeout,
        max_pass_to_pass=max_pass_to_pass,
        neighbour_modules=neighbour_modules,
        ca_bundle=ca_bundle,
        rewriter=rewriter_client,
        concurrency=concurrency,
        max_ids_per_test=max_ids_per_test,
        keep_underspecified=keep_underspecified,
    )
    check_registry_use(registry, executor_name)
    executor = open_executor(executor_name, ray_address)
    options = replace(options, concurrency=concurrency_for(executor, concurrency, "concurrency" in given_options(ctx)))
    backend = _open_backend(new_run_id(), remote=executor.remote, registry=registry)
    try:
        with GatherDisplay(err_console, options.concurrency) as display:
            report = gather(repo, out, options, backend, display, executor, registry=registry)
    except KeyboardInterrupt:
        raise _interrupted(backend, "every decided commit is kept; run the same command again to continue") from None
    finally:
        backend.close()
        executor.close()
    for line in executor.notes():  # a cluster's nodes left out, and why
        err_console.print(f"[yellow]warning[/] {escape(line)}", soft_wrap=True)
    accepted = Table(
        title=f"{counted(len(report.accepted), 'task')} gathered from {report.repo} "
        f"({counted(report.scanned, 'commit')} scanned)"
    )
    for column in ("task", "prompt chars", "changed lines", "files", "F2P", "P2P"):
        accepted.add_column(column, justify="left" if column == "task" else "right")
    for item in report.accepted:
        accepted.add_row(
            item.id,
            str(len(item.prompt)),
            str(changed_lines(item.patch)),
            str(len(set(changed_paths(item.patch)) | set(changed_paths(item.test_patch)))),
            str(len(item.tests.fail_to_pass)),
            str(len(item.tests.pass_to_pass)),
        )
    console.print(accepted)
    if report.rejected:
        rejected = Table(title=f"{counted(len(report.rejected), 'commit')} left out")
        for column in ("commit", "subject", "stage", "reason"):
            rejected.add_column(column)
        for item in report.rejected:
            rejected.add_row(item.sha[:10], escape(item.subject[:50]), item.stage, escape(item.reason))
        console.print(rejected)
    if report.resumed:
        console.print(f"{counted(report.resumed, 'commit')} decided by an earlier gather into {out}: skipped")
    console.print(report.funnel.line(), highlight=False)
    console.print(f"suite: {out}; every decision in {out / REPORT} (and, as made, in {out / JOURNAL})")
