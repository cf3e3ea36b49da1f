"""Writing suites: tasks → a suite folder (`suite.toml`, and per task `task.toml`, `patch.diff`,
`test_patch.diff`) that `load_suite` reads back unchanged. Used by `gather` and `tasks import`."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path

import tomli_w

from evalkit.diffs import diff_bytes
from evalkit.files import file_component, write_atomic
from evalkit.tasks.load import PATCH_FILE, SUITE_FILE, TASK_FILE, TEST_PATCH_FILE
from evalkit.tasks.model import Task

STAGING = ".staging"  # task folders being written; what a killed writer leaves here is removed on the next write


def task_record(task: Task) -> dict:
    """The task.toml content of a task: everything but the two diffs, None values dropped."""
    data = task.model_dump(mode="json", exclude={"patch", "test_patch"}, exclude_none=True)
    return data


def write_suite(
    folder: Path,
    name: str,
    description: str,
    tasks: Iterable[Task],
    replace: bool = False,
    max_prompt_chars: int | None = None,
) -> Path:
    """Write tasks as a suite folder (suite.toml with `max_prompt_chars` when given). With `replace`,
    task folders already there are rewritten; otherwise an existing task folder is an error (a
    gather never silently overwrites work)."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"name": name, "description": description}
    if max_prompt_chars is not None:
        settings["max_prompt_chars"] = max_prompt_chars
    write_atomic(folder / SUITE_FILE, tomli_w.dumps(settings))
    for task in tasks:
        task_dir = folder / file_component(task.id)  # the id itself is kept in task.toml
        if task_dir.exists():
            if not replace:
                raise FileExistsError(task_dir)
            shutil.rmtree(task_dir)
        _write_task_files(task_dir, task)
    return folder


def _write_task_files(task_dir: Path, task: Task) -> None:
    task_dir.mkdir(parents=True)
    (task_dir / TASK_FILE).write_text(tomli_w.dumps(task_record(task)))
    (task_dir / PATCH_FILE).write_bytes(diff_bytes(task.patch))
    (task_dir / TEST_PATCH_FILE).write_bytes(diff_bytes(task.test_patch))


def write_task_atomic(folder: Path, task: Task) -> Path:
    """Write one task folder of a suite so that a reader (or a kill) sees it complete or not at all:
    written under `folder/STAGING` (out of `load_suite`'s sight), then renamed into place; a folder
    of the same task already there is replaced."""
    task_dir = folder / file_component(task.id)
    staging = folder / STAGING / f"{task_dir.name}.{secrets.token_hex(4)}"
    _write_task_files(staging / "new", task)
    if task_dir.exists():
        task_dir.rename(staging / "old")
    (staging / "new").rename(task_dir)
    shutil.rmtree(staging)
    return task_dir


def remove_task_folder(folder: Path, task_id: str) -> None:
    """Remove a task folder of a suite at once (moved out of `load_suite`'s sight, then deleted)."""
    task_dir = folder / file_component(task_id)
    if task_dir.exists():
        trash = folder / STAGING / f"{task_dir.name}.{secrets.token_hex(4)}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        task_dir.rename(trash)
        shutil.rmtree(trash)
