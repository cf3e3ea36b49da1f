"""`evalkit compare`'s body over two run folders: read their run.json and attempts, compare them
(`compare_runs`), note what the numbers cannot show (tasks left out, different composite weights),
print, and write the requested JSON, markdown and JUnit files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from evalkit.files import write_atomic
from evalkit.report.compare.comparison import ALPHA, DECIDING_AXES, MAX_DROP, compare_runs
from evalkit.report.compare.cutoff import side_split
from evalkit.report.compare.loaded_tasks import loaded_task_difference, run_manifest, subset_note
from evalkit.report.compare.output import junit_report, markdown_report, print_comparison
from evalkit.report.compare.pairs import check_levels, check_suites
from evalkit.report.compare.user_condition import user_condition, user_note
from evalkit.results import load_results
from evalkit.runs.paths import RunPaths
from evalkit.scoring.cutoff_figures import frame_dates, model_cutoffs


def _weights(run_dir: Path) -> dict | None:
    try:
        return json.loads(RunPaths(run_dir).summary.read_text()).get("weights")
    except (OSError, ValueError, AttributeError):
        return None


def compare_command(
    base_dir: Path,
    new_dir: Path,
    *,
    console: Console,
    max_drop: float = MAX_DROP,
    alpha: float = ALPHA,
    markdown: Path | None = None,
    junit: Path | None = None,
    json_out: Path | None = None,
    base_model: str | None = None,
    new_model: str | None = None,
    deciding_axes: Sequence[str] = DECIDING_AXES,
    allow_subset: bool = False,
) -> int:
    """Compare two run folders; print, write the requested reports, and return the exit code
    (0 no regression, 1 regression). Unusable input raises EvalkitError (exit 2) before any
    output, runs whose suites loaded different tasks too unless `allow_subset` (then the tasks
    both loaded are compared, and the comparison says so). `json_out` of `-` prints the JSON
    instead of the table. An unscored run is scored first, as `evalkit.load_results` does."""
    check_levels(max_drop, alpha)
    base_manifest, new_manifest = run_manifest(base_dir), run_manifest(new_dir)
    check_suites(base_manifest.suite, new_manifest.suite, str(base_dir), str(new_dir))
    only_base, only_new = loaded_task_difference(base_manifest, new_manifest, str(base_dir), str(new_dir), allow_subset)
    base_frame, new_frame = load_results(base_dir), load_results(new_dir)
    comparison = compare_runs(
        base_frame[~base_frame["task_id"].isin(only_base)] if only_base else base_frame,
        new_frame[~new_frame["task_id"].isin(only_new)] if only_new else new_frame,
        max_drop=max_drop,
        alpha=alpha,
        base_model=base_model,
        new_model=new_model,
        base_suite=base_manifest.suite,
        new_suite=new_manifest.suite,
        deciding_axes=deciding_axes,
        base_label=str(base_dir),
        new_label=str(new_dir),
    )
    comparison.base_agent, comparison.new_agent = base_manifest.options.agent, new_manifest.options.agent
    comparison.base_user, comparison.new_user = user_condition(base_frame), user_condition(new_frame)
    dates, outcomes = {**frame_dates(base_frame), **frame_dates(new_frame)}, comparison.task_outcomes
    base_cutoff = model_cutoffs(base_manifest.models).get(comparison.base_model)
    new_cutoff = model_cutoffs(new_manifest.models).get(comparison.new_model)
    comparison.base_after_cutoff = side_split(outcomes, False, dates, base_cutoff)
    comparison.new_after_cutoff = side_split(outcomes, True, dates, new_cutoff)
    if (note := user_note(comparison.base_user, comparison.new_user)) is not None:
        comparison.notes.insert(0, note)
    if only_base or only_new:
        comparison.tasks_only_base, comparison.tasks_only_new = only_base, only_new
        comparison.notes.insert(0, subset_note(only_base, only_new))
    base_weights, new_weights = _weights(base_dir), _weights(new_dir)
    if base_weights and new_weights and base_weights != new_weights:
        comparison.notes.append(
            f"composite weights differ (base {base_weights}, new {new_weights}): "
            "re-score both runs with `evalkit score` and one config before trusting the composite"
        )
    payload = json.dumps(comparison.model_dump(), indent=2) + "\n"
    if json_out == Path("-"):
        console.out(payload, highlight=False)
    else:
        print_comparison(comparison, console)
    if json_out is not None and json_out != Path("-"):
        write_atomic(json_out, payload)
    if markdown is not None:
        write_atomic(markdown, markdown_report(comparison))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit_report(comparison).write(str(junit), pretty=True)
    return comparison.exit_code
