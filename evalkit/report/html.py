"""`evalkit report`: run folders in, one self-contained HTML leaderboard out.

The page must open from disk (file://) with no network and stay safe when a model writes HTML:
jinja renders only the skeleton; every figure and every string a model or a task produced goes in
as JSON inside `<script type="application/json">` (`<`, `>`, `&` escaped as `\\u003c`…, so no
string can close the tag) and is put on the page by the inline script with `textContent` only.
A Content-Security-Policy allows the page's own inline script (by hash) and scripts beside it,
nothing else. Each attempt's detail (diff, trajectory) is a separate `attempts/<n>.js` file loaded
by a `<script src>` on click (fetch does not work from file://), so the page stays small with
thousands of attempts. The same data is written as `leaderboard.json`, `leaderboard.csv` (suite ×
model) and `attempts.csv` (one row per attempt).
"""

from __future__ import annotations

import base64
import csv
import datetime
import hashlib
import importlib.metadata
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel, ValidationError

from evalkit.agent.trajectory import read_trajectory
from evalkit.errors import EvalkitError
from evalkit.runs.store import MANIFEST, AttemptRecord, RunManifest, RunStore
from evalkit.scoring.attempt_scores import AttemptScores
from evalkit.scoring.run_scores import SCORES, SUMMARY, results_frame, summarize
from evalkit.stats.reference import shipped_reference
from evalkit.stats.suite_stats import MEASURES, task_figures
from evalkit.stats.suite_stats import summarize as summarize_figures
from evalkit.tasks import load_suite

PAGE = "index.html"
ATTEMPTS_DIR = "attempts"
AXES = ("quality", "efficiency", "interaction", "composite", "judge")
ERROR_STOPS = frozenset({"endpoint_error", "sandbox_error"})  # the endpoint or harness failed, not the model
ATTEMPT_COLUMNS = ("n", "task", "model", "sample", "status", "run")  # the compact rows of `attempts` in the page
TEST_LOG_CHARS = 20_000
_ATTEMPT_FILE = re.compile(r"(\d+)\.js")
BENCHMARK_LABELS = {
    "swe-bench-verified": "SWE-bench Verified",
    "swe-bench-lite": "SWE-bench Lite",
    "swe-bench": "SWE-bench",
    "swe-bench-multilingual": "SWE-bench Multilingual",
    "swe-bench-pro": "SWE-bench Pro",
}

Published = dict[str, dict[str, float]]  # model → benchmark → score in 0..1


# -- published scores -----------------------------------------------------------------------------
def benchmark_key(name: str) -> str:
    """One spelling per benchmark: `SWE_bench_Verified` and `swe-bench-verified` are the same."""
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def _score(value: object, where: str) -> float:
    if isinstance(value, bool):
        raise EvalkitError(f"{where}: score {value!r} is not a number")
    try:
        score = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise EvalkitError(f"{where}: score {value!r} is not a number") from None
    if not math.isfinite(score) or not 0 <= score <= 1:
        raise EvalkitError(f"{where}: score {value!r} must be a fraction between 0 and 1 (0.33 for 33 %)")
    return score


def _add(published: Published, model: str, benchmark: str, score: float, where: str) -> None:
    known = published.setdefault(model, {})
    if benchmark in known and known[benchmark] != score:
        raise EvalkitError(f"{where}: {model!r} on {benchmark!r} given twice ({known[benchmark]} and {score})")
    known[benchmark] = score


