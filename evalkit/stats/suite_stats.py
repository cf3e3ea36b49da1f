"""How big a suite's tasks are (prompt length, reference change, tests), per task and summarised,
so a suite can be set beside SWE-bench and CursorBench. Pure functions: Tasks or rows in, figures out."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypedDict

import numpy as np
from pydantic import BaseModel

from evalkit.diffs import changed_lines, changed_paths
from evalkit.errors import EvalkitError
from evalkit.tasks.model import Task

# Measure → what it counts. Changed lines are added + removed lines, diff headers excluded.
MEASURES: dict[str, str] = {
    "prompt_chars": "prompt characters",
    "lines_without_tests": "changed lines, without tests (patch)",
    "lines_with_tests": "changed lines, with tests (patch + test_patch)",
    "files_without_tests": "files changed, without tests (patch)",
    "files_with_tests": "files changed, with tests (patch + test_patch)",
    "fail_to_pass": "FAIL_TO_PASS tests",
    "pass_to_pass": "PASS_TO_PASS tests",
}


class TaskFigures(BaseModel):
    """One task's measures; None where the source lacks the data (e.g. rows without test_patch)."""

    id: str
    prompt_chars: int
    lines_without_tests: int
    lines_with_tests: int | None
    files_without_tests: int
    files_with_tests: int | None
    fail_to_pass: int | None
    pass_to_pass: int | None
    underspecified: list[str] = []  # names the tests need that the prompt does not give (gathered tasks)


class Description(TypedDict):
    n: int
    median: float | None
    mean: float | None
    q1: float | None
    q3: float | None
    min: float | None
    max: float | None


def figures(
    task_id: str,
    prompt: str,
    patch: str,
    test_patch: str | None,
    fail_to_pass: int | None,
    pass_to_pass: int | None,
) -> TaskFigures:
    """The measures of one task from its parts; a None test_patch leaves the with-tests measures None."""
    try:
        paths = set(changed_paths(patch))
        lines = changed_lines(patch)
        test_paths = set(changed_paths(test_patch)) if test_patch is not None else None
        test_lines = changed_lines(test_patch) if test_patch is not None else None
    except EvalkitError as exc:
        raise EvalkitError(f"{task_id}: {exc}") from None
    return TaskFigures(
        id=task_id,
        prompt_chars=len(prompt),
        lines_without_tests=lines,
        lines_with_tests=None if test_lines is None else lines + test_lines,
        files_without_tests=len(paths),
        files_with_tests=None if test_paths is None else len(paths | test_paths),
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
    )


def task_figures(task: Task) -> TaskFigures:
    """The measures of a Task (every one is available), with its underspecified names."""
    measured = figures(
        task.id,
        task.prompt,
        task.patch,
        task.test_patch,
        len(task.tests.fail_to_pass),
        len(task.tests.pass_to_pass),
    )
    return measured.model_copy(update={"underspecified": task.underspecified})


def row_figures(row: dict[str, Any]) -> TaskFigures:
    """The measures of a raw SWE-bench row; those needing test_patch, FAIL_TO_PASS or
    PASS_TO_PASS are None when the row lacks that column (e.g. partial copies of Lite)."""
    task_id = str(row.get("instance_id", "?"))
    return figures(
        task_id,
        str(row["problem_statement"]),
        str(row["patch"]),
        row.get("test_patch"),
        _count_tests(row, "FAIL_TO_PASS", task_id),
        _count_tests(row, "PASS_TO_PASS", task_id),
    )


def _count_tests(row: dict[str, Any], column: str, task_id: str) -> int | None:
    value = row.get(column)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise EvalkitError(f"{task_id}: `{column}` is not a JSON list of test ids") from None
    if not isinstance(value, list):
        raise EvalkitError(f"{task_id}: `{column}` is not a list of test ids")
    return len(value)


def describe(values: Iterable[float]) -> Description:
    """n, median, mean, quartiles, min and max of the values.

    Quartiles use linear interpolation (numpy's default, the same as pandas' `quantile`, R's
    type 7 and spreadsheets' QUARTILE.INC): for n sorted values the p-quantile sits at position
    p·(n−1), between the two neighbouring values. Figures are rounded to 2 decimals, and whole
    numbers given as ints, so a stored summary compares exactly. No values: n 0, the rest None.
    """
    data = np.asarray(list(values), dtype=float)
    if data.size == 0:
        return Description(n=0, median=None, mean=None, q1=None, q3=None, min=None, max=None)
    q1, median, q3 = np.quantile(data, [0.25, 0.5, 0.75], method="linear")
    return Description(
        n=int(data.size),
        median=_tidy(median),
        mean=_tidy(data.mean()),
        q1=_tidy(q1),
        q3=_tidy(q3),
        min=_tidy(data.min()),
        max=_tidy(data.max()),
    )


def _tidy(value: float) -> float:
    rounded = round(float(value), 2)
    return int(rounded) if rounded.is_integer() else rounded


def summarize(per_task: Iterable[TaskFigures]) -> dict[str, Description]:
    """`describe` of every measure, over the tasks that have it (n says how many)."""
    per_task = list(per_task)
    return {measure: describe(v for f in per_task if (v := getattr(f, measure)) is not None) for measure in MEASURES}
