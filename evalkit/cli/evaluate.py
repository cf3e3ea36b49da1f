"""`evalkit evaluate`: score SWE-bench-format predictions against a suite's hidden tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import (
    STRICT_ENV_HELP,
    _interrupted,
    _load,
    _open_backend,
    _progress,
    _strict_env,
    app,
    console,
    err_console,
    new_run_id,
    run_id_option,
)
from evalkit.errors import EvalkitError, SandboxError
from evalkit.files import file_component
from evalkit.runs.fitted_table import FitColumn, FittedTable
from evalkit.wording import counted


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
    strict_env: Annotated[bool, typer.Option("--strict-env", help=STRICT_ENV_HELP)] = False,
) -> None:
    """Score SWE-bench-format predictions against a suite's hidden tests; write per-instance reports."""
    from evalkit.files import write_atomic
    from evalkit.integrity import counts_as_resolved
    from evalkit.runs.fan_out import fan_out
    from evalkit.scoring.predictions import (
        load_predictions,
        read_instance_report,
        summary_report,
        write_instance_report,
    )
    from evalkit.verify.correctness import CorrectnessResult, evaluate_patch
    from evalkit.verify.integrity_scan import scan_attempt

    if integrity not in ("fail", "flag"):
        raise EvalkitError(f"--integrity {integrity}: choose fail or flag")
    loaded = _load(suite, skip_invalid=True, verb="score")
    preds = load_predictions(predictions)
    in_suite = {t.id for t in loaded.tasks}
    known = {t.id: t for t in _strict_env(loaded.tasks, strict_env)}
    unknown = [p.instance_id for p in preds if p.instance_id not in in_suite]
    for instance_id in unknown:
        err_console.print(f"[yellow]skipped[/] {escape(f'{predictions}: instance `{instance_id}` is not in {suite}')}")
    run_id = run_id or new_run_id()
    out_dir = out / run_id
    results: dict[str, dict[str, CorrectnessResult]] = {}
    jobs = []
    for pred in (p for p in preds if p.instance_id in known):  # a report written before (a resume) is kept
        reported = read_instance_report(out_dir, pred)
        if reported is None:
            jobs.append(pred)
        else:
            results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = reported
    if kept := sum(map(len, results.values())):
        kept_line = f"{counted(kept, 'instance report')} kept, {len(jobs)} to evaluate"
        err_console.print(f"resuming evaluation {run_id}: {kept_line}")
    backend = _open_backend(run_id)
    try:
        with _progress() as progress:
            bar = progress.add_task("evaluating", total=len(jobs))

            def record(pred, result: CorrectnessResult) -> None:
                results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = result
                write_instance_report(out_dir, pred, result)
                progress.advance(bar)

            def failed(pred, error: BaseException) -> None:
                # a sandbox that never opened (no repository, a failed environment build) is the environment's
                blame = isinstance(error, SandboxError)
                result = CorrectnessResult(task_id=pred.instance_id, error=str(error), environment_error=blame)
                record(pred, result)

            def score_prediction(pred) -> CorrectnessResult:
                patch = pred.model_patch or ""
                result = evaluate_patch(known[pred.instance_id], patch, backend)
                report = scan_attempt([], patch, result.integrity_flags, [r.label() for r in result.restored])
                verdict = counts_as_resolved(result.resolved, report, integrity)  # type: ignore[arg-type]
                return result.model_copy(update={"resolved": verdict, "integrity_flags": report.flags})

            fan_out(
                jobs,
                score_prediction,
                backend=backend,
                concurrency=concurrency,
                on_result=record,
                on_error=failed,
            )
    except KeyboardInterrupt:
        again = f"evalkit evaluate {predictions} --suite {suite} --run-id {run_id} --out {out}"
        raise _interrupted(backend, f"finished instances are in {out_dir}; resume with: {again}") from None
    finally:
        backend.close()
    reports = {model: summary_report(per_instance, unknown) for model, per_instance in results.items()}
    for model, report in reports.items():
        write_atomic(out_dir / f"{file_component(model)}.report.json", json.dumps(report, indent=2) + "\n")
    console.print(evaluation_table(f"evaluation {run_id}", reports))
    console.print("not applied: unresolved because the patch did not apply", style="dim")
    console.print(f"reports in {out_dir}")


def evaluation_table(title: str, reports: dict[str, dict]) -> FittedTable:
    """Per model, the outcomes of its predictions as SWE-bench's report counts them: every instance
    is resolved, unresolved, an empty patch or an error; "not applied" are the unresolved ones
    whose patch did not apply. Laid out for the terminal's width, no figure cut."""
    entries = list(reports.values())

    def column(header: str, priority: int, count) -> FitColumn:
        return FitColumn(header, [[str(count(report))] for report in entries], priority)

    columns = [
        column("instances", 1, lambda r: r["submitted_instances"] - len(r["unknown_instance_ids"])),
        column("resolved", 0, lambda r: r["resolved_instances"]),
        column("unresolved", 0, lambda r: r["unresolved_instances"]),
        column("empty patch", 0, lambda r: r["empty_patch_instances"]),
        column("errors", 0, lambda r: r["error_instances"]),
        column("not applied", 1, lambda r: len(set(r["patch_not_applied_ids"]) - set(r["error_ids"]))),
    ]
    return FittedTable(title, "model", list(reports), columns, "every figure is in <model>.report.json")