def read_published(path: Path) -> Published:
    """Published scores from a CSV with the header `model,benchmark,score` (e.g.
    `gpt-4o,swe-bench-verified,0.33`); a bad row is one EvalkitError line naming the file and line."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise EvalkitError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise EvalkitError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = [cell.strip().lower() for cell in next(reader, [])]
        if header != ["model", "benchmark", "score"]:
            raise EvalkitError(f"{path}:1: the header must be model,benchmark,score (found {','.join(header)!r})")
        published: Published = {}
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != 3:
                raise EvalkitError(f"{where}: expected 3 columns (model,benchmark,score), found {len(row)}")
            model, benchmark, value = (cell.strip() for cell in row)
            if not model or not benchmark:
                raise EvalkitError(f"{where}: the model and the benchmark must not be empty")
            _add(published, model, benchmark_key(benchmark), _score(value, where), where)
    except csv.Error as exc:
        raise EvalkitError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from None
    return published


def published_from_config(config: dict, where: str | Path = "evalkit.toml") -> Published:
    """`[published."MODEL"] swe_bench_verified = 0.33` tables of a parsed evalkit.toml."""
    table = config.get("published", {})
    if not isinstance(table, dict):
        raise EvalkitError(f"{where}: [published] must be a table of models")
    published: Published = {}
    for model, scores in table.items():
        if not isinstance(scores, dict):
            raise EvalkitError(f'{where}: [published."{model}"] must be a table of benchmark = score')
        for benchmark, value in scores.items():
            at = f'{where}: [published."{model}"] {benchmark}'
            _add(published, model, benchmark_key(benchmark), _score(value, at), at)
    return published


def merge_published(base: Published, override: Published) -> Published:
    """`override`'s scores win benchmark by benchmark (the command line over evalkit.toml)."""
    return {model: {**base.get(model, {}), **override.get(model, {})} for model in base | override}


