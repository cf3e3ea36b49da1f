"""Load a suite: a folder of task folders (task.toml + patches) or a SWE-bench-style JSONL file.

A bad task never stops the others from loading: each problem becomes one `TaskLoadError` line
naming the file, the field and what is wrong.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.errors import EvalkitError
from evalkit.tasks.model import Task

TASK_FILE = "task.toml"
PATCH_FILE = "patch.diff"
TEST_PATCH_FILE = "test_patch.diff"
SUITE_FILE = "suite.toml"


@dataclass(frozen=True)
class TaskLoadError:
    """One unusable task: where it is and why."""

    where: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


@dataclass
class Suite:
    """The tasks that loaded, and one error line for each that did not."""

    name: str
    path: Path
    tasks: list[Task] = field(default_factory=list)
    errors: list[TaskLoadError] = field(default_factory=list)

    def select(self, task_ids: list[str] | None) -> list[Task]:
        """The tasks named in `task_ids` (all when None); an unknown id is a user error."""
        if not task_ids:
            return list(self.tasks)
        known = {t.id: t for t in self.tasks}
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise EvalkitError(f"{self.path}: no task named {', '.join(missing)} (see `evalkit tasks list`)")
        return [known[t] for t in task_ids]


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


def _describe(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "(task)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"field `{where}`: {first['msg']}{more}"


def _load_folder(root: Path) -> Suite:
    suite = Suite(name=_suite_name(root), path=root)
    for task_file in sorted(root.glob(f"*/{TASK_FILE}")):
        task_dir = task_file.parent
        try:
            suite.tasks.append(_task_from_folder(task_dir))
        except ValidationError as exc:
            suite.errors.append(TaskLoadError(str(task_file), _describe(exc)))
        except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
            suite.errors.append(TaskLoadError(str(task_file), str(exc).splitlines()[0]))
    _reject_duplicates(suite)
    return suite


def _suite_name(root: Path) -> str:
    meta = root / SUITE_FILE
    if meta.exists():
        try:
            return str(tomllib.loads(meta.read_text()).get("name", root.name))
        except tomllib.TOMLDecodeError as exc:
            raise EvalkitError(f"{meta}: not valid TOML ({exc})") from None
    return root.name


def _task_from_folder(task_dir: Path) -> Task:
    data: dict[str, Any] = tomllib.loads((task_dir / TASK_FILE).read_text())
    data.setdefault("id", task_dir.name)
    for key, default_name in (("patch", PATCH_FILE), ("test_patch", TEST_PATCH_FILE)):
        if key in data:
            continue
        patch_path = task_dir / data.pop(f"{key}_file", default_name)
        if not patch_path.exists():
            raise ValueError(f"field `{key}`: missing file {patch_path.name} beside task.toml")
        data[key] = patch_path.read_text()
    source = data.get("source")
    if isinstance(source, dict) and source.get("snapshot"):
        snapshot = (task_dir / source["snapshot"]).resolve()
        if not snapshot.is_dir():
            raise ValueError(f"field `source.snapshot`: {source['snapshot']} is not a folder")
        source["snapshot"] = snapshot
    image = data.get("image")
    if isinstance(image, str) and image.startswith(("./", "../")):  # a recipe folder beside the suite
        recipe = (task_dir / image).resolve()
        if not (recipe / "Dockerfile").is_file():
            raise ValueError(f"field `image`: {image} is not a recipe folder (no Dockerfile)")
        data["image"] = str(recipe)
    return Task.model_validate(data)


def _load_jsonl(path: Path) -> Suite:
    suite = Suite(name=path.stem, path=path)
    lines = path.read_text().splitlines()
    if path.suffix == ".json":
        try:
            rows = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise EvalkitError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        lines = [json.dumps(r) for r in (rows if isinstance(rows, list) else [rows])]
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("each line must be a JSON object")
            suite.tasks.append(task_from_swebench_row(row))
        except json.JSONDecodeError as exc:
            suite.errors.append(TaskLoadError(where, f"not valid JSON ({exc.msg})"))
        except ValidationError as exc:
            suite.errors.append(TaskLoadError(where, _describe(exc)))
        except ValueError as exc:
            suite.errors.append(TaskLoadError(where, str(exc)))
    _reject_duplicates(suite)
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
            "command": row.get("test_command", "python -m pytest"),
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


def _reject_duplicates(suite: Suite) -> None:
    seen: set[str] = set()
    unique: list[Task] = []
    for task in suite.tasks:
        if task.id in seen:
            suite.errors.append(TaskLoadError(str(suite.path), f"task id `{task.id}` appears twice; kept the first"))
            continue
        seen.add(task.id)
        unique.append(task)
    suite.tasks = unique
