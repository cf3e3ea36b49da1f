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
independent (the bootstrap, over tasks, does not). Pairs with a harness failure (`sandbox_error`)
on either side are left out: they say nothing about the model, and resuming the run retries them.

Below about 20 tasks the percentile bootstrap runs liberal (measured: about 2 × alpha false
alarms at 8 tasks, about alpha at 20 and 50); the comparison says so in a note.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from junitparser import Failure, JUnitXml, TestCase, TestSuite
from pydantic import BaseModel, Field, computed_field
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from scipy import stats

from evalkit.errors import EvalkitError
from evalkit.results import load_results
from evalkit.runs.store import RERUN_STOP_REASONS, RESULTS, RunStore
from evalkit.scoring.aggregate import bootstrap_mean
from evalkit.scoring.predictions import write_atomic
from evalkit.scoring.run_scores import SUMMARY

RESOLVED = "resolved"
CONTINUOUS_AXES = ("quality", "efficiency", "interaction", "composite")
AXES = (RESOLVED, *CONTINUOUS_AXES)
DECIDING_AXES = ("resolved", "composite")
REQUIRED_COLUMNS = ("task_id", "model", "sample", *AXES)
KEY = ["task_id", "sample"]
FEW_TASKS = 20  # below this the percentile bootstrap runs liberal (≈ 2 × alpha false alarms at 8 tasks)

Verdict = Literal["regression", "small_drop", "improvement", "no_change"]


# -- the comparison record -----------------------------------------------------------------------
class AxisResult(BaseModel):
    """One axis, base against new, over the paired tasks."""

    axis: str
    test: Literal["mcnemar-exact", "paired-bootstrap"]
    tasks: int  # tasks with a value on both sides
    base: float  # mean over tasks, samples averaged per task first
    new: float
    diff: float  # new − base
    ci_low: float  # paired bootstrap percentile interval of diff, level 1 − alpha
    ci_high: float
    p_worse: float  # one-sided p-value of "new is worse"
    p_better: float  # one-sided p-value of "new is better"
    verdict: Verdict
    deciding: bool
    base_only: int | None = None  # resolved only: attempt pairs resolved in base and not in new
    new_only: int | None = None  # ... and the reverse

    @computed_field
    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


class Flip(BaseModel):
    task_id: str
    sample: int


class TaskOutcome(BaseModel):
    """One paired task's resolved rate on both sides (the JUnit test case of that task)."""

    task_id: str
    samples: int
    base_resolved: float
    new_resolved: float

    @computed_field
    @property
    def dropped(self) -> bool:
        return self.new_resolved < self.base_resolved


class Comparison(BaseModel):
    """Everything `evalkit compare` found; `model_dump()` is its JSON form."""

    suite: str
    base_run: str
    new_run: str
    base_model: str
    new_model: str
    pairs: int  # (task, sample) pairs compared
    tasks: int
    unpaired_base: int  # attempts of the base with no partner in the new run, ignored
    unpaired_new: int
    harness_failures: int  # pairs left out: a sandbox_error on either side
    max_drop: float
    alpha: float
    resamples: int
    seed: int
    deciding_axes: list[str]
    axes: list[AxisResult]
    lost: list[Flip]  # resolved in base, unresolved in new
    gained: list[Flip]  # unresolved in base, resolved in new
    task_outcomes: list[TaskOutcome]
    notes: list[str] = Field(default_factory=list)

    @computed_field
    @property
    def regressions(self) -> list[str]:
        """The deciding axes that regressed."""
        return [a.axis for a in self.axes if a.deciding and a.regression]

    @computed_field
    @property
    def regression(self) -> bool:
        return bool(self.regressions)

    @property
    def exit_code(self) -> int:
        return 1 if self.regression else 0

    def axis(self, name: str) -> AxisResult:
        return next(a for a in self.axes if a.axis == name)


