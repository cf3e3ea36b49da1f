"""The calibration corpus of a suite: per task, the reference change rebuilt the way the variants
are (the same diff algorithm, so that a gap is the variant's, not git's) and each sloppy variant
that can be made on it; the base tree's reader scores them."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalkit.calibration.sloppy_variants import diff_of, read_change, variants
from evalkit.sandbox.workspace import build_workspace
from evalkit.tasks.model import Task


@dataclass(frozen=True)
class CalibrationCase:
    task: Task
    reference: str  # the task's reference change, rebuilt
    variants: dict[str, str]  # kind -> its diff against the base
    base_file: Callable[[str], str | None]


def repository_of(task: Task) -> str:
    """The repository part of a gathered task's id (`owner__name-commit`), else the id itself."""
    return task.id.rsplit("-", 1)[0]


def chosen_tasks(tasks: Sequence[Task], per_repository: int = 0, limit: int = 0) -> list[Task]:
    """The tasks in suite order, at most `per_repository` of each repository and `limit` in all
    (0: no cap)."""
    kept: dict[str, int] = {}
    chosen = []
    for task in tasks:
        repository = repository_of(task)
        if per_repository and kept.get(repository, 0) >= per_repository:
            continue
        kept[repository] = kept.get(repository, 0) + 1
        chosen.append(task)
    return chosen[:limit] if limit else chosen


def _reader(archive_bytes: bytes) -> tuple[Callable[[str], str | None], list[str]]:
    archive = tarfile.open(fileobj=io.BytesIO(archive_bytes))  # noqa: SIM115  (in memory, read as long as the reader lives)
    names = set(archive.getnames())
    cache: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        if path not in cache:
            member = archive.extractfile(f"./{path}") if f"./{path}" in names else None
            cache[path] = member.read().decode("utf-8", errors="replace") if member else None
        return cache[path]

    return read, sorted(name.removeprefix("./") for name in names)


def build_corpus(tasks: Sequence[Task], kinds: Sequence[str] | None = None) -> list[CalibrationCase]:
    """The case of each task whose reference can be rebuilt (no binary files or renames), with the
    variants of `kinds` (None: every kind) that can be made on it."""
    out = []
    for task in tasks:
        read, listing = _reader(build_workspace(task.source).archive)
        change = read_change(task.patch, read, listing)
        if change is None:
            continue
        made = variants(task.patch, read, listing)
        if kinds is not None:
            made = {kind: diff for kind, diff in made.items() if kind in kinds}
        out.append(CalibrationCase(task, diff_of(change.base, change.after), made, read))
    return out
