"""`evalkit compare BASE NEW`: did the new run get worse than the base run, beyond noise?

Attempts are paired by (task, sample), so each task is its own control: the question is whether
the same tasks got worse, not whether two sets of numbers differ. Tasks, not samples, are the
unit drawn from a population, so intervals and bootstrap p-values resample tasks with their paired
differences (samples averaged per task first, as in `summary.json`), seeded so that a report
reproduces.

- resolved: exact McNemar test on the discordant attempt pairs (one-sided, "new worse"), and a
  paired bootstrap interval of the rate difference;
- quality, efficiency, interaction, composite: mean paired difference, paired bootstrap interval,
  one-sided bootstrap p-value (share of resampled mean differences ≥ 0).

An axis regresses iff p < alpha AND its drop exceeds max_drop: significance alone flags tiny drops
on large suites, size alone flags noise on small ones. Every axis's verdict is reported; only the
deciding axes (default resolved and composite) set the exit code, because the other axes are in
the composite already and each extra deciding test adds false alarms. The interval is two-sided
(1 − alpha) while the test is one-sided at alpha, so an interval touching 0 can go with a
regression at the margin. With several samples per task McNemar counts attempt pairs as if
independent (the bootstrap, over tasks, does not). Pairs with an error (`endpoint_error` or
`sandbox_error`) on either side are left out: they say nothing about the model, and
`evalkit run --run-id ID --retry-errors` runs them again.

Below about 20 tasks the percentile bootstrap runs liberal (measured: about 2 × alpha false
alarms at 8 tasks, about alpha at 20 and 50); the comparison says so in a note.

An integrity section (`compare_integrity`) counts each side's paired attempts the integrity scan
failed or warned about, and lists the pairs newly failed in the new run; it never sets the exit
code, since a failing verdict is already unresolved. Beside this module: the record
(`compare_record`), the tests (`compare_stats`), the terminal, markdown and JUnit outputs
(`compare_output`), and which tasks two runs share (`compare_tasks`: runs whose suites loaded
different tasks are refused unless `--allow-subset`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console

from evalkit.errors import EvalkitError
from evalkit.files import write_atomic
from evalkit.records import ERROR_STOP_REASONS
from evalkit.report.compare_integrity import COLUMNS as INTEGRITY_COLUMNS
from evalkit.report.compare_integrity import compare_integrity, has_integrity, with_integrity
from evalkit.report.compare_output import (
    comparison_table,
    headline,
    junit_report,
    markdown_report,
    print_comparison,
    verdict_text,
)
from evalkit.report.compare_record import AxisResult, Comparison, Flip, TaskOutcome, Verdict
from evalkit.report.compare_stats import axis_verdict, mcnemar_exact, paired_bootstrap
from evalkit.report.compare_tasks import loaded_task_difference, run_manifest, subset_note
from evalkit.results import load_results
from evalkit.scoring.run_scores import SUMMARY
from evalkit.wording import counted

RESOLVED = "resolved"
CONTINUOUS_AXES = ("quality", "efficiency", "interaction", "composite")
AXES = (RESOLVED, *CONTINUOUS_AXES)
DECIDING_AXES = ("resolved", "composite")
REQUIRED_COLUMNS = ("task_id", "model", "sample", *AXES)
KEY = ["task_id", "sample"]
FEW_TASKS = 20  # below this the percentile bootstrap runs liberal (≈ 2 × alpha false alarms at 8 tasks)

__all__ = [  # the record and the outputs live beside this module; imported from here as before
    "AxisResult",
    "Comparison",
    "Flip",
    "TaskOutcome",
    "Verdict",
    "compare_command",
    "compare_runs",
    "comparison_table",
    "headline",
    "junit_report",
    "markdown_report",
    "mcnemar_exact",
    "paired_bootstrap",
    "print_comparison",
    "verdict_text",
]


# -- input checks and pairing ----------------------------------------------------------------------
def check_levels(max_drop: float, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise EvalkitError(f"--alpha {alpha}: give a significance level between 0 and 1, e.g. 0.05")
    if not 0 <= max_drop < 1:
        raise EvalkitError(f"--max-drop {max_drop}: give a drop on the axes' 0–1 scale, e.g. 0.02")


def check_suites(base_suite: str, new_suite: str, base_label: str, new_label: str) -> None:
    if base_suite != new_suite:
        raise EvalkitError(
            f"{new_label}: suite `{new_suite}` is not the base run's `{base_suite}` ({base_label}); "
            "compare two runs of the same suite"
        )


def _model_names(frame: pd.DataFrame, label: str) -> list[str]:
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise EvalkitError(f"{label}: no column {', '.join(missing)}; load runs with evalkit.load_results")
    if frame.empty:
        raise EvalkitError(f"{label}: no scored attempt to compare")
    return sorted(frame["model"].astype(str).unique())


def pick_models(
    base: pd.DataFrame,
    new: pd.DataFrame,
    base_model: str | None,
    new_model: str | None,
    base_label: str = "base run",
    new_label: str = "new run",
) -> tuple[str, str]:
    """One model per run: the one given; else the run's only model (so one-model runs pair, as
    "model A vs B" or "agent v1 vs v2"); else the model named for the other run, if this run has it."""
    base_names, new_names = _model_names(base, base_label), _model_names(new, new_label)
    chosen = []
    for given, other_given, names, label, option in (
        (base_model, new_model, base_names, base_label, "--base-model"),
        (new_model, base_model, new_names, new_label, "--new-model"),
    ):
        name = given or (names[0] if len(names) == 1 else other_given if other_given in names else None)
        if name is None:
            raise EvalkitError(f"{label}: several models ({', '.join(names)}); choose one with {option}")
        if name not in names:
            raise EvalkitError(f"{label}: no model `{name}` (it has {', '.join(names)}); fix {option}")
        chosen.append(name)
    return chosen[0], chosen[1]


@dataclass(frozen=True)
class _Pairs:
    """The paired attempts, one row per (task, sample) in that order; the columns of `base` and
    `new` follow AXES (resolved as 0/1); `*_integrity` are (verdicts, comma-joined kinds)."""

    task_ids: np.ndarray
    samples: np.ndarray
    base: np.ndarray
    new: np.ndarray
    base_integrity: tuple[np.ndarray, np.ndarray]
    new_integrity: tuple[np.ndarray, np.ndarray]
    unpaired_base: int
    unpaired_new: int
    harness_failures: int


def _pair(base: pd.DataFrame, new: pd.DataFrame, base_label: str, new_label: str) -> _Pairs:
    stop = ["stop_reason"] if "stop_reason" in base and "stop_reason" in new else []
    columns = [*KEY, *AXES, *stop, *INTEGRITY_COLUMNS]
    base, new = with_integrity(base), with_integrity(new)
    try:
        rows = pd.merge(base[columns], new[columns], on=KEY, suffixes=("_base", "_new"), validate="one_to_one")
    except pd.errors.MergeError:
        raise EvalkitError(
            f"{base_label} / {new_label}: an attempt (task, sample) of one model appears twice; "
            "load runs with evalkit.load_results"
        ) from None
    failures = np.zeros(len(rows), dtype=bool)
    if stop:
        stops = list(ERROR_STOP_REASONS)
        failures = np.isin(rows["stop_reason_base"].to_numpy(), stops)
        failures |= np.isin(rows["stop_reason_new"].to_numpy(), stops)
    task_ids = rows["task_id"].to_numpy(dtype=str)[~failures]
    samples = rows["sample"].to_numpy(dtype=int)[~failures]
    order = np.lexsort((samples, task_ids))

    def values(side: str) -> np.ndarray:
        return rows[[f"{a}_{side}" for a in AXES]].to_numpy(dtype=float)[~failures][order]

    def integrity(side: str) -> tuple[np.ndarray, np.ndarray]:
        verdicts, kinds = (rows[f"{c}_{side}"].to_numpy(dtype=str)[~failures][order] for c in INTEGRITY_COLUMNS)
        return verdicts, kinds

    return _Pairs(
        task_ids[order],
        samples[order],
        values("base"),
        values("new"),
        integrity("base"),
        integrity("new"),
        len(base) - len(rows),
        len(new) - len(rows),
        int(failures.sum()),
    )


def _task_means(pairs: _Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tasks (sorted), their paired samples, and per task each axis averaged over its samples
    on both sides; a pair missing a value on either side counts on neither (NaN when none has)."""
    tasks, codes = np.unique(pairs.task_ids, return_inverse=True)
    valid = ~(np.isnan(pairs.base) | np.isnan(pairs.new))
    counts = np.zeros((len(tasks), len(AXES)))
    np.add.at(counts, codes, valid)

    def means(values: np.ndarray) -> np.ndarray:
        sums = np.zeros_like(counts)
        np.add.at(sums, codes, np.where(valid, values, 0.0))
        with np.errstate(invalid="ignore"):
            return sums / counts

    return tasks, np.bincount(codes), means(pairs.base), means(pairs.new)