# -- the Pareto frontier --------------------------------------------------------------------------
def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the (cost, resolved) points no other point dominates, by increasing cost.

    A point is dominated when another costs no more and resolves no less, and is strictly better
    in one of the two: what is left is the cheapest way to reach each resolved rate. Equal points
    do not dominate each other, so both stay."""

    def dominated(cost: float, resolved: float) -> bool:
        return any(c <= cost and r >= resolved and (c < cost or r > resolved) for c, r in points)

    return sorted((i for i, (c, r) in enumerate(points) if not dominated(c, r)), key=lambda i: (points[i][0], i))


# -- what the page shows --------------------------------------------------------------------------
class Interval(BaseModel):
    mean: float | None
    ci95: list[float] | None


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


class ModelRow(BaseModel):
    """One leaderboard row: a model's figures in one run. A model tried in several runs of a suite
    (a baseline and a new run) gets a row per run, labelled with the run, never a pooled one."""

    model: str
    label: str  # the model, or "model (run_id)" when the model recurs in another run of the suite
    api_model: str | None
    run_id: str
    attempts: int
    tasks: int
    samples: int
    resolved: int
    errors: int
    resolved_rate: Interval
    pass_at_k: dict[str, float]
    best_of_k: dict[str, float]
    axes: dict[str, Interval | None]
    median_tokens: float | None
    cost_usd: float | None
    cost_per_attempt: float | None
    cost_per_task: float | None
    cost_per_resolved: float | None
    stop_reasons: dict[str, int]
    published: dict[str, float]
    pareto: bool = False
    source: str  # "summary.json", or "recomputed" from scores.jsonl when the summary lacks the model


class SuiteStats(BaseModel):
    name: str
    path: str
    tasks: int
    skipped: list[str]
    figures: dict[str, dict[str, Any]]


class SuiteBoard(BaseModel):
    name: str
    path: str
    runs: list[str]
    weights: list[dict[str, float]]  # the composite weights the runs were scored with (one entry if all agree)
    models: list[ModelRow]  # by resolved rate, best first
    frontier: list[str]  # labels of the rows on the Pareto frontier, by increasing cost
    tasks: list[str]
    attempts: list[list[Any]]  # ATTEMPT_COLUMNS: n, task index, row index in `models`, sample, r/f/e, run index
    stats: SuiteStats | None
    stats_note: str | None


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


# -- reading runs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadedRun:
    dir: Path
    manifest: RunManifest
    records: list[AttemptRecord]
    scores: dict[tuple[str, str, int], AttemptScores]
    summary: dict | None


def load_run(run_dir: Path) -> LoadedRun:
    """A scored run folder; anything else is one EvalkitError line saying what to do."""
    store = RunStore(Path(run_dir))
    if not (store.dir / MANIFEST).is_file():
        raise EvalkitError(f"{run_dir}: not an evalkit run folder (no {MANIFEST})")
    manifest = store.read_manifest()
    assert manifest is not None
    records = sorted(store.records(), key=lambda r: (r.task_id, r.model, r.sample))
    if not records:
        raise EvalkitError(f"{run_dir}: no finished attempt yet (results.jsonl is empty or missing)")
    scores_path = store.dir / SCORES
    if not scores_path.is_file():
        raise EvalkitError(f"{run_dir}: not scored yet (no {SCORES}); run `evalkit score {run_dir}`")
    scores = {}
    for number, line in enumerate(scores_path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = AttemptScores.model_validate_json(line)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(map(str, problem["loc"])) or "row"
            raise EvalkitError(f"{scores_path}:{number}: {where}: {problem['msg']}; re-run `evalkit score`") from None
        scores[row.key] = row
    summary = None
    if (store.dir / SUMMARY).is_file():
        try:
            summary = json.loads((store.dir / SUMMARY).read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise EvalkitError(f"{store.dir / SUMMARY}: not JSON; re-run `evalkit score {run_dir}`") from None
    return LoadedRun(store.dir, manifest, records, scores, summary)


def attempt_status(record: AttemptRecord) -> str:
    """`r` resolved, `e` an error the model is not to blame for, `f` failed."""
    if record.resolved:
        return "r"
    return "e" if record.error or record.stop_reason in ERROR_STOPS else "f"


# -- figures --------------------------------------------------------------------------------------
def _interval(value: dict | None) -> Interval | None:
    if not value:
        return None
    return Interval(mean=value.get("mean"), ci95=value.get("ci95"))


def _model_entry(model: str, run: LoadedRun) -> tuple[dict | None, str]:
    """The model's entry of the run's summary.json, or the same `summarize` over its scores when
    the summary is missing (a run scored by hand) or lacks the model."""
    for entry in (run.summary or {}).get("models", []):
        if entry.get("model") == model:
            return entry, SUMMARY
    frame = results_frame([r for r in run.records if r.model == model], list(run.scores.values()))
    entries = summarize(frame, "model") if not frame.empty else []
    return (entries[0] if entries else None), "recomputed"


def _model_row(model: str, label: str, run: LoadedRun, published: Published) -> ModelRow:
    entry, source = _model_entry(model, run)
    entry = entry or {}
    records = [r for r in run.records if r.model == model]
    api_model = (run.manifest.models.get(model) or {}).get("model")
    attempts = entry.get("attempts", len(records))
    cost = entry.get("cost_usd")
    return ModelRow(
        model=model,
        label=label,
        api_model=api_model if api_model != model else None,
        run_id=run.manifest.run_id,
        attempts=attempts,
        tasks=entry.get("tasks", len({r.task_id for r in records})),
        samples=entry.get("samples", 0),
        resolved=entry.get("resolved", sum(r.resolved for r in records)),
        errors=entry.get("errors", 0),
        resolved_rate=_interval(entry.get("resolved_rate")) or Interval(mean=None, ci95=None),
        pass_at_k=entry.get("pass_at_k", {}),
        best_of_k=entry.get("best_of_k", {}),
        axes={axis: _interval(entry.get("axes", {}).get(axis)) for axis in AXES},
        median_tokens=entry.get("median_tokens"),
        cost_usd=cost,
        cost_per_attempt=None if cost is None or not attempts else round(cost / attempts, 6),
        cost_per_task=entry.get("cost_per_task"),
        cost_per_resolved=entry.get("cost_per_resolved"),
        stop_reasons=entry.get("stop_reasons", {}),
        published={**published.get(api_model or "", {}), **published.get(model, {})},
        source=source,
    )


def _suite_stats(path: str) -> tuple[SuiteStats | None, dict[str, str], str | None]:
    """The suite's figures (as `evalkit stats` computes them) and prompts, or why there are none."""
    where = Path(path)
    if not where.exists():
        return None, {}, f"suite {path} not found from {Path.cwd()}: its statistics are left out"
    try:
        suite = load_suite(where)
        per_task = []
        skipped = [str(error) for error in suite.errors]
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
    )
    return stats, {t.id: t.prompt for t in suite.tasks}, None