# -- statistics (pure) -------------------------------------------------------------------------
def mcnemar_exact(worse: int, better: int) -> float:
    """One-sided exact McNemar p-value that new is worse: P(X ≥ worse) for X ~ Binomial(worse +
    better, 1/2), the discordant pairs being equally likely either way under no change."""
    total = worse + better
    if total == 0:
        return 1.0
    return float(stats.binomtest(worse, total, 0.5, alternative="greater").pvalue)


@dataclass(frozen=True)
class BootstrapResult:
    low: float
    high: float
    p_worse: float  # share of resampled mean differences ≥ 0 (the "new worse" hypothesis)
    p_better: float  # share ≤ 0


def paired_bootstrap(diffs: Sequence[float], confidence: float, resamples: int, seed: int) -> BootstrapResult:
    """Percentile bootstrap of the mean paired difference (new − base per task), resampling tasks.
    Constant differences need no resampling; a single task cannot show anything (p = 1)."""
    data = np.asarray(diffs, dtype=float)
    mean = float(data.mean())
    if data.size < 2:
        return BootstrapResult(mean, mean, 1.0, 1.0)
    if np.all(data == data[0]):
        return BootstrapResult(mean, mean, float(mean >= 0), float(mean <= 0))
    low, high, spread = bootstrap_mean(data, confidence, resamples, seed)
    return BootstrapResult(
        low,
        high,
        float(np.mean(spread >= 0)),
        float(np.mean(spread <= 0)),
    )


