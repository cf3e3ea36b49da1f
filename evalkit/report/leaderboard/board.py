"""The leaderboard as data (`Leaderboard`, `SuiteBoard`, `ModelRow`, ...) and `build_leaderboard`, which
computes it: the Pareto frontier, each model's row, each suite's board and matrix.

Pure computation over loaded runs (`loaded_runs`); nothing here reads a template or writes a file.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import shlex
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from evalkit.agent.agent_table import DEFAULT_AGENT
from evalkit.axes import LABELS, MEAN_AXES, REVIEWER
from evalkit.calibration.figures import CAUGHT
from evalkit.calibration.reviewer_calibration import ReviewerCalibration
from evalkit.cutoff import AFTER_CUTOFF, CutoffSplit
from evalkit.errors import EvalkitError
from evalkit.report.leaderboard.loaded_runs import (
    BENCHMARK_LABELS,
    AttemptRef,
    LoadedRun,
    Published,
    TaskLoading,
    attempt_integrity,
    attempt_resolved,
    attempt_tests_passed,
    task_loading,
)
from evalkit.report.leaderboard.pareto import pareto_frontier
from evalkit.report.leaderboard.user_pairs import UserFigures, UserPairing, user_rows
from evalkit.runs.paths import SUMMARY
from evalkit.scoring.cutoff_figures import model_cutoffs, with_cutoff_splits
from evalkit.scoring.run_scores import results_frame, summarize
from evalkit.stats.reference import shipped_reference
from evalkit.stats.suite_stats import MEASURES, task_figures
from evalkit.stats.suite_stats import summarize as summarize_figures
from evalkit.tasks import load_suite

AXES = (*MEAN_AXES, REVIEWER)
# the compact rows of `attempts` in the page; `integrity` is the verdict, `flags` the kinds flagged
ATTEMPT_COLUMNS = ("n", "task", "model", "sample", "status", "run", "integrity", "flags")
GroupBy = Literal["none", "agent", "model"]  # the rows in one table, or in a group per agent or per model
GROUP_BY: tuple[str, ...] = ("none", "agent", "model")


# -- what the page shows --------------------------------------------------------------------------
class Interval(BaseModel):
    mean: float | None
    ci95: list[float] | None
    not_applicable: bool = False  # the axis applies to none of the attempts (their agent lacks its evidence): "n/a"

    @model_serializer(mode="wrap")
    def _as_in_the_summary(self, handler: SerializerFunctionWrapHandler) -> dict:  # `not_applicable` only if true
        data = handler(self)
        return data if self.not_applicable else {k: v for k, v in data.items() if k != "not_applicable"}


class IntegrityCounts(BaseModel):
    """A model's attempts by integrity verdict (summary.json's `integrity` entry)."""

    fail: int = 0
    warn: int = 0
    unresolved_by_integrity: int = 0  # the hidden tests passed, the failing verdict withheld it
    kinds: dict[str, int] = Field(default_factory=dict)  # flag kind → attempts flagged with it


class RunInfo(BaseModel):
    run_id: str
    path: str
    suite: str
    suite_path: str
    models: list[str]
    samples: int
    attempts: int
    created_at: str
    updated_at: str
    scored_at: str | None
    weights: dict[str, float] | None
    tasks_loaded: int  # of the suite's tasks, when the run started (run.json)
    tasks_total: int


class ModelRow(BaseModel):
    """One leaderboard row: a model's figures in one run. A model tried in several runs of a suite
    (a baseline and a new run) gets a row per run, labelled with the run, never a pooled one."""

    model: str
    label: str  # the model, or "model (run_id)" when the model recurs in another run of the suite
    agent: str = DEFAULT_AGENT  # what worked on the tasks (`--agent`; `command:` agents folded, cut at 80)
    api_model: str | None
    run_id: str
    attempts: int
    tasks: int
    samples: int
    resolved: int
    errors: int  # attempts that ended in endpoint_error or sandbox_error: in no figure of the row
    error_kinds: dict[str, int] = Field(default_factory=dict)  # those errors by stop reason
    # task → "approximate: Python 3.6 wanted, 3.9 used (bullseye)", for tasks whose SWE-bench
    # environment had no exact offline match (the row's figures include them; the badge says so)
    approximate_env: dict[str, str] = Field(default_factory=dict)
    scored_attempts: int | None = None  # the attempts the figures are over (None: a summary from before)
    resolved_rate: Interval
    pass_at_k: dict[str, float]
    best_of_k: dict[str, float]
    axes: dict[str, Interval | None]
    median_tokens: float | None
    median_completion_tokens: float | None  # per attempt, attempts ended by an error left out
    cost_usd: float | None
    cost_per_attempt: float | None
    cost_per_task: float | None
    cost_per_resolved: float | None
    stop_reasons: dict[str, int]
    integrity: IntegrityCounts
    published: dict[str, float]
    pareto: bool = False
    source: str  # "summary.json", or "recomputed" from scores.jsonl when the summary lacks the model
    user: str | None = None  # "simulated": the model could ask a simulated user (`ask_user`); None: it could not
    user_figures: UserFigures | None = None  # its ask rate, informative share and the simulator's cost
    user_pair: UserPairing | None = None  # resolved with and without a user, when a run of the other condition pairs
    # resolved on the tasks committed after the model's knowledge cutoff (evalkit/cutoff.py); None: no cutoff,
    # and then left out of leaderboard.json
    after_cutoff: CutoffSplit | None = None

    @model_serializer(mode="wrap")
    def _cutoff_when_known(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        return data if self.after_cutoff is not None else {k: v for k, v in data.items() if k != AFTER_CUTOFF}


class SuiteStats(BaseModel):
    name: str
    path: str
    tasks: int
    skipped: list[str]
    figures: dict[str, dict[str, Any]]
    # task → the names its tests need that its prompt does not give (flagged by `evalkit gather`)
    underspecified: dict[str, str] = Field(default_factory=dict)


class ReviewerEntry(BaseModel):
    """A reviewer whose verdicts a run holds (summary.json's `reviewers`), with its calibration on
    the suite when one was made: how far its scores can be trusted, beside the quality axis's."""

    run_id: str
    reviewer: str
    mode: str
    reviews: int
    failed: int  # reviews without a usable verdict (recorded, never fatal)
    cost_usd: float | None  # None: some review was unpriced
    calibration: ReviewerCalibration | None = None
    calibration_error: str | None = None  # the summary's calibration could not be read
    calibrate: str  # the command that makes (or makes again) the calibration
    caught_gap: float = CAUGHT  # the gap below the reference at which a variant counts as caught


class SuiteBoard(BaseModel):
    name: str
    path: str
    runs: list[str]
    weights: list[dict[str, float]]  # the composite weights the runs were scored with (one entry if all agree)
    models: list[ModelRow]  # by resolved rate, best first
    # the chart's x axis: cost per attempt, or median completion tokens when no model costs anything
    # (local models, the built-in oracle), where a cost axis would be an empty grid
    chart_x: Literal["cost", "tokens"]
    frontier: list[str]  # labels of the rows on the Pareto frontier, by increasing x
    tasks: list[str]
    attempts: list[list[Any]]  # ATTEMPT_COLUMNS: n, task, row in `models`, sample, r/x/f/e, run, verdict, kinds
    stats: SuiteStats | None
    stats_note: str | None
    loading: list[TaskLoading]  # "7 of 8 tasks loaded" and the skipped tasks, per group of runs that agree
    reviewers: list[ReviewerEntry] = Field(default_factory=list)  # per run, the reviewers its verdicts come from


class Leaderboard(BaseModel):
    """Everything the page shows except each attempt's detail (that is in attempts/<n>.js)."""

    generated_at: str
    evalkit_version: str
    attempt_columns: list[str]
    benchmarks: dict[str, str]  # published benchmark key → label
    runs: list[RunInfo]
    suites: list[SuiteBoard]
    measures: dict[str, str]
    reference: dict[str, Any]
    group_by: GroupBy = "none"  # rows shown in groups of one agent or one model (`evalkit report --group-by`)
    axes: list[str] = list(MEAN_AXES)  # the per-model means the page shows, in order (evalkit/axes.py)
    axis_labels: dict[str, str] = dict(LABELS)


# -- figures --------------------------------------------------------------------------------------
def _interval(value: dict | None) -> Interval | None:
    if not value:
        return None
    return Interval(mean=value.get("mean"), ci95=value.get("ci95"), not_applicable=bool(value.get("not_applicable")))


def _model_entry(model: str, run: LoadedRun) -> tuple[dict | None, str]:
    """The model's entry of the run's summary.json, or the same `summarize` over its scores when
    the summary is missing (a run scored by hand) or lacks the model."""
    for entry in (run.summary or {}).get("models", []):
        if entry.get("model") == model:
            return entry, SUMMARY
    frame = results_frame([r for r in run.records if r.model == model], list(run.scores.values()))
    entries = with_cutoff_splits(summarize(frame, "model"), frame, model_cutoffs(run.manifest.models))
    return (entries[0] if entries else None), "recomputed"


def _integrity_counts(model: str, run: LoadedRun) -> IntegrityCounts:
    """The summary's integrity counts recomputed from the scores rows (the records' where a row is
    missing), for a summary.json written before integrity existed."""
    attempts = [(r, run.scores.get(r.key)) for r in run.records if r.model == model]
    reports = [attempt_integrity(record, score) for record, score in attempts]
    return IntegrityCounts(
        fail=sum(report.verdict == "fail" for report in reports),
        warn=sum(report.verdict == "warn" for report in reports),
        unresolved_by_integrity=sum(
            attempt_tests_passed(record, score) and not attempt_resolved(record, score) for record, score in attempts
        ),
        kinds=dict(sorted(Counter(kind for report in reports for kind in report.kinds()).items())),
    )


def _model_row(model: str, label: str, run: LoadedRun, published: Published) -> ModelRow:
    entry, source = _model_entry(model, run)
    entry = entry or {}
    if not entry.get("integrity"):  # a summary.json from before integrity
        entry = {**entry, "integrity": _integrity_counts(model, run).model_dump()}
    records = [r for r in run.records if r.model == model]
    error_kinds = Counter(r.stop_reason for r in records if r.errored)
    completion = [r.usage.get("completion_tokens") for r in records if not r.errored]
    completion = [c for c in completion if isinstance(c, int | float)]
    api_model = (run.manifest.models.get(model) or {}).get("model")
    attempts = entry.get("attempts", len(records))
    scored = entry.get("scored_attempts", attempts)  # errored attempts are in no figure, cost included
    cost = entry.get("cost_usd")
    agents = Counter(r.agent for r in records)
    return ModelRow(
        model=model,
        label=label,
        agent=agents.most_common(1)[0][0] if agents else run.manifest.options.agent,
        api_model=api_model if api_model != model else None,
        run_id=run.manifest.run_id,
        attempts=attempts,
        tasks=entry.get("tasks", len({r.task_id for r in records})),
        samples=entry.get("samples", 0),
        resolved=entry.get("resolved", sum(attempt_resolved(r, run.scores.get(r.key)) for r in records)),
        errors=entry.get("errors", 0),
        error_kinds=entry.get("error_kinds") or dict(sorted(error_kinds.items())),
        approximate_env=dict(sorted({r.task_id: r.environment for r in records if r.environment}.items())),
        scored_attempts=entry.get("scored_attempts"),
        resolved_rate=_interval(entry.get("resolved_rate")) or Interval(mean=None, ci95=None),
        pass_at_k=entry.get("pass_at_k", {}),
        best_of_k=entry.get("best_of_k", {}),
        axes={axis: _interval(entry.get("axes", {}).get(axis)) for axis in AXES},
        median_tokens=entry.get("median_tokens"),
        median_completion_tokens=statistics.median(completion) if completion else None,
        cost_usd=cost,
        cost_per_attempt=None if cost is None or not scored else round(cost / scored, 6),
        cost_per_task=entry.get("cost_per_task"),
        cost_per_resolved=entry.get("cost_per_resolved"),
        stop_reasons=entry.get("stop_reasons", {}),
        integrity=IntegrityCounts.model_validate(entry["integrity"]),
        published={**published.get(api_model or "", {}), **published.get(model, {})},
        source=source,
        after_cutoff=CutoffSplit.model_validate(entry[AFTER_CUTOFF]) if entry.get(AFTER_CUTOFF) else None,
    )


def calibrate_command(reviewer: str, suite_path: str, mode: str) -> str:
    """The command that calibrates `reviewer` on the suite, as a user would type it."""
    command = f"evalkit reviewer calibrate --reviewer {shlex.quote(reviewer)} --suite {shlex.quote(suite_path)}"
    return command if mode == "agentic" else f"{command} --reviewer-mode {shlex.quote(mode)}"


def _reviewer_entries(run: LoadedRun) -> list[ReviewerEntry]:
    """The run's reviewers from its summary.json; a calibration that does not read (written by
    another evalkit) is left out with the reason, never a broken page."""
    entries = []
    for raw in (run.summary or {}).get("reviewers") or []:
        name, mode = str(raw.get("reviewer", "?")), str(raw.get("mode", "agentic"))
        calibration, error = None, None
        if raw.get("calibration"):
            try:
                calibration = ReviewerCalibration.model_validate(raw["calibration"])
            except ValidationError as exc:
                problem = exc.errors()[0]
                error = f"{'.'.join(map(str, problem['loc'])) or 'calibration'}: {problem['msg']}"
        entries.append(
            ReviewerEntry(
                run_id=run.manifest.run_id,
                reviewer=name,
                mode=mode,
                reviews=int(raw.get("reviews") or 0),
                failed=int(raw.get("failed") or 0),
                cost_usd=raw.get("cost_usd"),
                calibration=calibration,
                calibration_error=error,
                calibrate=calibrate_command(name, run.manifest.suite_path, mode),
            )
        )
    return entries


def _suite_stats(path: str) -> tuple[SuiteStats | None, dict[str, str], str | None]:
    """The suite's figures (as `evalkit stats` computes them) and prompts, or why there are none."""
    where = Path(path)
    if not where.exists():
        return None, {}, f"suite {path} not found from {Path.cwd()}: its statistics are left out"
    try:
        suite = load_suite(where)
        per_task = []
        skipped = [str(error) for error in suite.skipped]
        for task in suite.tasks:
            try:
                per_task.append(task_figures(task))
            except EvalkitError as exc:
                skipped.append(str(exc))
    except EvalkitError as exc:
        return None, {}, f"suite statistics left out: {exc}"
    stats = SuiteStats(
        name=suite.name,
        path=path,
        tasks=len(per_task),
        skipped=skipped,
        figures={k: dict(v) for k, v in summarize_figures(per_task).items()},
        underspecified={f.id: ", ".join(f.underspecified) for f in per_task if f.underspecified},
    )
    return stats, {t.id: t.prompt for t in suite.tasks}, None


def _weights(runs: Iterable[LoadedRun]) -> list[dict[str, float]]:
    found: list[dict[str, float]] = []
    for run in runs:
        weights = (run.summary or {}).get("weights") or next((s.weights for s in run.scores.values()), None)
        if weights and weights not in found:
            found.append(weights)
    return found


def chart_x(rows: Sequence[ModelRow]) -> Literal["cost", "tokens"]:
    """Cost on the chart's x axis when some model costs something, else median completion tokens."""
    return "cost" if any((row.cost_per_attempt or 0) > 0 for row in rows) else "tokens"


def chart_value(row: ModelRow, x: Literal["cost", "tokens"]) -> float | None:
    """The row's x in the chart: None when unknown (no price, no tokens recorded), or when every
    attempt ended in an endpoint or harness error (nothing of the model's to place)."""
    if sum(row.error_kinds.values()) >= row.attempts:
        return None
    return row.cost_per_attempt if x == "cost" else row.median_completion_tokens


def _rank(rows: list[ModelRow]) -> tuple[list[ModelRow], Literal["cost", "tokens"]]:
    """Best resolved rate first, then best composite; the rows no other beats on both the chart's
    x (cost, or tokens when nothing costs anything) and resolved rate are marked as the Pareto frontier."""
    rows = sorted(
        rows,
        key=lambda row: (
            -(row.resolved_rate.mean or 0),
            -((row.axes["composite"] or Interval(mean=0, ci95=None)).mean or 0),
            row.label,
        ),
    )
    x = chart_x(rows)
    placed = [row for row in rows if chart_value(row, x) is not None and row.resolved_rate.mean is not None]
    for i in pareto_frontier([(chart_value(r, x) or 0.0, r.resolved_rate.mean or 0.0) for r in placed]):
        placed[i].pareto = True
    return rows, x


def _suite_board(
    name: str, path: str, suite_runs: list[LoadedRun], run_index: dict[str, int], published: Published, first: int
) -> tuple[SuiteBoard, list[AttemptRef], dict[str, str]]:
    """One suite's leaderboard and matrix; its attempts numbered from `first`; its tasks' prompts."""
    pairs = [(run, model) for run in suite_runs for model in dict.fromkeys(r.model for r in run.records)]
    names = [model for _, model in pairs]
    rows, x = _rank(
        [
            _model_row(model, model if names.count(model) == 1 else f"{model} ({run.manifest.run_id})", run, published)
            for run, model in pairs
        ]
    )
    row_index = {(row.run_id, row.model): i for i, row in enumerate(rows)}
    for key, (user, figures, pairing) in user_rows(suite_runs).items():  # the simulated user's figures
        target = rows[row_index[key]]
        target.user, target.user_figures, target.user_pair = user, figures, pairing
    tasks = sorted(
        {t for run in suite_runs for t in run.manifest.tasks} | {r.task_id for run in suite_runs for r in run.records}
    )
    task_index = {t: i for i, t in enumerate(tasks)}
    refs, attempts = [], []
    for run in suite_runs:
        for record in run.records:
            ref = AttemptRef(first + len(refs), run, record, name)
            refs.append(ref)
            row_at = row_index[(run.manifest.run_id, record.model)]
            row = [ref.n, task_index[record.task_id], row_at, record.sample, ref.status, run_index[run.manifest.run_id]]
            attempts.append([*row, ref.integrity.verdict, ref.integrity.kinds()])
    stats, prompts, note = _suite_stats(path)
    board = SuiteBoard(
        name=name,
        path=path,
        runs=[run.manifest.run_id for run in suite_runs],
        weights=_weights(suite_runs),
        models=rows,
        chart_x=x,
        frontier=[row.label for row in sorted((r for r in rows if r.pareto), key=lambda r: chart_value(r, x) or 0)],
        tasks=tasks,
        attempts=attempts,
        stats=stats,
        stats_note=note,
        loading=task_loading(suite_runs),
        reviewers=[entry for run in suite_runs for entry in _reviewer_entries(run)],
    )
    return board, refs, prompts


def build_leaderboard(
    runs: Sequence[LoadedRun], published: Published | None = None, group_by: GroupBy = "none"
) -> tuple[Leaderboard, list[AttemptRef], dict[str, dict[str, str]]]:
    """The page's data; every attempt, numbered as its `attempts/<n>.js` file; each suite's prompts
    (for attempts whose trajectory is missing). `group_by` is how the page first groups the rows."""
    published = published or {}
    by_suite: dict[tuple[str, str], list[LoadedRun]] = {}
    for run in runs:
        by_suite.setdefault((run.manifest.suite, run.manifest.suite_path), []).append(run)
    names = [name for name, _ in by_suite]
    run_index = {run.manifest.run_id: i for i, run in enumerate(runs)}
    suites, refs, prompts = [], [], {}
    for (name, path), suite_runs in by_suite.items():
        label = name if names.count(name) == 1 else f"{name} ({path})"  # two suites of one name
        suite, suite_refs, prompts[label] = _suite_board(label, path, suite_runs, run_index, published, len(refs))
        suites.append(suite)
        refs.extend(suite_refs)
    board = Leaderboard(
        generated_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        evalkit_version=_version(),
        attempt_columns=list(ATTEMPT_COLUMNS),
        benchmarks={b: BENCHMARK_LABELS.get(b, b) for b in sorted({b for s in published.values() for b in s})},
        runs=[_run_info(run) for run in runs],
        suites=suites,
        measures=MEASURES,
        reference=shipped_reference(),
        group_by=group_by,
    )
    return board, refs, prompts


def _run_info(run: LoadedRun) -> RunInfo:
    summary = run.summary or {}
    return RunInfo(
        run_id=run.manifest.run_id,
        path=str(run.dir),
        suite=run.manifest.suite,
        suite_path=run.manifest.suite_path,
        models=list(run.manifest.models),
        samples=run.manifest.samples,
        attempts=len(run.records),
        created_at=run.manifest.created_at,
        updated_at=run.manifest.updated_at,
        scored_at=summary.get("scored_at"),
        weights=summary.get("weights"),
        tasks_loaded=len(run.manifest.tasks),
        tasks_total=len(run.manifest.tasks) + len(run.manifest.skipped_tasks),
    )


def _version() -> str:
    try:
        return importlib.metadata.version("evalkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
