"""`evalkit evaluate`: score SWE-bench-format predictions against a suite's hidden tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalkit.cli.common import (
    _interrupted,
    _load,
    _open_backend,
    _progress,
    app,
    console,
    err_console,
    new_run_id,
    run_id_option,
)
from evalkit.errors import EvalkitError
from evalkit.names import file_component


@app.command("evaluate")
def evaluate(
    predictions: Annotated[Path, typer.Argument(help="SWE-bench predictions (.json or .jsonl).")],
    suite: Annotated[Path, typer.Option(help="Suite folder or .jsonl file the predictions are for.")],
    run_id: Annotated[
        str | None,
        typer.Option(help="Name of this evaluation (default: a timestamp).", callback=run_id_option),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where reports go.")] = Path("reports/evaluations"),
    concurrency: Annotated[int, typer.Option(min=1)] = 2,
    integrity: Annotated[
        str, typer.Option(help="`fail`: a patch that tampers with the test run is unresolved; `flag`: only reported.")
    ] = "fail",
) -> None:
    """Score SWE-bench-format predictions against a suite's hidden tests; write per-instance reports."""
    from evalkit.runner import fan_out
    from evalkit.scoring.correctness import CorrectnessResult, evaluate_patch
    from evalkit.scoring.integrity import counts_as_resolved
    from evalkit.scoring.integrity_scan import scan_attempt
    from evalkit.scoring.predictions import load_predictions, summary_report, write_atomic, write_instance_report

    if integrity not in ("fail", "flag"):
        raise EvalkitError(f"--integrity {integrity}: choose fail or flag")
    loaded = _load(suite)
    preds = load_predictions(predictions)
    known = {t.id: t for t in loaded.tasks}
    unknown = [p.instance_id for p in preds if p.instance_id not in known]
    for instance_id in unknown:
        err_console.print(f"[yellow]skipped[/] {escape(f'{predictions}: instance `{instance_id}` is not in {suite}')}")
    run_id = run_id or new_run_id()
    out_dir = out / run_id
    backend = _open_backend(run_id)
    jobs = [p for p in preds if p.instance_id in known]
    results: dict[str, dict[str, CorrectnessResult]] = {}
    try:
        with _progress() as progress:
            bar = progress.add_task("evaluating", total=len(jobs))

            def record(pred, result: CorrectnessResult) -> None:
                results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = result
                write_instance_report(out_dir, pred, result)
                progress.advance(bar)

            def failed(pred, error: BaseException) -> None:
                result = CorrectnessResult(task_id=pred.instance_id, error=str(error))
                record(pred, result)

            def judge(pred) -> CorrectnessResult:
                patch = pred.model_patch or ""
                result = evaluate_patch(known[pred.instance_id], patch, backend)
                report = scan_attempt([], patch, result.integrity_flags, [r.label() for r in result.restored])
                verdict = counts_as_resolved(result.resolved, report, integrity)  # type: ignore[arg-type]
                return result.model_copy(update={"resolved": verdict, "integrity_flags": report.flags})

            fan_out(
                jobs,
                judge,
                backend=backend,
                concurrency=concurrency,
                on_result=record,
                on_error=failed,
            )
    except KeyboardInterrupt:
        raise _interrupted(backend, f"finished instances are in {out_dir}") from None
    finally:
        backend.close()
    table = Table(title=f"evaluation {run_id}")
    for column in ("model", "instances", "resolved", "unresolved", "not applied", "errors"):
        table.add_column(column)
    for model, per_instance in results.items():
        report = summary_report(per_instance, unknown)
        write_atomic(out_dir / f"{file_component(model)}.report.json", json.dumps(report, indent=2) + "\n")
        table.add_row(
            model,
            str(len(per_instance)),
            str(report["resolved_instances"]),
            str(report["unresolved_instances"]),
            str(len(report["patch_not_applied_ids"])),
            str(report["error_instances"]),
        )
    console.print(table)
    console.print(f"reports in {out_dir}")
