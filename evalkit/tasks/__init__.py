"""Tasks and suites: the Task record and the loaders for suite folders and SWE-bench JSONL."""

from evalkit.tasks.load import SkippedTask, Suite, SuiteSettings, load_suite, task_from_swebench_row
from evalkit.tasks.model import Limits, Task, TaskSource, TestSpec

__all__ = [
    "Limits",
    "SkippedTask",
    "Suite",
    "SuiteSettings",
    "Task",
    "TaskSource",
    "TestSpec",
    "load_suite",
    "task_from_swebench_row",
]
