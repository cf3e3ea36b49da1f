"""Load a suite: a folder of task folders (task.toml + patches) or a SWE-bench-style JSONL file.

A bad task never stops the others from loading, and never vanishes: it becomes a `SkippedTask`
naming the task, the file at fault (task.toml, patch.diff, a JSONL line) and the reason in plain
words. Commands refuse a suite with skipped tasks unless told to run the rest (`--skip-invalid`),
and runs record them (`run.json`, `summary.json`, the leaderboard, `compare`).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.diffs import diff_text
from evalkit.errors import EvalkitError
from evalkit.plain_errors import plain_summary
from evalkit.tasks.model import Task
from evalkit.tasks.spec_commands import spec_tests

TASK_FILE = "task.toml"
PATCH_FILE = "patch.diff"
TEST_PATCH_FILE = "test_patch.diff"
SUITE_FILE = "suite.toml"
DEFAULT_MAX_PROMPT_CHARS = 20_000  # a prompt longer than this is a pasted file or log, not a request
JSONL_PROMPT_HINT = (
    "import the rows with `evalkit tasks import swebench` and raise `max_prompt_chars` in its suite.toml"
)


class SkippedTask(BaseModel):
    """A task left out of its suite: which one, the file at fault and why. Recorded in run.json
    and summary.json, so it is pydantic."""

    model_config = ConfigDict(frozen=True)

    task: str = Field(description="The task's folder name; in a JSONL suite its instance_id, or `line N`.")
    file: str = Field(description="The file at fault as reached from the suite path (`path:line` for a JSONL row).")
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


class SuiteSettings(BaseModel):
    """suite.toml: the suite's name and description, and the limits its tasks are checked against."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="Defaults to the folder name.")
    description: str = ""
    max_prompt_chars: int = Field(DEFAULT_MAX_PROMPT_CHARS, gt=0, description="Longest prompt a task may have.")


@dataclass
class Suite:
    """The tasks that loaded, and the tasks that did not (with the reason)."""

    name: str
    path: Path
    tasks: list[Task] = field(default_factory=list)
    skipped: list[SkippedTask] = field(default_factory=list)
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS

    @property
    def total(self) -> int:
        """Tasks found, loaded or not."""
        return len(self.tasks) + len(self.skipped)

    def select(self, task_ids: list[str] | None) -> list[Task]:
        """The tasks named in `task_ids` (all when None); an unknown id is a user error."""
        if not task_ids:
            return list(self.tasks)
        known = {t.id: t for t in self.tasks}
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise EvalkitError(f"{self.path}: no task named {', '.join(missing)} (see `evalkit tasks list`)")
        return [known[t] for t in task_ids]


class _Problem(Exception):
    """Why one task cannot load, and the file to blame."""

    def __init__(self, file: Path | str, reason: str) -> None:
        super().__init__(reason)
        self.file = str(file)
        self.reason = reason


def load_suite(path: str | Path) -> Suite:
    """Load every task under `path` (a suite folder or a .jsonl file)."""
    path = Path(path)
    if not path.exists():
        raise EvalkitError(f"{path}: no such suite (give a suite folder or a .jsonl file)")
    if path.is_dir():
        return _load_folder(path)
    if path.suffix in (".jsonl", ".json"):
        return _load_jsonl(path)
    raise EvalkitError(f"{path}: not a suite (expected a folder of tasks or a .jsonl file)")