def _weights(runs: Iterable[LoadedRun]) -> list[dict[str, float]]:
    found: list[dict[str, float]] = []
    for run in runs:
        weights = (run.summary or {}).get("weights") or next((s.weights for s in run.scores.values()), None)
        if weights and weights not in found:
            found.append(weights)
    return found


@dataclass(frozen=True)
class AttemptRef:
    n: int
    run: LoadedRun
    record: AttemptRecord
    suite: str


def _rank(rows: list[ModelRow]) -> list[ModelRow]:
    """Best resolved rate first, then best composite; the priced rows no other beats on both cost
    and resolved rate are marked as the Pareto frontier."""
    rows = sorted(
        rows,
        key=lambda row: (
            -(row.resolved_rate.mean or 0),
            -((row.axes["composite"] or Interval(mean=0, ci95=None)).mean or 0),
            row.label,
        ),
    )
    priced = [row for row in rows if row.cost_per_attempt is not None and row.resolved_rate.mean is not None]
    for i in pareto_frontier([(r.cost_per_attempt or 0.0, r.resolved_rate.mean or 0.0) for r in priced]):
        priced[i].pareto = True
    return rows


def _suite_board(
    name: str, path: str, suite_runs: list[LoadedRun], run_index: dict[str, int], published: Published, first: int
) -> tuple[SuiteBoard, list[AttemptRef], dict[str, str]]:
    """One suite's leaderboard and matrix; its attempts numbered from `first`; its tasks' prompts."""
    pairs = [(run, model) for run in suite_runs for model in dict.fromkeys(r.model for r in run.records)]
    names = [model for _, model in pairs]
    rows = _rank(
        [
            _model_row(model, model if names.count(model) == 1 else f"{model} ({run.manifest.run_id})", run, published)
            for run, model in pairs
        ]
    )
    row_index = {(row.run_id, row.model): i for i, row in enumerate(rows)}
    tasks = sorted(
        {t for run in suite_runs for t in run.manifest.tasks} | {r.task_id for run in suite_runs for r in run.records}
    )
    task_index = {t: i for i, t in enumerate(tasks)}
    refs, attempts = [], []
    for run in suite_runs:
        for record in run.records:
            n = first + len(refs)
            refs.append(AttemptRef(n, run, record, name))
            row_at = row_index[(run.manifest.run_id, record.model)]
            row = [n, task_index[record.task_id], row_at, record.sample, attempt_status(record)]
            attempts.append([*row, run_index[run.manifest.run_id]])
    stats, prompts, note = _suite_stats(path)
    board = SuiteBoard(
        name=name,
        path=path,
        runs=[run.manifest.run_id for run in suite_runs],
        weights=_weights(suite_runs),
        models=rows,
        frontier=[row.label for row in sorted((r for r in rows if r.pareto), key=lambda r: r.cost_per_attempt or 0)],
        tasks=tasks,
        attempts=attempts,
        stats=stats,
        stats_note=note,
    )
    return board, refs, prompts


def build_leaderboard(
    runs: Sequence[LoadedRun], published: Published | None = None
) -> tuple[Leaderboard, list[AttemptRef], dict[str, dict[str, str]]]:
    """The page's data; every attempt, numbered as its `attempts/<n>.js` file; each suite's prompts
    (for attempts whose trajectory is missing)."""
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
    )


