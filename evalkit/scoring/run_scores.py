"""Scoring a whole run: every attempt on the four axes (`scores.jsonl`), the per-model and per-tag
aggregates (`summary.json`), and the table behind `evalkit.load_results`.

Scores are derived data: they are rewritten whole (atomically) each time, from `results.jsonl`,
the trajectories and the suite, so `evalkit score RUN_DIR` can re-score after the settings change.
Attempts that ended in `endpoint_error` or `sandbox_error` get a scores.jsonl row like any other,
but no aggregate counts them: they are errors (`errors`, `error_kinds`), not a model's failures, and
a model whose every attempt errored has no score at all (None), never 0.
A reviewer's verdicts (evalkit/review/) are kept from the previous scoring unless a reviewer is
given again; each new review's transcript is written under `reviews/` in the run folder.
"""

from __future__ import annotations

import contextlib
import io
import math
import statistics
import tarfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from evalkit.axes import AXIS_NAMES, REVIEWER, SCORE_COLUMNS
from evalkit.errors import EvalkitError
from evalkit.files import read_lines, write_atomic
from evalkit.records import ERROR_STOP_REASONS, AttemptRecord, utc_now
from evalkit.review.session import ReviewSession
from evalkit.review.verdict import ReviewVerdict
from evalkit.runs.store import RunStore
from evalkit.sandbox.workspace import WorkspaceSource, build_workspace
from evalkit.scoring.aggregate import best_of_k, bootstrap_ci, pass_at_k
from evalkit.scoring.attempt_scores import AttemptScores, ScoringSettings, draft_attempt_quality, score_attempt
from evalkit.scoring.cutoff_figures import model_cutoffs, with_cutoff_splits
from evalkit.scoring.prices import price_for, user_price_for
from evalkit.scoring.quality import QualityCache, finish_quality
from evalkit.scoring.quality_lint import RuffUnavailable
from evalkit.scoring.run_summary import RunSummary, ScoredRun
from evalkit.scoring.user_figures import ask_figures
from evalkit.tasks import Task, load_suite
from evalkit.trajectory import read_trajectory

AXIS_COLUMNS = SCORE_COLUMNS  # every axis and the composite, per attempt
LINT_BATCH = 50  # attempts whose changes are linted in one ruff run (their diffs stay parsed meanwhile)


def base_tree(task: Task, workspace: WorkspaceSource | None = None) -> Callable[[str], str | None]:
    """A reader of the task's base files (the workspace the agent started from), each file
    decoded once; the workspace comes from `workspace` (e.g. the run's backend) or is built."""
    built = workspace(task) if workspace is not None else build_workspace(task.source)
    # open for as long as the reader lives: an in-memory archive, nothing to leak
    archive = tarfile.open(fileobj=io.BytesIO(built.archive))  # noqa: SIM115
    names = set(archive.getnames())
    read_before: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        if path not in read_before:
            name = f"./{path}"
            member = archive.extractfile(name) if name in names else None
            read_before[path] = member.read().decode("utf-8", errors="replace") if member else None
        return read_before[path]

    return read


def run_tasks(store: RunStore, suite_path: Path | None = None) -> dict[str, Task]:
    """The tasks of a run, from its manifest's suite (or `suite_path`)."""
    manifest = store.required_manifest()
    path = suite_path or Path(manifest.suite_path)
    if not path.exists():
        raise EvalkitError(f"{store.dir}: its suite {path} is gone; pass --suite to say where it is now")
    return {t.id: t for t in load_suite(path).tasks}


REVIEWS = "reviews"  # the folder of a run holding its reviews' transcripts


def _previous_reviews(store: RunStore) -> dict[tuple[str, str, int], ReviewVerdict]:
    path = store.paths.scores
    if not path.exists():
        return {}
    kept = {}
    for line in read_lines(path):
        try:
            row = AttemptScores.model_validate_json(line)
        except ValueError:
            continue
        if row.review is not None:
            kept[row.key] = row.review
    return kept


