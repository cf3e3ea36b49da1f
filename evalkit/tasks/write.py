"""Writing suites: tasks → a suite folder (`suite.toml`, and per task `task.toml`, `patch.diff`,
`test_patch.diff`) that `load_suite` reads back unchanged. Used by `gather` and `tasks import`."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import tomli_w

from evalkit.files import file_component, write_atomic
from evalkit.tasks.load import PATCH_FILE, SUITE_FILE, TASK_FILE, TEST_PATCH_FILE
from evalkit.tasks.model import Task


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
        task_dir.mkdir()
        (task_dir / TASK_FILE).write_text(tomli_w.dumps(task_record(task)))
        (task_dir / PATCH_FILE).write_text(task.patch)
        (task_dir / TEST_PATCH_FILE).write_text(task.test_patch)
    return folder