# -- the comparison --------------------------------------------------------------------------------
def compare_runs(
    base: pd.DataFrame,
    new: pd.DataFrame,
    *,
    max_drop: float,
    alpha: float,
    base_model: str | None,
    new_model: str | None,
    base_suite: str,
    new_suite: str,
    deciding_axes: Sequence[str] = DECIDING_AXES,
    resamples: int = 10_000,
    seed: int = 0,
    base_label: str = "base run",
    new_label: str = "new run",
) -> Comparison:
    """Compare two runs' attempt tables (`evalkit.load_results`), paired by (task, sample).

    Every axis gets a verdict; only `deciding_axes` (default resolved and composite) make
    `Comparison.regression` and the exit code. Raises EvalkitError on unusable input (different
    suites, no model to choose, no common pair); the labels name the runs in those messages.
    `resamples` and `seed` drive every bootstrap."""
    unknown = sorted(set(deciding_axes) - set(AXES))
    if unknown:
        raise ValueError(f"deciding_axes: unknown axis {', '.join(unknown)} (choose from {', '.join(AXES)})")
    check_levels(max_drop, alpha)
    check_suites(base_suite, new_suite, base_label, new_label)
    chosen_base, chosen_new = pick_models(base, new, base_model, new_model, base_label, new_label)
    pairs = _pair(
        base[base["model"].astype(str) == chosen_base],
        new[new["model"].astype(str) == chosen_new],
        base_label,
        new_label,
    )
    if not len(pairs.task_ids):
        why = f", {pairs.harness_failures} left out as endpoint or sandbox errors" if pairs.harness_failures else ""
        raise EvalkitError(
            f"{new_label}: no (task, sample) pair in common with {base_label}{why}; compare runs of the same tasks"
        )

    axes, notes = [], []
    tasks, samples_per_task, base_means, new_means = _task_means(pairs)
    if len(tasks) < FEW_TASKS:
        notes.append(
            f"only {counted(len(tasks), 'paired task')}: bootstrap p-values run liberal below {FEW_TASKS} tasks "
            "(the exact McNemar test on resolved does not); read the continuous axes' verdicts as indicative"
        )
    resolved_base, resolved_new = pairs.base[:, 0] == 1, pairs.new[:, 0] == 1
    for column, axis in enumerate(AXES):
        both = ~(np.isnan(base_means[:, column]) | np.isnan(new_means[:, column]))
        if not both.any():
            notes.append(f"{axis}: no paired values; not compared")
            continue
        base_mean, new_mean = base_means[both, column].mean(), new_means[both, column].mean()
        diff = float(new_mean - base_mean)
        boot = paired_bootstrap(new_means[both, column] - base_means[both, column], 1 - alpha, resamples, seed)
        p_worse, p_better, counts = boot.p_worse, boot.p_better, {}
        if axis == RESOLVED:
            counts = {"base_only": int((resolved_base & ~resolved_new).sum())}
            counts["new_only"] = int((~resolved_base & resolved_new).sum())
            p_worse = mcnemar_exact(counts["base_only"], counts["new_only"])
            p_better = mcnemar_exact(counts["new_only"], counts["base_only"])
        axes.append(
            AxisResult(
                axis=axis,
                test="mcnemar-exact" if axis == RESOLVED else "paired-bootstrap",
                tasks=int(both.sum()),
                base=float(base_mean),
                new=float(new_mean),
                diff=diff,
                ci_low=boot.low,
                ci_high=boot.high,
                p_worse=p_worse,
                p_better=p_better,
                verdict=axis_verdict(diff, p_worse, p_better, alpha, max_drop),
                deciding=axis in deciding_axes,
                **counts,
            )
        )
    missing = [a for a in deciding_axes if a not in {r.axis for r in axes}]
    if missing:
        raise EvalkitError(f"{new_label}: no paired values on the deciding axis {', '.join(missing)}")

    recorded = (has_integrity(base), has_integrity(new))
    for label, known in zip((base_label, new_label), recorded, strict=True):
        if not known:
            notes.append(f"{label}: no integrity record (scored before integrity): its attempts count as clean")

    def flips(mask: np.ndarray) -> list[Flip]:
        return [Flip(task_id=pairs.task_ids[i], sample=int(pairs.samples[i])) for i in np.flatnonzero(mask)]

    return Comparison(
        suite=base_suite,
        base_run=_run_id(base, base_label),
        new_run=_run_id(new, new_label),
        base_model=chosen_base,
        new_model=chosen_new,
        pairs=len(pairs.task_ids),
        tasks=len(tasks),
        unpaired_base=pairs.unpaired_base,
        unpaired_new=pairs.unpaired_new,
        harness_failures=pairs.harness_failures,
        max_drop=max_drop,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        deciding_axes=list(deciding_axes),
        axes=axes,
        lost=flips(resolved_base & ~resolved_new),
        gained=flips(~resolved_base & resolved_new),
        task_outcomes=[
            TaskOutcome(task_id=t, samples=int(n), base_resolved=float(b), new_resolved=float(w))
            for t, n, b, w in zip(tasks, samples_per_task, base_means[:, 0], new_means[:, 0], strict=True)
        ],
        integrity=compare_integrity(pairs.task_ids, pairs.samples, pairs.base_integrity, pairs.new_integrity, recorded),
        notes=notes,
    )


def _run_id(frame: pd.DataFrame, label: str) -> str:
    ids = frame["run_id"].dropna().unique() if "run_id" in frame else []
    return str(ids[0]) if len(ids) == 1 else label


# -- the command body ------------------------------------------------------------------------------
def _weights(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / SUMMARY).read_text()).get("weights")
    except (OSError, ValueError, AttributeError):
        return None


def compare_command(
    base_dir: Path,
    new_dir: Path,
    max_drop: float,
    alpha: float,
    markdown: Path | None,
    junit: Path | None,
    base_model: str | None,
    new_model: str | None,
    console: Console,
    json_out: Path | None = None,
    *,
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
    only_base, only_new = loaded_task_difference(
        base_manifest, new_manifest, str(base_dir), str(new_dir), allow_subset
    )
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