def score_run(
    store: RunStore,
    tasks: dict[str, Task],
    settings: ScoringSettings,
    review: ReviewSession | None = None,
    warn: Callable[[str], None] = lambda message: None,
    workspace: WorkspaceSource | None = None,
    calibration: Callable[[str, str], dict | None] = lambda reviewer, mode: None,
) -> ScoredRun:
    """Score every attempt of the run; write scores.jsonl and summary.json, and return both.
    `workspace` hands over the workspaces the run's backend already built (else they are built,
    once per task source); `review` reviews every attempt again (else earlier verdicts are kept);
    `calibration` finds a reviewer's calibration (name, mode) for the summary."""
    records = sorted(store.records(), key=lambda r: (r.task_id, r.model, r.sample))
    with QualityCache() as quality_cache:
        rows = _score_attempts(store, records, tasks, settings, review, warn, workspace, quality_cache)
    write_atomic(store.paths.scores, "".join(row.model_dump_json() + "\n" for row in rows))
    frame = results_frame(records, rows)
    manifest = store.read_manifest()
    loaded = manifest.tasks if manifest else sorted({r.task_id for r in records})
    skipped = manifest.skipped_tasks if manifest else []
    kinds = error_kinds(frame)
    summary = RunSummary(
        run_id=store.dir.name,
        scored_at=utc_now(),
        tasks_loaded=len(loaded),
        tasks_total=len(loaded) + len(skipped),
        skipped_tasks=skipped,
        weights=settings.weights.normalised(),
        interaction_penalties=settings.interaction.model_dump(),
        errors=sum(kinds.values()),
        error_kinds=kinds,
        models=with_cutoff_splits(summarize(frame, "model"), frame, model_cutoffs(manifest.models if manifest else {})),
        tags=summarize(frame.explode("tags").dropna(subset=["tags"]), "tags") if len(frame) else [],
        reviewers=reviewer_entries(rows, calibration),
    )
    summary.write(store.paths.summary)
    return ScoredRun(rows, summary)


def reviewer_entries(rows: list[AttemptScores], calibration: Callable[[str, str], dict | None]) -> list[dict]:
    """Per reviewer and mode the rows' verdicts come from: how many, how many failed, their cost
    (None when any is unpriced), and the reviewer's calibration."""
    groups: dict[tuple[str, str], list[ReviewVerdict]] = {}
    for row in rows:
        if row.review is not None:
            groups.setdefault((row.review.reviewer, row.review.mode), []).append(row.review)
    out = []
    for (name, mode), verdicts in sorted(groups.items()):
        costs = [v.cost_usd for v in verdicts]
        out.append(
            {
                "reviewer": name,
                "mode": mode,
                "reviews": len(verdicts),
                "failed": sum(v.score is None for v in verdicts),
                "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 6),  # type: ignore[arg-type]
                "calibration": calibration(name, mode),
            }
        )
    return out


def results_frame(records: list[AttemptRecord], scores: list[AttemptScores]) -> pd.DataFrame:
    """One row per attempt: the record's facts and every axis as columns (details as `axis.part`)."""
    by_key = {s.key: s for s in scores}
    rows = []
    for record in records:
        score = by_key.get(record.key)
        if score is None:
            continue
        row = {
            "run_id": record.run_id,
            "task_id": record.task_id,
            "model": record.model,
            "sample": record.sample,
            "tags": score.tags,
            "commit_date": score.commit_date,
            "resolved": score.correctness.resolved,
            "tests_resolved": score.correctness.tests_resolved,
            "integrity": score.integrity.verdict,
            "integrity_flags": ",".join(score.integrity.kinds()),
            "did_work": score.did_work,
            "stop_reason": record.stop_reason,
            "errored": record.errored,  # endpoint_error / sandbox_error: in no aggregate
            "error": record.error,
            **{axis: getattr(score, axis).score for axis in AXIS_NAMES},
            "fail_to_pass": score.correctness.fail_to_pass,
            "pass_to_pass": score.correctness.pass_to_pass,
            "composite": score.composite,
            REVIEWER: score.review.score if score.review else None,
            "cost_usd": score.efficiency.cost_usd,
            "prompt_tokens": score.efficiency.prompt_tokens,
            "completion_tokens": score.efficiency.completion_tokens,
            "cached_tokens": score.efficiency.cached_tokens,
            "total_tokens": score.efficiency.total_tokens,
            "turns": record.turns,
            "tool_calls": record.tool_calls,
            "duration_s": record.duration_s,
            "agent_s": record.agent_s,
            # the simulated user: None / 0 on rows without one
            "user": record.user,
            "user_model": record.user_model,
            "questions": record.questions,
            "informative_questions": int((record.question_classes or {}).get("informative", 0)),
            "user_tokens": score.efficiency.user_tokens,
            "user_cost_usd": score.efficiency.user_cost_usd,
        }
        # the parts of the axes that have them, as columns of their own
        row.update({f"quality.{name}": value for name, value in score.quality.parts.items()})
        row.update({f"interaction.{name}": value for name, value in score.interaction.counts.items()})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if len(frame):  # an axis that does not apply is None: NaN, which every mean skips
        frame[list(AXIS_COLUMNS)] = frame[list(AXIS_COLUMNS)].astype(float)
    return frame


