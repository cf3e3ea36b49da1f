"""`evalkit evaluate`: score SWE-bench-format predictions against a suite's hidden tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import (
    STRICT_ENV_HELP,
    ExecutorOption,
    RayAddressOption,
    RegistryOption,
    _interrupted,
    _load,
    _open_backend,
    _progress,
    _strict_env,
    app,
    console,
    err_console,
    given_options,
    new_run_id,
    run_id_option,
)
from evalkit.errors import EvalkitError, SandboxError
from evalkit.files import file_component
from evalkit.runs.executor import check_registry_use, concurrency_for
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.runs.fitted_table import FitColumn, FittedTable
from evalkit.sandbox.backend_table import DEFAULT_BACKEND
from evalkit.wording import counted


@app.command("evaluate")
def evaluate(
    ctx: typer.Context,
    predictions: Annotated[Path, typer.Argument(help="SWE-bench predictions (.json or .jsonl).")],
    suite: Annotated[Path, typer.Option(help="Suite folder or .jsonl file the predictions are for.")],
    run_id: Annotated[
        str | None,
        typer.Option(help="Name of this evaluation (default: a timestamp).", callback=run_id_option),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where reports go.")] = Path("reports/evaluations"),
    concurrency: Annotated[
        int, typer.Option(min=1, help="Predictions scored at once (default 2; --executor ray: the cluster's slots).")
    ] = 2,
    integrity: Annotated[
        str, typer.Option(help="`fail`: a patch that tampers with the test run is unresolved; `flag`: only reported.")
    ] = "fail",
    strict_env: Annotated[bool, typer.Option("--strict-env", help=STRICT_ENV_HELP)] = False,
    executor_name: ExecutorOption = DEFAULT_EXECUTOR,
    ray_address: RayAddressOption = None,
    registry: RegistryOption = None,
) -> None:
    """Score SWE-bench-format predictions against a suite's hidden tests; write per-instance reports."""
    from evalkit.files import write_atomic
    from evalkit.integrity import IntegrityPolicy
    from evalkit.runs.executor_table import open_executor
    from evalkit.runs.node_evaluation import NodeEvaluation, PatchOnNode
    from evalkit.runs.task_payload import travelling
    from evalkit.scoring.predictions import (
        Prediction,
        load_predictions,
        read_instance_report,
        summary_report,
        write_instance_report,
    )
    from evalkit.verify.correctness import CorrectnessResult
    from evalkit.verify.prediction_verdict import prediction_verdict

    if integrity not in ("fail", "flag"):
        raise EvalkitError(f"--integrity {integrity}: choose fail or flag")
    check_registry_use(registry, executor_name)
    loaded = _load(suite, skip_invalid=True, verb="score")
    preds, unreadable = load_predictions(predictions)
    for problem in unreadable:
        err_console.print(f"[yellow]skipped[/] {escape(problem)}", highlight=False, soft_wrap=True)
    in_suite = {t.id for t in loaded.tasks}
    known = {t.id: t for t in _strict_env(loaded.tasks, strict_env)}
    unknown = [p.instance_id for p in preds if p.instance_id not in in_suite]
    for instance_id in unknown:
        err_console.print(f"[yellow]skipped[/] {escape(f'{predictions}: instance `{instance_id}` is not in {suite}')}")
    run_id = run_id or new_run_id()
    out_dir = out / run_id
    policy: IntegrityPolicy = "fail" if integrity == "fail" else "flag"
    results: dict[str, dict[str, CorrectnessResult]] = {}
    jobs = []
    for pred in (p for p in preds if p.instance_id in known):  # a report written before (a resume) is kept
        reported = read_instance_report(out_dir, pred, policy)
        if reported is None:
            jobs.append(pred)
        else:
            results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = reported
    if kept := sum(map(len, results.values())):
        kept_line = f"{counted(kept, 'instance report')} kept, {len(jobs)} to evaluate"
        err_console.print(f"resuming evaluation {run_id}: {kept_line}")
    executor = open_executor(executor_name, ray_address)
    concurrency = concurrency_for(executor, concurrency, "concurrency" in given_options(ctx))
    backend = _open_backend(run_id, remote=executor.remote, registry=registry)
    try:
        items: list[Prediction] | list[PatchOnNode] = jobs
        job: Callable = lambda p: prediction_verdict(known[p.instance_id], p.model_patch or "", backend, policy)  # noqa: E731
        if executor.remote:  # each prediction on a node of the cluster, its task's workspace built here
            payloads = {i: travelling(known[i], backend, registry) for i in {p.instance_id for p in jobs}}
            items = [PatchOnNode(payloads[p.instance_id], p.model_patch or "") for p in jobs]
            job = NodeEvaluation(run_id, DEFAULT_BACKEND, policy)
        of_item = dict(zip(map(id, items), jobs, strict=True))  # the prediction each item scores
        with _progress() as progress:
            bar = progress.add_task("evaluating", total=len(jobs))

            def record(item: Prediction | PatchOnNode, result: CorrectnessResult) -> None:
                pred = of_item[id(item)]
                results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = result
                write_instance_report(out_dir, pred, result, policy)
                progress.advance(bar)

            def failed(item: Prediction | PatchOnNode, error: BaseException) -> None:
                # a sandbox that never opened (no repository, a failed environment build) is the
                # environment's; so is a node's one line (its engine, a job it could not start)
                blame = isinstance(error, SandboxError) or executor.remote
                pred = of_item[id(item)]
                record(item, CorrectnessResult(task_id=pred.instance_id, error=str(error), environment_error=blame))

            executor.run(items, job, backend=backend, concurrency=concurrency, on_result=record, on_error=failed)
    except KeyboardInterrupt:
        again = f"evalkit evaluate {predictions} --suite {suite} --run-id {run_id} --out {out}"
        raise _interrupted(backend, f"finished instances are in {out_dir}; resume with: {again}") from None
    finally:
        backend.close()
        executor.close()
    for line in executor.notes():  # a cluster's nodes left out, and why
        err_console.print(f"[yellow]warning[/] {escape(line)}", soft_wrap=True)
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