def _verdict(diff: float, p_worse: float, p_better: float, alpha: float, max_drop: float) -> Verdict:
    if p_worse < alpha:
        return "regression" if -diff > max_drop else "small_drop"
    if p_better < alpha and diff > max_drop:
        return "improvement"
    return "no_change"


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
    `new` follow AXES (resolved as 0/1)."""

    task_ids: np.ndarray
    samples: np.ndarray
    base: np.ndarray
    new: np.ndarray
    unpaired_base: int
    unpaired_new: int
    harness_failures: int


def _pair(base: pd.DataFrame, new: pd.DataFrame, base_label: str, new_label: str) -> _Pairs:
    stop = ["stop_reason"] if "stop_reason" in base and "stop_reason" in new else []
    columns = [*KEY, *AXES, *stop]
    try:
        rows = pd.merge(base[columns], new[columns], on=KEY, suffixes=("_base", "_new"), validate="one_to_one")
    except pd.errors.MergeError:
        raise EvalkitError(
            f"{base_label} / {new_label}: an attempt (task, sample) of one model appears twice; "
            "load runs with evalkit.load_results"
        ) from None
    failures = np.zeros(len(rows), dtype=bool)
    if stop:
        stops = list(RERUN_STOP_REASONS)
        failures = np.isin(rows["stop_reason_base"].to_numpy(), stops)
        failures |= np.isin(rows["stop_reason_new"].to_numpy(), stops)
    task_ids = rows["task_id"].to_numpy(dtype=str)[~failures]
    samples = rows["sample"].to_numpy(dtype=int)[~failures]
    order = np.lexsort((samples, task_ids))

    def values(side: str) -> np.ndarray:
        return rows[[f"{a}_{side}" for a in AXES]].to_numpy(dtype=float)[~failures][order]

    return _Pairs(
        task_ids[order],
        samples[order],
        values("base"),
        values("new"),
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
        why = f", {pairs.harness_failures} left out as harness failures" if pairs.harness_failures else ""
        raise EvalkitError(
            f"{new_label}: no (task, sample) pair in common with {base_label}{why}; compare runs of the same tasks"
        )

    axes, notes = [], []
    tasks, samples_per_task, base_means, new_means = _task_means(pairs)
    if len(tasks) < FEW_TASKS:
        notes.append(
            f"only {len(tasks)} paired tasks: bootstrap p-values run liberal below {FEW_TASKS} tasks "
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
                verdict=_verdict(diff, p_worse, p_better, alpha, max_drop),
                deciding=axis in deciding_axes,
                **counts,
            )
        )
    missing = [a for a in deciding_axes if a not in {r.axis for r in axes}]
    if missing:
        raise EvalkitError(f"{new_label}: no paired values on the deciding axis {', '.join(missing)}")

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
        notes=notes,
    )


def _run_id(frame: pd.DataFrame, label: str) -> str:
    ids = frame["run_id"].dropna().unique() if "run_id" in frame else []
    return str(ids[0]) if len(ids) == 1 else label


# -- rendering -------------------------------------------------------------------------------------
_VERDICT_TEXT = {
    "small_drop": "drop within --max-drop",
    "improvement": "improved",
    "no_change": "no significant change",
}


def verdict_text(axis: AxisResult) -> str:
    if axis.regression:
        return "REGRESSION" if axis.deciding else "worse (not deciding)"
    return _VERDICT_TEXT[axis.verdict]


def headline(comparison: Comparison) -> str:
    """`No regression` or `REGRESSION in resolved, composite`, plus non-deciding axes that got worse."""
    text = f"REGRESSION in {', '.join(comparison.regressions)}" if comparison.regression else "No regression"
    also = [a.axis for a in comparison.axes if a.regression and not a.deciding]
    return f"{text}; also worse (not deciding): {', '.join(also)}" if also else text


def _cells(axis: AxisResult) -> list[str]:
    p = "<0.001" if axis.p_worse < 0.001 else f"{axis.p_worse:.3f}"
    return [
        axis.axis,
        f"{axis.base:.3f}",
        f"{axis.new:.3f}",
        f"{axis.diff:+.3f}",
        f"[{axis.ci_low:+.3f}, {axis.ci_high:+.3f}]",
        p,
        verdict_text(axis),
    ]


def _columns(comparison: Comparison) -> list[str]:
    return ["axis", "base", "new", "diff", f"{1 - comparison.alpha:.0%} CI", "p (new worse)", "verdict"]


def _flip_names(comparison: Comparison, flips: list[Flip]) -> list[str]:
    several = any(t.samples > 1 for t in comparison.task_outcomes)
    return [f"{f.task_id} #{f.sample}" if several else f.task_id for f in flips]


def _setting(comparison: Comparison) -> str:
    c = comparison
    unpaired = f"; unpaired attempts ignored: {c.unpaired_base} base, {c.unpaired_new} new"
    failures = f"; {c.harness_failures} pairs with a harness failure left out" if c.harness_failures else ""
    return (
        f"suite {c.suite}: base {c.base_run} ({c.base_model}) → new {c.new_run} ({c.new_model}), "
        f"{c.pairs} pairs over {c.tasks} tasks{unpaired if c.unpaired_base or c.unpaired_new else ''}{failures}. "
        f"Regression = one-sided p < {c.alpha:g} and a drop over {c.max_drop:g}; "
        f"the exit code follows {', '.join(c.deciding_axes)}."
    )


def comparison_table(comparison: Comparison) -> Table:
    table = Table(title=escape(f"{comparison.base_run} → {comparison.new_run}"))
    for column in _columns(comparison):
        table.add_column(escape(column), justify="left" if column in ("axis", "verdict") else "right")
    for axis in comparison.axes:
        style = "bold red" if axis.regression and axis.deciding else "yellow" if axis.regression else None
        style = "green" if axis.verdict == "improvement" else style
        table.add_row(*(escape(cell) for cell in _cells(axis)), style=style)
    return table


def print_comparison(comparison: Comparison, console: Console) -> None:
    console.print(comparison_table(comparison))
    console.print(escape(_setting(comparison)), highlight=False, soft_wrap=True)
    for title, flips in (("resolved → unresolved", comparison.lost), ("unresolved → resolved", comparison.gained)):
        names = _flip_names(comparison, flips)
        console.print(f"{title} ({len(names)}): {escape(', '.join(names)) or '—'}", highlight=False, soft_wrap=True)
    for note in comparison.notes:
        console.print(f"[yellow]note[/] {escape(note)}", highlight=False, soft_wrap=True)
    style = "bold red" if comparison.regression else "bold green"
    console.print(f"[{style}]{escape(headline(comparison))}[/]", highlight=False, soft_wrap=True)


def markdown_report(comparison: Comparison) -> str:
    """A summary for a CI job summary or a PR comment: headline, table, flips, notes."""
    columns = _columns(comparison)
    lines = [
        f"## {headline(comparison)}",
        "",
        _setting(comparison),
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "|".join("---" if c in ("axis", "verdict") else "---:" for c in columns) + "|",
    ]
    for axis in comparison.axes:
        cells = _cells(axis)
        if axis.regression:
            cells[-1] = f"**{cells[-1]}**"
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for title, flips in (("Resolved → unresolved", comparison.lost), ("Unresolved → resolved", comparison.gained)):
        names = _flip_names(comparison, flips)
        listed = ", ".join(f"`{name}`" for name in names) or "none"
        lines += [f"**{title} ({len(names)}):** {listed}", ""]
    lines += [f"- note: {note}" for note in comparison.notes]
    return "\n".join(lines).rstrip() + "\n"


def junit_report(comparison: Comparison) -> JUnitXml:
    """One test case per paired task (failing when its resolved rate dropped: resolved →
    unresolved with one sample) and one per deciding axis (failing when that axis regressed)."""
    xml = JUnitXml("evalkit compare")
    tasks = TestSuite(f"{comparison.suite}: tasks")
    for outcome in comparison.task_outcomes:
        case = TestCase(outcome.task_id, classname="evalkit.compare.tasks")
        if outcome.dropped:
            if outcome.samples == 1:
                message = "resolved in the base run, unresolved in the new run"
            else:
                message = (
                    f"resolved rate {outcome.base_resolved:.2f} → {outcome.new_resolved:.2f} "
                    f"over {outcome.samples} samples"
                )
            case.result = [Failure(message)]
        tasks.add_testcase(case)
    axes = TestSuite(f"{comparison.suite}: axes")
    for axis in comparison.axes:
        if not axis.deciding:
            continue
        case = TestCase(axis.axis, classname="evalkit.compare.axes")
        if axis.regression:
            failure = Failure(
                f"{axis.axis} {axis.base:.3f} → {axis.new:.3f} ({axis.diff:+.3f}, "
                f"CI [{axis.ci_low:+.3f}, {axis.ci_high:+.3f}], p = {axis.p_worse:.4f})"
            )
            failure.text = headline(comparison)
            case.result = [failure]
        axes.add_testcase(case)
    for suite in (tasks, axes):
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    return xml


# -- the command body ------------------------------------------------------------------------------
def _suite_of(run_dir: Path) -> str:
    if not run_dir.is_dir():
        raise EvalkitError(f"{run_dir}: no such run folder; give a run folder such as reports/runs/<run_id>")
    manifest = RunStore(run_dir).read_manifest()
    if manifest is None:
        raise EvalkitError(f"{run_dir}: not an evalkit run folder (no run.json)")
    if not (run_dir / RESULTS).exists():
        raise EvalkitError(f"{run_dir}: no {RESULTS}; no attempt has finished in this run yet")
    return manifest.suite


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
) -> int:
    """Compare two run folders; print, write the requested reports, and return the exit code
    (0 no regression, 1 regression). Unusable input raises EvalkitError (exit 2) before any
    output. `json_out` of `-` prints the JSON instead of the table. An unscored run is scored
    first, as `evalkit.load_results` does."""
    check_levels(max_drop, alpha)
    base_suite, new_suite = _suite_of(base_dir), _suite_of(new_dir)
    check_suites(base_suite, new_suite, str(base_dir), str(new_dir))
    comparison = compare_runs(
        load_results(base_dir),
        load_results(new_dir),
        max_drop=max_drop,
        alpha=alpha,
        base_model=base_model,
        new_model=new_model,
        base_suite=base_suite,
        new_suite=new_suite,
        deciding_axes=deciding_axes,
        base_label=str(base_dir),
        new_label=str(new_dir),
    )
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