def _mean_ci(per_task: pd.Series) -> dict:
    """Mean and CI over the tasks with a value; an axis that applies to none of them is marked
    `not_applicable` (shown "n/a"), never 0."""
    values = [v for v in per_task.tolist() if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return {"mean": None, "ci95": None, "not_applicable": True}
    low, high = bootstrap_ci(values)
    return {"mean": round(statistics.fmean(values), 4), "ci95": [round(low, 4), round(high, 4)]}


def error_kinds(rows: pd.DataFrame) -> dict[str, int]:
    """Errored attempts (endpoint or sandbox failures) by stop reason."""
    if rows.empty:
        return {}
    errored = rows["stop_reason"][rows["stop_reason"].isin(ERROR_STOP_REASONS)]
    return {str(k): int(v) for k, v in sorted(errored.value_counts().items())}


def _unscored() -> dict:
    """The figures of a group with no scored attempt: none at all, never zeros."""
    empty = {"mean": None, "ci95": None}
    return {
        "tasks": 0,
        "samples": 0,
        "resolved": 0,
        "resolved_rate": dict(empty),
        "pass_at_k": {},
        "best_of_k": {},
        "axes": {**{axis: dict(empty) for axis in AXIS_COLUMNS}, REVIEWER: None},
        "avg_at_k": None,
        "cost_usd": None,
        "cost_per_task": None,
        "cost_per_resolved": None,
        "median_tokens": None,
        "median_duration_s": None,
        "user": None,
    }


def summarize(frame: pd.DataFrame, by: str) -> list[dict]:
    """Per group: resolved rate with a task-level bootstrap CI, pass@k and best-of-k for k up to
    the samples every task has, axis means with CIs, cost per task and per resolved task, medians;
    all over the scored attempts only. Errored attempts are counted (`errors`, `error_kinds`)."""
    out = []
    if frame.empty:
        return out
    for group, every in frame.groupby(by, sort=False):
        rows = every[~every["stop_reason"].isin(ERROR_STOP_REASONS)]
        kinds = error_kinds(every)
        entry: dict = {
            by.rstrip("s"): group,
            "attempts": len(every),
            "scored_attempts": len(rows),
            "errors": sum(kinds.values()),
            "error_kinds": kinds,
        }
        entry.update(_scored_figures(rows) if len(rows) else _unscored())
        entry["stop_reasons"] = {str(k): int(v) for k, v in every["stop_reason"].value_counts().items()}
        entry["integrity"] = {
            "fail": int((every["integrity"] == "fail").sum()),
            "warn": int((every["integrity"] == "warn").sum()),
            "unresolved_by_integrity": int((every["tests_resolved"] & ~every["resolved"]).sum()),
            "kinds": dict(sorted(Counter(k for f in every["integrity_flags"] for k in f.split(",") if k).items())),
        }
        out.append(entry)
    return out


def _scored_figures(rows: pd.DataFrame) -> dict:
    """The figures of a group's scored attempts (at least one)."""
    per_task = rows.groupby("task_id")
    samples = int(per_task.size().min())
    entry: dict = {
        "tasks": per_task.ngroups,
        "samples": samples,
        "resolved": int(rows["resolved"].sum()),
        "resolved_rate": _mean_ci(per_task["resolved"].mean()),
        "pass_at_k": {},
        "best_of_k": {},
        "axes": {axis: _mean_ci(per_task[axis].mean()) for axis in AXIS_COLUMNS},
    }
    judged = rows[REVIEWER].dropna()
    entry["axes"][REVIEWER] = _mean_ci(judged.groupby(rows["task_id"]).mean()) if len(judged) else None
    # per task: attempts, resolved ones, composites; read once, not once per k
    tasks = [(len(t), int(t["resolved"].sum()), t["composite"].dropna().tolist()) for _, t in per_task]
    for k in range(1, samples + 1):
        entry["pass_at_k"][str(k)] = round(statistics.fmean(pass_at_k(n, c, k) for n, c, _ in tasks), 4)
        best = [best_of_k(composites, k) for _, _, composites in tasks if len(composites) >= k]
        if best:  # over the tasks with a composite on k samples
            entry["best_of_k"][str(k)] = round(statistics.fmean(best), 4)
    entry["avg_at_k"] = entry["axes"]["composite"]["mean"]
    costs = rows["cost_usd"]
    known = costs.notna().all()
    total = float(costs.sum()) if known else None
    entry["cost_usd"] = None if total is None else round(total, 6)
    entry["cost_per_task"] = None if total is None else round(total / per_task.ngroups, 6)
    resolved_tasks = rows["resolved"].sum()
    entry["cost_per_resolved"] = None if total is None or not resolved_tasks else round(total / resolved_tasks, 6)
    entry["median_tokens"] = float(rows["total_tokens"].median())
    entry["median_duration_s"] = round(float(rows["duration_s"].median()), 3)
    entry["user"] = _user_entry(rows)
    return entry


def _user_entry(rows: pd.DataFrame) -> dict | None:
    """The simulated user's figures (`ask_figures`) and its cost, apart from the agent's (None
    when a priced attempt is missing its price); None when no attempt had a user."""
    if "user" not in rows:
        return None
    with_user = rows[rows["user"].notna()]
    questions, informative = (with_user[c].astype(int).tolist() for c in ("questions", "informative_questions"))
    figures = ask_figures(zip(questions, informative, strict=True))
    if figures is None:
        return None
    costs = with_user["user_cost_usd"]
    figures["cost_usd"] = round(float(costs.sum()), 6) if costs.notna().all() else None
    return figures


def load_scores(store: RunStore) -> list[AttemptScores]:
    path = store.paths.scores
    if not path.exists():
        return []
    return [AttemptScores.model_validate_json(line) for line in read_lines(path) if line.strip()]


def _reviewed(store: RunStore, review: ReviewSession, task: Task, record: AttemptRecord) -> ReviewVerdict:
    """The attempt's change reviewed, its transcript under `reviews/` (named after the attempt)."""
    name = f"{record.task_id}__{record.model}__{record.sample}.jsonl".replace("/", "_")
    verdict = review.review(task, record.model_patch, store.dir / REVIEWS / name)
    return verdict.model_copy(update={"transcript": f"{REVIEWS}/{name}"})


def _score_attempts(
    store: RunStore,
    records: list[AttemptRecord],
    tasks: dict[str, Task],
    settings: ScoringSettings,
    review: ReviewSession | None,
    warn: Callable[[str], None],
    workspace: WorkspaceSource | None,
    quality_cache: QualityCache,
) -> list[AttemptScores]:
    """Every attempt of a task still in the suite, scored; a base tree read per task source, and
    the quality axis's lint run over `LINT_BATCH` attempts at a time (one ruff start-up, not one
    per attempt)."""
    reviews = _previous_reviews(store)
    trees: dict[str, Callable[[str], str | None]] = {}
    unpriced: set[str] = set()
    scorable = []
    for record in records:
        task = tasks.get(record.task_id)
        if task is None:
            warn(f"attempt of `{record.task_id}` skipped: the task is not in the suite any more")
            continue
        source = task.source.model_dump_json()  # tasks over the same base tree share its reader
        if source not in trees:
            trees[source] = base_tree(task, workspace)
        model_id = record.endpoint.get("model", record.model)
        price = price_for(settings.prices, model_id, record.model)
        if price is None and model_id not in unpriced:
            unpriced.add(model_id)
            warn(f'no price for model `{model_id}`: its cost is left empty (add [prices."{model_id}"] to evalkit.toml)')
        user_model = record.user_model if record.user else None
        user_price = user_price_for(settings.prices, user_model)
        if user_model and user_price is None and user_model not in unpriced:
            unpriced.add(user_model)
            warn(
                f"no price for the simulated user's model `{user_model}`: its cost is left empty "
                f'(add [prices."{user_model}"] to evalkit.toml)'
            )
        scorable.append((record, task, trees[source], price, user_price))
    rows = []
    for start in range(0, len(scorable), LINT_BATCH):
        batch = scorable[start : start + LINT_BATCH]
        drafts = [
            draft_attempt_quality(task, record, tree, settings, quality_cache) for record, task, tree, *_ in batch
        ]
        with contextlib.suppress(RuffUnavailable):  # then each attempt tries alone, and says so in its note
            quality_cache.linter.lint(file for draft in drafts for file in draft.lint_files)
        for (record, task, tree, price, user_price), draft in zip(batch, drafts, strict=True):
            events = read_trajectory(store.paths.trajectory(record.trajectory)) if record.trajectory else []
            verdict = reviews.get(record.key)
            if review is not None:
                verdict = _reviewed(store, review, task, record)
            quality = finish_quality(draft, quality_cache.linter)
            rows.append(
                score_attempt(
                    task, record, events, tree, settings, price, verdict, quality=quality, user_price=user_price
                )
            )
    return rows
