"""`evalkit reviewer calibrate`: how far to trust a reviewer model, measured on the calibration
corpus of a suite (each task's reference change against sloppy variants of it) beside the quality
axis (evalkit/calibration/reviewer_calibration.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import (
    DEFAULT_BACKEND,
    BackendOption,
    _load,
    app,
    console,
    err_console,
    new_run_id,
)
from evalkit.errors import EvalkitError

reviewer_app = typer.Typer(help="Reviewer models: calibrate one before trusting it.", no_args_is_help=True)
app.add_typer(reviewer_app, name="reviewer")


def _kinds(value: str | None) -> list[str] | None:
    from evalkit.calibration.sloppy_variants import ALL_KINDS

    if value is None:
        return None
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown or not kinds:
        raise EvalkitError(
            f"--kinds {value}: unknown kind {', '.join(unknown) or '(none given)'}; choose from {', '.join(ALL_KINDS)}"
        )
    return kinds


@reviewer_app.command("calibrate")
def calibrate(
    reviewer: Annotated[
        str, typer.Option(help="The reviewer: a model of evalkit.toml, an endpoint's model id, or scripted-reviewer.")
    ],
    suite: Annotated[Path, typer.Option(help="The suite whose references the corpus is made from.")],
    mode: Annotated[
        str, typer.Option("--reviewer-mode", help="agentic (reading tools in a sandbox) or no-tools (one request).")
    ] = "agentic",
    config: Annotated[Path | None, typer.Option(help="Models and prices (default ./evalkit.toml).")] = None,
    kinds: Annotated[str | None, typer.Option(help="Only these sloppy kinds, comma-separated (default all).")] = None,
    per_repository: Annotated[int, typer.Option(min=0, help="At most N tasks of each repository (0: all).")] = 0,
    tasks: Annotated[int, typer.Option("--tasks", min=0, help="At most N tasks in all (0: all).")] = 0,
    max_turns: Annotated[int, typer.Option("--max-review-turns", min=1, help="Requests per review (agentic).")] = 12,
    out: Annotated[
        Path | None, typer.Option(help="The calibration's JSON (default reports/reviewers/<reviewer>__<suite>.json).")
    ] = None,
    backend_name: BackendOption = DEFAULT_BACKEND,
) -> None:
    """Run a reviewer on each task's reference and its sloppy variants; print how well it tells them apart
    (per kind: share lower, share caught, mean gap, AUC) and how often it agrees with the quality axis.
    Resumable: run it again with the same --out to take up the reviews already made."""
    from rich.table import Table

    from evalkit.calibration.corpus import build_corpus, chosen_tasks
    from evalkit.calibration.reviewer_calibration import progress_path, run_reviews, summarise, write_calibration
    from evalkit.calibration.sloppy_variants import ALL_KINDS
    from evalkit.cli.review_setup import calibration_path, open_review
    from evalkit.models.endpoint import DEFAULT_CONFIG, load_config, models_table
    from evalkit.review.endpoint import choose_reviewer
    from evalkit.scoring.attempt_scores import load_settings

    config_data = load_config(config)
    config_path = config or DEFAULT_CONFIG
    choice = choose_reviewer(reviewer, models_table(config_data, config_path), config_path, mode, max_turns)
    wanted = _kinds(kinds)
    loaded = _load(suite, skip_invalid=True, verb="calibrate on")
    chosen = chosen_tasks(loaded.tasks, per_repository, tasks)
    with err_console.status("building the corpus"):
        corpus = build_corpus(chosen, wanted)
    if not corpus:
        raise EvalkitError(f"--suite {suite}: no task's reference change can be rebuilt into variants")
    out = out or calibration_path(reviewer, loaded.name, mode)
    settings = load_settings(config_data, config_path)
    order = [k for k in ALL_KINDS if any(k in case.variants for case in corpus)]
    transcripts = out.with_name(out.stem + ".transcripts")
    try:
        with (
            open_review(choice, settings.prices, f"calibrate-{new_run_id()}", backend_name) as session,
            err_console.status("reviewing") as status,
        ):
            rows = run_reviews(
                corpus, session, progress_path(out), transcripts,  # type: ignore[arg-type]  # a choice: a session
                lambda row, n, total: status.update(f"reviewing {n}/{total}: {row.task_id} {row.change}"),
            )  # fmt: skip
    except KeyboardInterrupt:
        kept = progress_path(out)
        err_console.print(f"[red]interrupted[/]: the reviews made so far are in {kept}; run again to go on")
        raise typer.Exit(130) from None
    result = summarise(rows, loaded.name, order)
    write_calibration(result, out)
    _show(result, Table)
    console.print(f"written: {out} (each review: {progress_path(out)}; transcripts: {transcripts}/)", soft_wrap=True)


def _show(result, Table) -> None:  # noqa: N803  (rich's Table, imported by the command)
    def cell(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    table = Table(title=f"{result.reviewer} ({result.mode}) on {result.suite}: reference against each sloppy kind")
    for name in ("kind", "pairs", "lower", "caught", "mean gap", "AUC", "axis caught", "axis AUC"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for mine, axis in zip(result.kinds, result.axis_kinds, strict=True):
        table.add_row(
            mine.kind, str(mine.pairs), cell(mine.lower, ".0%"), cell(mine.caught, ".0%"), cell(mine.mean_gap, ".3f"),
            cell(mine.auc, ".2f"), cell(axis.caught, ".0%"), cell(axis.auc, ".2f"),
        )  # fmt: skip
    console.print(table)
    lines = [
        f"{result.tasks} tasks, {result.changes} changes reviewed; references' median "
        f"{cell(result.reference_median, '.2f')} (the quality axis's {cell(result.axis_reference_median, '.2f')})",
        f"agreement with the quality axis on whether a variant is worse: {cell(result.agreement, '.0%')} "
        f"of {result.agreement_pairs} pairs; Spearman's rho over every change {cell(result.spearman, '.2f')}",
        f"tokens: {result.prompt_tokens} prompt, {result.completion_tokens} completion; cost "
        + ("unknown (no price for the reviewer's model)" if result.cost_usd is None else f"${result.cost_usd:.4f}"),
    ]
    if result.failed:
        why = ", ".join(f"{kind} × {n}" for kind, n in result.errors.items())
        lines.append(
            f"[yellow]{result.failed} review(s) gave no usable verdict[/] (left out of the figures): {escape(why)}"
        )
    for line in lines:
        console.print(line, soft_wrap=True, highlight=False)