def _read_text(path: Path) -> str:
    """A file's text; a byte that is not UTF-8 is a `_Problem` naming the file and the line."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        reason = f"line {line}: byte 0x{data[exc.start]:02x} is not UTF-8; save the file as UTF-8"
        raise _Problem(path, reason) from None


def suite_settings(root: Path) -> SuiteSettings:
    """The suite folder's suite.toml (defaults when there is none); a bad one is one EvalkitError line."""
    meta = root / SUITE_FILE
    if not meta.is_file():
        return SuiteSettings()
    try:
        return SuiteSettings.model_validate(tomllib.loads(_read_text(meta)))
    except _Problem as exc:
        raise EvalkitError(f"{meta}: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EvalkitError(f"{meta}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        raise EvalkitError(f"{meta}: {plain_summary(exc, SuiteSettings)}") from None


def _check_prompt(task: Task, limit: int, how_to_raise: str) -> None:
    if len(task.prompt) > limit:
        raise ValueError(
            f"task `{task.id}`: the prompt is {len(task.prompt):,} characters, over the limit of {limit:,} "
            f"(shorten it, or {how_to_raise})"
        )


def _load_folder(root: Path) -> Suite:
    settings = suite_settings(root)
    suite = Suite(name=settings.name or root.name, path=root, max_prompt_chars=settings.max_prompt_chars)
    first_folder: dict[str, Path] = {}
    for task_file in sorted(root.glob(f"*/{TASK_FILE}")):
        task_dir = task_file.parent
        try:
            task = _task_from_folder(task_dir)
            _check_prompt(task, settings.max_prompt_chars, f"raise `max_prompt_chars` in {root / SUITE_FILE}")
            if task.id in first_folder:
                raise _Problem(
                    task_file,
                    f"task id `{task.id}` is already the id of {first_folder[task.id]}; kept that one "
                    f"(give one of them another `id`)",
                )
        except _Problem as exc:
            file, reason = exc.file, exc.reason
        except ValidationError as exc:
            file, reason = str(task_file), plain_summary(exc, Task)
        except ValueError as exc:
            file, reason = str(task_file), str(exc).splitlines()[0]
        else:
            first_folder[task.id] = task_dir
            suite.tasks.append(task)
            continue
        suite.skipped.append(SkippedTask(task=task_dir.name, file=file, reason=reason))
    return suite


def _task_from_folder(task_dir: Path) -> Task:
    task_file = task_dir / TASK_FILE
    try:
        data: dict[str, Any] = tomllib.loads(_read_text(task_file))
    except tomllib.TOMLDecodeError as exc:
        raise _Problem(task_file, f"not valid TOML ({exc})") from None
    except OSError as exc:
        raise _Problem(task_file, f"cannot read it ({exc.strerror or exc})") from None
    data.setdefault("id", task_dir.name)
    for key, default_name, what in (
        ("patch", PATCH_FILE, "the reference change"),
        ("test_patch", TEST_PATCH_FILE, "the hidden tests"),
    ):
        if key in data:
            continue
        name = data.pop(f"{key}_file", default_name)
        if not isinstance(name, str) or not name:
            raise _Problem(task_file, f"`{key}_file`: expected a file name, got {name!r}")
        patch_path = task_dir / name
        if not patch_path.is_file():
            raise _Problem(patch_path, f"missing: {what} of the task (or name another file with `{key}_file`)")
        try:
            data[key] = diff_text(patch_path.read_bytes())  # a diff's bytes are content, UTF-8 or not
        except OSError as exc:
            raise _Problem(patch_path, f"cannot read it ({exc.strerror or exc})") from None
    source = data.get("source")
    if isinstance(source, dict) and isinstance(source.get("snapshot"), str) and source["snapshot"]:
        snapshot = (task_dir / source["snapshot"]).resolve()
        if not snapshot.is_dir():
            raise _Problem(task_file, f"`source.snapshot`: {source['snapshot']} is not a folder")
        source["snapshot"] = snapshot
    if isinstance(source, dict) and isinstance(source.get("git"), str) and source["git"].startswith(("./", "../")):
        bundled = (task_dir / source["git"]).resolve()  # a repository or git bundle shipped with the suite
        if not bundled.exists():
            raise _Problem(task_file, f"`source.git`: {source['git']} does not exist beside the task")
        source["git"] = str(bundled)
    image = data.get("image")
    if isinstance(image, str) and image.startswith(("./", "../")):  # a recipe folder beside the suite
        recipe = (task_dir / image).resolve()
        if not (recipe / "Dockerfile").is_file():
            raise _Problem(task_file, f"`image`: {image} is not a recipe folder (no Dockerfile)")
        data["image"] = str(recipe)
    return Task.model_validate(data)


def _jsonl_rows(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of each row; a .json file's list items are numbered from 1."""
    try:
        text = _read_text(path)
    except _Problem as exc:
        raise EvalkitError(f"{path}: {exc.reason}") from None
    if path.suffix != ".json":
        return list(enumerate(text.splitlines(), start=1))
    try:
        rows = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvalkitError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return list(enumerate((json.dumps(r) for r in (rows if isinstance(rows, list) else [rows])), start=1))


def _load_jsonl(path: Path) -> Suite:
    suite = Suite(name=path.stem, path=path)
    first_line: dict[str, int] = {}
    for number, line in _jsonl_rows(path):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        name = f"line {number}"
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("each line must be a JSON object")
            name = str(row.get("instance_id") or row.get("id") or name)
            task = task_from_swebench_row(row)
            _check_prompt(task, suite.max_prompt_chars, JSONL_PROMPT_HINT)
            if task.id in first_line:
                raise ValueError(f"task id `{task.id}` is already the id of line {first_line[task.id]}; kept that one")
        except json.JSONDecodeError as exc:
            reason = f"not valid JSON ({exc.msg})"
        except ValidationError as exc:
            reason = plain_summary(exc, Task)
        except ValueError as exc:
            reason = str(exc)
        else:
            first_line[task.id] = number
            suite.tasks.append(task)
            continue
        suite.skipped.append(SkippedTask(task=name, file=where, reason=reason))
    return suite


def _test_ids(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise ValueError(f"field `{name}`: not a JSON list of test ids") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field `{name}`: expected a list of test ids")
    return value


def _runner_of(row: dict[str, Any]) -> dict[str, str]:
    """A row's own `test_command` (pytest), else the command and runner SWE-bench's spec for its
    (repo, version) names, else `python -m pytest`."""
    if "test_command" in row:
        return {"command": row["test_command"]}
    return spec_tests(str(row.get("repo", "")), str(row.get("version", ""))) or {"command": "python -m pytest"}


def task_from_swebench_row(row: dict[str, Any]) -> Task:
    """Map a SWE-bench row (instance_id, repo, base_commit, patch, test_patch, problem_statement,
    FAIL_TO_PASS, PASS_TO_PASS) onto a Task; evalkit's own keys (source, tests, limits...) win."""
    if "instance_id" not in row and "id" in row:
        return Task.model_validate(row)
    repo = row.get("repo", "")
    git = row.get("git") or (f"https://github.com/{repo}" if repo else None)
    data: dict[str, Any] = {
        "id": row.get("instance_id"),
        "prompt": row.get("problem_statement"),
        "repo": repo,
        "patch": row.get("patch"),
        "test_patch": row.get("test_patch"),
        "source": row.get("source") or {"git": git, "base_commit": row.get("base_commit")},
        "tests": row.get("tests")
        or {
            **_runner_of(row),
            "fail_to_pass": _test_ids(row.get("FAIL_TO_PASS", []), "FAIL_TO_PASS"),
            "pass_to_pass": _test_ids(row.get("PASS_TO_PASS", []), "PASS_TO_PASS"),
        },
    }
    for key in ("language", "tags", "image", "limits"):
        if key in row:
            data[key] = row[key]
    meta = {k: str(row[k]) for k in ("version", "created_at", "environment_setup_commit") if row.get(k)}
    if meta:
        data["metadata"] = meta
    return Task.model_validate(data)
