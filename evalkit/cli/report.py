"""`evalkit stats`, `compare` and `report`: suite statistics, run comparison, the HTML leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import app, console, err_console
from evalkit.errors import EvalkitError
from evalkit.runs.folders import RUNS_ROOT, run_folder


@app.command("stats")
def stats(
    suite: Annotated[Path, typer.Argument(help="Suite folder, or a SWE-bench-format file (jsonl/json/csv/parquet).")],
    json_out: Annotated[
        str | None, typer.Option("--json", help="Print the figures as JSON instead of the table (`--json` alone).")
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="Compute SWE-bench figures now from this source (file or HF dataset name).")
    ] = None,
) -> None:
    """The suite's prompt, change and test sizes side by side with SWE-bench's (sources shown)."""
    from evalkit.stats.stats_command import stats_command

    code = stats_command(suite, json_out is not None, reference, console)
    if code:
        raise typer.Exit(code)


@app.command("compare")
def compare(
    base: Annotated[Path, typer.Argument(help="The reference run: a run folder, or a run id in reports/runs.")],
    new: Annotated[Path, typer.Argument(help="The run to check against it (folder or run id).")],
    max_drop: Annotated[float, typer.Option(help="Smallest drop (0–1 scale) that counts as a regression.")] = 0.02,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the one-sided tests; intervals are 1 − alpha.")
    ] = 0.05,
    markdown: Annotated[
        Path | None, typer.Option(help="Write a markdown summary (CI job summary, PR comment).")
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(help="Write JUnit XML: one case per task, one per deciding axis.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON (`--json` alone: print it).")
    ] = None,
    base_model: Annotated[str | None, typer.Option(help="The base run's model, when it has several.")] = None,
    new_model: Annotated[str | None, typer.Option(help="The new run's model, when it has several.")] = None,
    allow_subset: Annotated[
        bool,
        typer.Option("--allow-subset", help="Runs whose suites loaded different tasks: compare the tasks both loaded."),
    ] = False,
) -> None:
    """Compare two runs of one suite, paired by task and sample: exit 1 on a significant regression."""
    from evalkit.report.compare.command import compare_command

    code = compare_command(
        run_folder(base),
        run_folder(new),
        console=console,
        max_drop=max_drop,
        alpha=alpha,
        markdown=markdown,
        junit=junit,
        json_out=json_out,
        base_model=base_model,
        new_model=new_model,
        allow_subset=allow_subset,
    )
    if code:
        raise typer.Exit(code)


@app.command("report")
def report(
    run_dirs: Annotated[
        list[Path] | None,
        typer.Argument(help="Run folders or run ids (default: every folder under reports/runs)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for index.html and the data files.")] = Path("reports/leaderboard"),
    published: Annotated[Path | None, typer.Option(help="CSV model,benchmark,score of published scores (0–1).")] = None,
    config: Annotated[
        Path | None, typer.Option(help='evalkit.toml with \\[published."MODEL"] tables (default ./evalkit.toml).')
    ] = None,
    group_by: Annotated[
        str, typer.Option(help="Group the rows by `agent` or by `model` (`none`: one ranking); the page can switch.")
    ] = "none",
) -> None:
    """Write the self-contained HTML leaderboard of finished runs (opens from disk)."""
    from evalkit.models.endpoint import DEFAULT_CONFIG, load_config
    from evalkit.report.leaderboard.board import GROUP_BY

    if group_by not in GROUP_BY:
        raise EvalkitError(f"--group-by {group_by!r}: give one of {', '.join(GROUP_BY)}")
    from evalkit.report.leaderboard.output import (
        merge_published,
        published_from_config,
        read_published,
        write_leaderboard,
    )

    scores = published_from_config(load_config(config), config or DEFAULT_CONFIG)
    if published is not None:
        scores = merge_published(scores, read_published(published))
    if run_dirs:
        page = write_leaderboard([run_folder(d) for d in run_dirs], out, scores, group_by=group_by)
    else:
        root = RUNS_ROOT
        found = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        if not found:
            raise EvalkitError("no run folder given and none under reports/runs; run `evalkit run` first")

        def skipped(message: str) -> None:
            err_console.print(f"[yellow]skipped[/] {escape(message)}", highlight=False, soft_wrap=True)

        page = write_leaderboard(found, out, scores, on_skip=skipped, group_by=group_by)
    console.print(f"leaderboard: {escape(str(page))} (data: leaderboard.json, leaderboard.csv, attempts.csv)")
