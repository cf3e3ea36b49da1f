"""Run folders and published scores in: the rows the leaderboard is built from.

A scored run folder becomes a `LoadedRun` (manifest, attempt records, scores.jsonl rows, summary.json),
and the runs of a suite say how many of its tasks loaded (`TaskLoading`, from run.json);
published scores (a `model,benchmark,score` CSV or `[published]` tables of evalkit.toml) become
`Published`, model → benchmark → score.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from evalkit.errors import EvalkitError
from evalkit.files import read_lines
from evalkit.integrity import IntegrityReport
from evalkit.records import AttemptRecord
from evalkit.runs.paths import SCORES
from evalkit.runs.store import RunManifest, RunStore
from evalkit.scoring.attempt_scores import AttemptScores
from evalkit.tasks import SkippedTask

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
    manifest = store.required_manifest(run_dir)
    records = sorted(store.records(), key=lambda r: (r.task_id, r.model, r.sample))
    if not records:
        raise EvalkitError(f"{run_dir}: no finished attempt yet (results.jsonl is empty or missing)")
    scores_path = store.paths.scores
    if not scores_path.is_file():
        raise EvalkitError(f"{run_dir}: not scored yet (no {SCORES}); run `evalkit score {run_dir}`")
    scores = {}
    for number, line in enumerate(read_lines(scores_path), 1):
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
    if store.paths.summary.is_file():
        try:
            summary = json.loads(store.paths.summary.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise EvalkitError(f"{store.paths.summary}: not JSON; re-run `evalkit score {run_dir}`") from None
    return LoadedRun(store.dir, manifest, records, scores, summary)


class TaskLoading(BaseModel):
    """How many of the suite's tasks some runs loaded ("7 of 8 tasks loaded"), and the tasks that
    did not load, with the file and the reason (run.json's `skipped_tasks`)."""

    runs: list[str]
    loaded: int
    total: int
    skipped: list[SkippedTask]


def task_loading(runs: Sequence[LoadedRun]) -> list[TaskLoading]:
    """One entry per distinct (tasks loaded, tasks skipped) among `runs`, in run order: a single
    entry when every run of a suite loaded the same tasks."""
    groups: dict[tuple, TaskLoading] = {}
    for run in runs:
        manifest = run.manifest
        key = (tuple(sorted(manifest.tasks)), tuple(manifest.skipped_tasks))
        if key not in groups:
            loaded = len(manifest.tasks)
            groups[key] = TaskLoading(
                runs=[], loaded=loaded, total=loaded + len(manifest.skipped_tasks), skipped=manifest.skipped_tasks
            )
        groups[key].runs.append(manifest.run_id)
    return list(groups.values())


def attempt_resolved(record: AttemptRecord, score: AttemptScores | None) -> bool:
    """The final verdict: the scores.jsonl row's (re-scored, so authoritative), else the record's."""
    return score.correctness.resolved if score is not None else record.resolved


def attempt_integrity(record: AttemptRecord, score: AttemptScores | None) -> IntegrityReport:
    """The integrity report: the scores.jsonl row's (re-scanned by `evalkit score`), else the record's."""
    return score.integrity if score is not None else record.integrity


def attempt_tests_passed(record: AttemptRecord, score: AttemptScores | None) -> bool:
    """What the hidden tests alone said, before integrity."""
    return bool(score.correctness.tests_resolved if score is not None else record.hidden_tests_passed)


def attempt_status(record: AttemptRecord, score: AttemptScores | None) -> str:
    """`r` resolved, `x` the hidden tests passed but a failing integrity verdict withheld it,
    `e` an error the model is not to blame for (not scored), `f` failed."""
    if record.errored:  # whatever its diff did: it is re-run, not scored
        return "e"
    if attempt_resolved(record, score):
        return "r"
    if attempt_tests_passed(record, score) and attempt_integrity(record, score).verdict == "fail":
        return "x"
    return "f"


@dataclass(frozen=True)
class AttemptRef:
    n: int
    run: LoadedRun
    record: AttemptRecord
    suite: str

    @property
    def score(self) -> AttemptScores | None:
        return self.run.scores.get(self.record.key)

    @property
    def status(self) -> str:
        return attempt_status(self.record, self.score)

    @property
    def integrity(self) -> IntegrityReport:
        return attempt_integrity(self.record, self.score)
