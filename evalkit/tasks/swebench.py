"""SWE-bench rows in and out: read them (file or Hugging Face hub), import them as Tasks, export
Tasks as SWE-bench's 12 columns, so suites travel between evalkit and SWE-bench tooling.

Row → Task mapping is `task_from_swebench_row` (load.py), so a suite file of rows and an imported
suite folder mean the same tasks.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.errors import EvalkitError
from evalkit.files import read_lines, write_atomic
from evalkit.plain_errors import plain_summary
from evalkit.tasks.load import task_from_swebench_row
from evalkit.tasks.model import Task

# The columns of the SWE-bench datasets on the Hugging Face hub, in their order.
SWEBENCH_COLUMNS = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
)
REQUIRED_COLUMNS = ("instance_id", "repo", "base_commit", "patch", "problem_statement")
FILE_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet")
DEFAULT_SPLIT = "test"
HUB_TIMEOUT_S = 10.0
# Metadata keys an import sets and an export reads back (strings, as Task.metadata requires).
METADATA_COLUMNS = ("hints_text", "created_at", "version", "environment_setup_commit")
ENVIRONMENT_HINT = "swebench"
NO_BASE_COMMIT = (
    "empty base_commit (rows exported from a snapshot suite name their commits with `tasks export --repo-dir`)"
)


# -- reading ---------------------------------------------------------------------------------
def read_swebench_rows(source: str, problems: list[str] | None = None) -> list[dict[str, Any]]:
    """Rows from a local .json/.jsonl/.csv/.parquet file, else from the Hugging Face dataset
    `name[:split]` (split "test" by default). Missing values (null, NaN) are left out of a row.
    With `problems`, a row that cannot be read or lacks a required column is one line there and is
    left out (a file that cannot be read at all, or a column no row has, is still an EvalkitError);
    without it, any such row is the error."""
    path = Path(source)
    if path.is_dir():
        raise EvalkitError(f"{source}: is a folder; give a .json, .jsonl, .csv or .parquet file of SWE-bench rows")
    if path.is_file():
        rows = _read_file(path, problems)
    elif path.suffix.lower() in FILE_SUFFIXES:
        raise EvalkitError(f"{source}: no such file (give a SWE-bench file, or a Hugging Face dataset name)")
    else:
        rows = _read_hub(source)
    return _check_required(rows, source, problems)


def _left_out(problems: list[str] | None, line: str) -> None:
    """One bad row: a line in `problems` when the caller collects them, else the error."""
    if problems is None:
        raise EvalkitError(line)
    problems.append(f"{line}; left out")


def _read_file(path: Path, problems: list[str] | None = None) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _read_jsonl(path, problems)
    if suffix == ".json":
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise EvalkitError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        rows = data if isinstance(data, list) else [data]
        for number, row in enumerate(rows, start=1):
            if not isinstance(row, dict):
                _left_out(problems, f"{path}: item {number} is not a JSON object (expected a list of SWE-bench rows)")
        return [_clean(row) for row in rows if isinstance(row, dict)]
    if suffix in (".csv", ".parquet"):
        return _read_table(path)
    raise EvalkitError(f"{path}: unknown file type (give a .json, .jsonl, .csv or .parquet file)")


def _read_jsonl(path: Path, problems: list[str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            _left_out(problems, f"{path}:{number}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            _left_out(problems, f"{path}:{number}: not a JSON object (each line must be one SWE-bench row)")
            continue
        rows.append(_clean(row))
    return rows


def _read_table(path: Path) -> list[dict[str, Any]]:
    """CSV is read with every cell a string (so versions like "0.20" stay "0.20") and no cell taken
    for missing: CSV cannot tell an empty string from a missing value, and text like "NA" is text."""
    import pandas as pd

    try:
        if path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_parquet(path)
    except Exception as exc:  # pandas/pyarrow raise many kinds for a bad file
        raise EvalkitError(f"{path}: cannot read it as {path.suffix[1:]} ({_first_line(exc)})") from None
    return [_clean(row) for row in frame.to_dict(orient="records")]


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """Plain Python values; null and NaN cells dropped, so "missing" has one meaning."""
    import numpy as np
    import pandas as pd

    clean: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, np.ndarray):
            value = value.tolist()
        elif isinstance(value, np.generic):
            value = value.item()
        if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
            continue
        clean[str(key)] = value
    return clean


def _read_hub(source: str) -> list[dict[str, Any]]:
    """`datasets.load_dataset`, after one quick metadata request: without a network the loader
    retries with backoff for ~25 s before failing, the metadata request fails in under a second."""
    name, _, split = source.partition(":")
    split = split or DEFAULT_SPLIT
    try:
        import datasets
        from huggingface_hub import HfApi
        from huggingface_hub.constants import is_offline_mode

        if not is_offline_mode():  # offline, the loader reads its cache at once
            HfApi().dataset_info(name, timeout=HUB_TIMEOUT_S)
        dataset = datasets.load_dataset(name, split=split)
    except Exception as exc:  # network, unknown dataset or split, gated, cache miss: all one line
        raise EvalkitError(
            f"cannot load dataset {name} (split {split}) from the Hugging Face hub "
            f"({type(exc).__name__}: {_first_line(exc)}); download it and pass the file"
        ) from None
    return [_clean(row) for row in dataset.to_list()]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else "no detail")[:200]


def _check_required(rows: list[dict[str, Any]], source: str, problems: list[str] | None) -> list[dict[str, Any]]:
    """The rows that have every required column; a column no row has is the error."""
    needed = ", ".join(REQUIRED_COLUMNS)
    kept = []
    for number, row in enumerate(rows, start=1):
        lacking = [column for column in REQUIRED_COLUMNS if column not in row]
        if not lacking:
            kept.append(row)
            continue
        if all(lacking[0] not in other for other in rows):
            raise EvalkitError(f"{source}: no `{lacking[0]}` column (SWE-bench rows need {needed})")
        if problems is None:
            more = sum(any(c not in r for c in REQUIRED_COLUMNS) for r in rows) - 1
            tail = f" (and {more} more rows)" if more else ""
            raise EvalkitError(f"{source}: row {number} has no `{lacking[0]}`{tail}; SWE-bench rows need {needed}")
        problems.append(f"{source}: row {number} ({row.get('instance_id', '?')}) has no `{lacking[0]}`; left out")
    return kept


# -- import ----------------------------------------------------------------------------------
def import_swebench(rows: list[dict[str, Any]], repo_dir: Path | None = None) -> tuple[list[Task], list[str]]:
    """Tasks from SWE-bench rows, and one line per problem (a row that cannot be a task, a repo
    with no clone under `repo_dir`). Sources are clones under `repo_dir` when there, else GitHub."""
    tasks: list[Task] = []
    problems: list[str] = []
    seen: set[str] = set()
    missing_clones: dict[str, str] = {}
    for row in rows:
        instance_id = str(row.get("instance_id", "?"))
        if instance_id in seen:
            problems.append(f"{instance_id}: appears twice; kept the first")
            continue
        if not str(row.get("base_commit", "")).strip():
            problems.append(f"{instance_id}: {NO_BASE_COMMIT}; not importable as a task")
            continue
        git, missing = _git_source(str(row.get("repo", "")), repo_dir, str(row["base_commit"]).strip())
        try:
            task = _task(row, git)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            problems.append(f"{instance_id}: {_row_problem(exc)}")
            continue
        except Exception as exc:  # a cell of a type no SWE-bench row has: this row's problem alone
            problems.append(f"{instance_id}: {type(exc).__name__}: {_first_line(exc)}; not importable as a task")
            continue
        if missing:
            missing_clones.setdefault(task.repo, missing)
        seen.add(instance_id)
        tasks.append(task)
    problems.extend(missing_clones.values())
    return tasks, problems


def _task(row: dict[str, Any], git: str) -> Task:
    # Only SWE-bench's columns: a dataset's own extra keys (e.g. Lite copies with a string
    # `source`) must not be read as evalkit's keys, which task_from_swebench_row lets win.
    swe = {key: row[key] for key in SWEBENCH_COLUMNS if key in row}
    task = task_from_swebench_row({**swe, "git": git})
    metadata = dict(task.metadata)
    for key in METADATA_COLUMNS:
        if row.get(key):
            metadata[key] = str(row[key])
    metadata["environment"] = ENVIRONMENT_HINT
    return task.model_copy(update={"metadata": metadata})


def _row_problem(exc: ValueError) -> str:
    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0]
    if any(e["loc"] == ("tests", "fail_to_pass") and e["type"] == "too_short" for e in exc.errors()):
        return "no FAIL_TO_PASS tests; not importable as a task"
    return f"{plain_summary(exc, Task)}; not importable as a task"


def repo_folder_name(repo: str) -> str:
    """The folder of `repo` under a --repo-dir: `owner__name` for `owner/name`, else the name."""
    return repo.replace("/", "__")


def _git_source(repo: str, repo_dir: Path | None, commit: str = "") -> tuple[str, str | None]:
    """The clone to use, and a note when `repo_dir` was given but holds none for this repo: a folder
    named for the repository (`owner__name`, `name`, either with `.git`), else any repository
    directly under `repo_dir` that has the row's base commit (as a shallow mirror named otherwise)."""
    url = f"https://github.com/{repo}"
    if repo_dir is None:
        return url, None
    name = repo.partition("/")[2]
    named = [repo_folder_name(repo)] + ([name] if name else [])
    candidates = [repo_dir / f"{n}{suffix}" for n in named for suffix in ("", ".git")]
    for candidate in candidates:
        if candidate.exists():
            return str(candidate.resolve()), None
    for candidate in sorted(p for p in repo_dir.iterdir() if p.is_dir()) if repo_dir.is_dir() else []:
        if commit and _has_commit(candidate, commit):
            return str(candidate.resolve()), None
    looked = " or ".join(str(c) for c in candidates[::2])
    return url, f"{repo}: no clone at {looked}; its tasks use {url} (cloned when a workspace is built)"


