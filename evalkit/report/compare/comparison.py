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

An integrity section (`integrity`) counts each side's paired attempts the integrity scan
failed or warned about, and lists the pairs newly failed in the new run; it never sets the exit
code, since a failing verdict is already unresolved. Beside this module, one job each: the record
(`findings`), the pairing of attempts and the checks on what is compared (`pairs`), the tests
(`significance`), the terminal, markdown and JUnit outputs (`output`), which tasks two runs share
(`loaded_tasks`: runs whose suites loaded different tasks are refused unless `--allow-subset`),
the simulated-user condition of each side (`user_condition`), the knowledge-cutoff rows (`cutoff`),
and the command over two run folders with its files (`command`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.errors import EvalkitError
from evalkit.report.compare.findings import AxisResult, AxisVerdict, Comparison, Flip, TaskOutcome
from evalkit.report.compare.integrity import compare_integrity, has_integrity
from evalkit.report.compare.output import (
    comparison_table,
    headline,
    junit_report,
    markdown_report,
    print_comparison,
    verdict_text,
)
from evalkit.report.compare.pairs import (
    AXES,
    CONTINUOUS_AXES,
    RESOLVED,
    check_levels,
    check_suites,
    pair_attempts,
    pick_models,
    task_means,
)
from evalkit.report.compare.significance import axis_verdict, mcnemar_exact, paired_bootstrap
from evalkit.wording import counted

DECIDING_AXES = ("resolved", "composite")
MAX_DROP, ALPHA = 0.02, 0.05  # the defaults of `evalkit compare` and of `evalkit run --baseline`
FEW_TASKS = 20  # below this the percentile bootstrap runs liberal (≈ 2 × alpha false alarms at 8 tasks)

__all__ = [  # the record, the pairing, the tests and the outputs live beside this module
    "AXES",
    "CONTINUOUS_AXES",
    "AxisResult",
    "AxisVerdict",
    "Comparison",
    "Flip",
    "TaskOutcome",
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
    pairs = pair_attempts(
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
    tasks, samples_per_task, base_means, new_means = task_means(pairs)
    if len(tasks) < FEW_TASKS:
        notes.append(
            f"only {counted(len(tasks), 'paired task')}: bootstrap p-values run liberal below {FEW_TASKS} tasks "
            "(the exact McNemar test on resolved does not); read the continuous axes' verdicts as indicative"
        )
    resolved_base, resolved_new = pairs.base[:, 0] == 1, pairs.new[:, 0] == 1
    mixed = False  # an axis applies on one side only: the two composites weigh different axes
    for column, axis in enumerate(AXES):
        both = ~(np.isnan(base_means[:, column]) | np.isnan(new_means[:, column]))
        if not both.any():  # e.g. an agent that does not produce the evidence the axis needs
            notes.append(f"{axis}: n/a on one run or both (no paired values); not compared")
            mixed |= bool(np.isnan(pairs.base[:, column]).all() != np.isnan(pairs.new[:, column]).all())
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
    if mixed and "composite" in {r.axis for r in axes}:
        notes.append("composite: each run's weights are renormalised over the axes that apply to it, which differ")
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