def _version() -> str:
    try:
        return importlib.metadata.version("evalkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# -- one attempt's detail -------------------------------------------------------------------------
def _text(content: object) -> str | None:
    """Message content as text: a string as is, structured content (parts) as indented JSON."""
    if content is None or isinstance(content, str):
        return content
    return json.dumps(content, indent=2, ensure_ascii=False, default=str)


def _arguments(raw: object) -> dict[str, Any]:
    """Tool-call arguments for reading: a JSON object as `args` (name, text) pairs, string values
    as they are so that code reads as code; anything else (malformed JSON) `raw`, exactly as sent."""
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except (json.JSONDecodeError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        return {"raw": raw if isinstance(raw, str) else _text(raw)}
    return {
        "args": [[str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)] for k, v in parsed.items()]
    }


def trajectory_view(events: list[dict]) -> tuple[list[dict], str | None]:
    """The events a reader follows (messages with their tool calls and outputs, model calls, the
    stop), and the hidden tests' log from the `correctness` event (head and tail when long)."""
    tools = {e.get("call_id"): e for e in events if e.get("type") == "tool"}
    names = {}
    out: list[dict] = []
    log = None
    for event in events:
        kind = event.get("type")
        if kind == "start":
            out.append(
                {
                    "kind": "start",
                    "t": event.get("t"),
                    "limits": event.get("limits"),
                    "started_at": event.get("started_at"),
                }
            )
        elif kind == "message":
            message = event.get("message") or {}
            item: dict[str, Any] = {
                "kind": "message",
                "t": event.get("t"),
                "role": message.get("role"),
                "content": _text(message.get("content")),
            }
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id")] = function.get("name")
                calls.append(
                    {"id": call.get("id"), "name": function.get("name"), **_arguments(function.get("arguments"))}
                )
            if calls:
                item["tool_calls"] = calls
            if message.get("role") == "tool":
                call_id = message.get("tool_call_id")
                meta = tools.get(call_id, {})
                item["tool"] = {
                    "call_id": call_id,
                    "name": meta.get("name") or names.get(call_id),
                    "fault": meta.get("fault"),
                    "exit_code": meta.get("exit_code"),
                    "truncated": meta.get("truncated"),
                    "sandbox_s": meta.get("sandbox_s"),
                }
            out.append(item)
        elif kind == "model_call":
            usage = event.get("usage") or {}
            out.append(
                {
                    "kind": "model_call",
                    "t": event.get("t"),
                    "turn": event.get("turn"),
                    "latency_s": event.get("latency_s"),
                    "tokens": usage.get("total_tokens"),
                    "finish_reason": event.get("finish_reason"),
                    "retries": len(event.get("retries") or []),
                }
            )
        elif kind == "stop":
            out.append(
                {
                    "kind": "stop",
                    "t": event.get("t"),
                    "stop_reason": event.get("stop_reason"),
                    "error": event.get("error"),
                }
            )
        elif kind == "correctness":
            log = (event.get("result") or {}).get("log")
    if isinstance(log, str) and len(log) > TEST_LOG_CHARS:
        half = TEST_LOG_CHARS // 2
        log = f"{log[:half]}\n… {len(log) - TEST_LOG_CHARS:,} characters left out …\n{log[-half:]}"
    return out, log


def attempt_detail(ref: AttemptRef, siblings: list[list[Any]], prompts: dict[str, str]) -> dict[str, Any]:
    """Everything the attempt view shows for one attempt (the content of attempts/<n>.js)."""
    record, run = ref.record, ref.run
    note = None
    events: list[dict] = []
    if not record.trajectory:
        note = "no trajectory recorded"
    elif not (run.dir / record.trajectory).is_file():
        note = f"trajectory {record.trajectory} is missing from the run folder"
    else:
        events = read_trajectory(run.dir / record.trajectory)
    trajectory, log = trajectory_view(events)
    first_user = next(
        (e["content"] for e in trajectory if e.get("kind") == "message" and e.get("role") == "user"), None
    )
    score = run.scores.get(record.key)
    return {
        "n": ref.n,
        "suite": ref.suite,
        "run_id": run.manifest.run_id,
        "task_id": record.task_id,
        "model": record.model,
        "sample": record.sample,
        "status": attempt_status(record),
        "resolved": record.resolved,
        "stop_reason": record.stop_reason,
        "error": record.error,
        "prompt": first_user if first_user is not None else prompts.get(record.task_id),
        "final_message": record.final_message,
        "patch": record.model_patch,
        "patch_applied": record.patch_applied,
        "facts": {
            "turns": record.turns,
            "tool_calls": record.tool_calls,
            "tokens": record.usage.get("total_tokens"),
            "duration_s": record.duration_s,
            "agent_s": record.agent_s,
            "model_time_s": record.model_time_s,
            "faults": record.faults,
            "retries": record.retries,
        },
        "scores": score.model_dump(exclude={"run_id", "task_id", "model", "sample"}) if score else None,
        "tests": {"fail_to_pass": record.fail_to_pass.model_dump(), "pass_to_pass": record.pass_to_pass.model_dump()},
        "test_log": log,
        "trajectory": trajectory,
        "trajectory_note": note,
        "siblings": siblings,  # [n, sample, status, run] of every sample of this task, model and run
    }


# -- writing --------------------------------------------------------------------------------------
def dumps(value: Any, **options: Any) -> str:
    """JSON text; NaN and infinities (pandas' medians of nothing) become null, which JSON can spell."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def script_json(value: Any) -> str:
    """JSON safe inside a <script> element: `<`, `>`, `&` (and all non-ASCII) as \\u escapes, so no
    string can end the element or open a comment."""
    text = dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def attempt_script(n: int, detail: dict[str, Any]) -> str:
    """attempts/<n>.js: a call to the page's loader. The JSON goes in as a string for JSON.parse,
    so a key such as `__proto__` stays a key, as it would through fetch."""
    text = dumps(detail, ensure_ascii=True, separators=(",", ":"))
    return f"window.__evalkitAttempt({int(n)},JSON.parse({script_json(text)}));\n"


def _write(path: Path, text: str) -> None:
    """Whole or absent: a reader (a browser reloading) never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def _csv(rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    return buffer.getvalue()


def leaderboard_csv(board: Leaderboard) -> str:
    """One row per suite × model: the table's figures, pass@k and best-of-k for every k."""
    top_k = max((row.samples for suite in board.suites for row in suite.models), default=1)
    ks = [str(k) for k in range(1, top_k + 1)]
    benchmarks = list(board.benchmarks)
    header = [
        "suite", "model", "run_id", "api_model", "attempts", "tasks", "samples", "resolved",
        "resolved_rate", "resolved_ci_low", "resolved_ci_high",
        *(f"pass_at_{k}" for k in ks), *(f"best_of_{k}" for k in ks),
        *AXES, "median_tokens", "cost_usd", "cost_per_attempt", "cost_per_task", "cost_per_resolved",
        "pareto", "errors", *(f"published_{b}" for b in benchmarks),
    ]  # fmt: skip
    rows: list[list[Any]] = [header]
    for suite in board.suites:
        for row in suite.models:
            ci = row.resolved_rate.ci95 or [None, None]
            rows.append(
                [
                    suite.name, row.model, row.run_id, row.api_model, row.attempts, row.tasks, row.samples,
                    row.resolved, row.resolved_rate.mean, ci[0], ci[1],
                    *(row.pass_at_k.get(k) for k in ks), *(row.best_of_k.get(k) for k in ks),
                    *((row.axes[a].mean if row.axes[a] else None) for a in AXES),
                    row.median_tokens, row.cost_usd, row.cost_per_attempt, row.cost_per_task, row.cost_per_resolved,
                    row.pareto, row.errors, *(row.published.get(b) for b in benchmarks),
                ]
            )  # fmt: skip
    return _csv(rows)


def attempts_csv(refs: Sequence[AttemptRef]) -> str:
    """One row per attempt: the verdict and the main axes (`attempt` is the n of attempts/<n>.js)."""
    header = [
        "attempt", "suite", "run_id", "task_id", "model", "sample", "status", "resolved", "stop_reason", "error",
        "correctness", "quality", "efficiency", "interaction", "composite", "judge", "cost_usd", "total_tokens",
        "turns", "tool_calls", "duration_s",
    ]  # fmt: skip
    rows: list[list[Any]] = [header]
    for ref in refs:
        r, s = ref.record, ref.run.scores.get(ref.record.key)
        rows.append(
            [
                ref.n, ref.suite, r.run_id, r.task_id, r.model, r.sample, attempt_status(r), r.resolved, r.stop_reason,
                r.error, s and s.correctness.score, s and s.quality.score, s and s.efficiency.score,
                s and s.interaction.score, s and s.composite, s and s.judge and s.judge.score,
                s and s.efficiency.cost_usd, r.usage.get("total_tokens"), r.turns, r.tool_calls, r.duration_s,
            ]
        )  # fmt: skip
    return _csv(rows)


def _asset(name: str) -> str:
    return (resources.files("evalkit.report") / "templates" / name).read_text(encoding="utf-8")


def content_security_policy(script: str) -> str:
    """Only this page's own inline script (by its hash) and scripts beside it (the attempt files);
    inline styles, data: images; no network, no frames, no forms, no <base>."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; "
        f"script-src 'self' 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def render_page(board: Leaderboard) -> str:
    """index.html: jinja (autoescaped) for the skeleton, the data as escaped JSON, inline JS and CSS."""
    script = _asset("leaderboard.js")
    if "</script" in script.lower():
        raise RuntimeError("leaderboard.js must not contain a closing script tag")
    env = Environment(loader=PackageLoader("evalkit.report", "templates"), autoescape=True, undefined=StrictUndefined)
    return env.get_template("index.html").render(
        title="evalkit leaderboard",
        generated_at=board.generated_at,
        version=board.evalkit_version,
        csp=content_security_policy(script),
        style=Markup(_asset("leaderboard.css")),  # our own stylesheet: no data in it
        script=Markup(script),  # our own script, hashed into the CSP
        data=Markup(script_json(board.model_dump())),  # escaped for a <script> element by script_json
    )


def write_leaderboard(
    run_dirs: list[Path],
    out: Path,
    published: Published | None = None,
    on_skip: Callable[[str], None] | None = None,
) -> Path:
    """Write the leaderboard of `run_dirs` into `out` and return `out/index.html`.

    A folder that is not a scored run is an EvalkitError; with `on_skip` (for "every folder under
    reports/runs") it is reported there and left out instead. Attempt files of an earlier report
    in `out` are replaced; index.html is written last, so it never points at missing files."""
    runs = []
    for run_dir in run_dirs:
        try:
            runs.append(load_run(Path(run_dir)))
        except EvalkitError as exc:
            if on_skip is None:
                raise
            on_skip(str(exc))
    if not runs:
        raise EvalkitError("no scored run to report on (give run folders: reports/runs/<run_id>)")
    ids = [run.manifest.run_id for run in runs]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise EvalkitError(f"run id {twice[0]} given twice (the same run folder, or a copy of it)")
    board, refs, prompts = build_leaderboard(runs, published)
    out = Path(out)
    attempts_dir = out / ATTEMPTS_DIR
    try:
        attempts_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalkitError(f"{out}: cannot write the report there ({exc.strerror or exc})") from None
    for old in attempts_dir.iterdir():  # an earlier, larger report's files; the others are overwritten
        if (match := _ATTEMPT_FILE.fullmatch(old.name)) and int(match[1]) >= len(refs):
            old.unlink()
    siblings: dict[tuple[str, str, str], list[list[Any]]] = {}  # the samples of one task, model and run
    for ref in refs:
        key = (ref.run.manifest.run_id, ref.record.task_id, ref.record.model)
        siblings.setdefault(key, []).append(
            [ref.n, ref.record.sample, attempt_status(ref.record), ref.run.manifest.run_id]
        )
    for ref in refs:
        detail = attempt_detail(
            ref, siblings[(ref.run.manifest.run_id, ref.record.task_id, ref.record.model)], prompts.get(ref.suite, {})
        )
        (attempts_dir / f"{ref.n}.js").write_text(attempt_script(ref.n, detail), encoding="utf-8")
    _write(out / "leaderboard.json", dumps(board.model_dump(), indent=2, ensure_ascii=False) + "\n")
    _write(out / "leaderboard.csv", leaderboard_csv(board))
    _write(out / "attempts.csv", attempts_csv(refs))
    page = out / PAGE
    _write(page, render_page(board))
    return page