def _has_commit(folder: Path, commit: str) -> bool:
    found = subprocess.run(["git", "-C", str(folder), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    return found.returncode == 0


# -- export ----------------------------------------------------------------------------------
def export_swebench(tasks: list[Task]) -> list[dict[str, str]]:
    """One SWE-bench row per task, the 12 columns in the hub's order; test lists as JSON strings
    as on the hub. A task on a snapshot folder has no commit: its base_commit is "" (see
    `export_notes`) unless the export wrote its repository first (`tasks export --repo-dir`, which
    hands this function the tasks on those repositories). evalkit-only fields (image, limits, test
    command) have no column and are lost."""
    return [_row(task) for task in tasks]


def _row(task: Task) -> dict[str, str]:
    meta = task.metadata
    row = {
        "repo": task.repo,
        "instance_id": task.id,
        "base_commit": task.source.base_commit or "",
        "patch": task.patch,
        "test_patch": task.test_patch,
        "problem_statement": task.prompt,
        "FAIL_TO_PASS": json.dumps(task.tests.fail_to_pass),
        "PASS_TO_PASS": json.dumps(task.tests.pass_to_pass),
    }
    row.update({key: meta.get(key, "") for key in METADATA_COLUMNS})
    return {column: row[column] for column in SWEBENCH_COLUMNS}


def export_notes(tasks: list[Task]) -> list[str]:
    """One line per task whose export loses something a SWE-bench harness needs."""
    return [
        f"{task.id}: starts from a snapshot folder, not a commit; exported with an empty base_commit "
        "(--repo-dir DIR writes its repository there and names the commit)"
        for task in tasks
        if task.source.base_commit is None
    ]


def write_swebench(rows: list[dict[str, Any]], path: Path) -> Path:
    """Write rows as JSON Lines (.jsonl) or a JSON list (.json), chosen by the suffix."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        text = "".join(json.dumps(row) + "\n" for row in rows)
    elif suffix == ".json":
        text = json.dumps(rows, indent=2) + "\n"
    else:
        raise EvalkitError(f"{path}: cannot write SWE-bench rows as `{path.suffix}`; name the file .jsonl or .json")
    write_atomic(path, text)
    return path
