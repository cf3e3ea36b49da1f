"""Bodies of `evalkit tasks import swebench` and `evalkit tasks export`: a suite in from SWE-bench
rows and out to them. Plain functions over consoles returning the exit code, so cli/ only declares
options and tests need no CLI runner. Above sandbox/, as an export with --repo-dir writes each
snapshot task's repository through the workspace builder."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from evalkit.errors import EvalkitError
from evalkit.sandbox.workspace import write_base_repository
from evalkit.tasks.load import DEFAULT_MAX_PROMPT_CHARS, load_suite
from evalkit.tasks.model import Task, TaskSource
from evalkit.tasks.swebench import (
    export_notes,
    export_swebench,
    import_swebench,
    read_swebench_rows,
    repo_folder_name,
    write_swebench,
)
from evalkit.tasks.write import write_suite
from evalkit.wording import counted

EXPORT_FORMATS = ("swebench",)


def import_command(source: str, out: Path, repo_dir: Path | None, console: Console, err_console: Console) -> int:
    """SWE-bench rows (file or hub dataset) → a suite folder; rows that cannot be tasks are
    reported one line each. Exit 1 when no row could be imported."""
    unreadable: list[str] = []
    rows = read_swebench_rows(source, unreadable)  # a bad row is one line, never the end of the import
    tasks, problems = import_swebench(rows, repo_dir)
    problems = unreadable + problems
    for problem in problems:
        err_console.print(f"[yellow]note[/] {escape(problem)}", highlight=False, soft_wrap=True)
    if not tasks:
        rows_read = counted(len(rows), "row")
        err_console.print(f"no task imported: none of the {rows_read} of {escape(source)} is importable")
        return 1
    name = Path(source).stem if Path(source).is_file() else source.partition(":")[0].rsplit("/", 1)[-1]
    longest = max(len(task.prompt) for task in tasks)
    max_prompt_chars = longest if longest > DEFAULT_MAX_PROMPT_CHARS else None
    if max_prompt_chars:
        long = sum(len(task.prompt) > DEFAULT_MAX_PROMPT_CHARS for task in tasks)
        err_console.print(
            f"[yellow]note[/] {counted(long, 'problem statement')} longer than {DEFAULT_MAX_PROMPT_CHARS:,} characters "
            f"(longest {longest:,}): the suite's suite.toml sets max_prompt_chars = {longest}",
            highlight=False,
            soft_wrap=True,
        )
    try:
        write_suite(out, name, f"imported from SWE-bench rows: {source}", tasks, max_prompt_chars=max_prompt_chars)
    except FileExistsError as exc:
        raise EvalkitError(f"{exc.filename or exc}: already exists; remove it or give another --out") from None
    except OSError as exc:
        raise EvalkitError(f"{out}: cannot write the suite ({exc.strerror or exc})") from None
    skipped = len(rows) + len(unreadable) - len(tasks)
    console.print(f"wrote {counted(len(tasks), 'task')} to {escape(str(out))} ({counted(skipped, 'row')} not imported)")
    return 0


def on_base_repositories(tasks: list[Task], repo_dir: Path) -> list[Task]:
    """The tasks, those on a snapshot folder moved onto a git repository written under `repo_dir`
    (`<repo>`, or `owner__name`) whose one commit is the workspace's base commit, so that their
    SWE-bench rows name a real `base_commit` and `tasks import --repo-dir` finds the clone."""
    commits: dict[Path, str] = {}
    moved = []
    for task in tasks:
        snapshot = task.source.snapshot
        if snapshot is None:
            moved.append(task)
            continue
        repo = task.repo or snapshot.name
        if not re.fullmatch(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?", repo) or repo in (".", ".."):
            raise EvalkitError(
                f"task {task.id}: repo `{repo}` cannot be a folder name under --repo-dir; give it as `owner/name`"
            )
        dest = (repo_dir / repo_folder_name(repo)).resolve()
        if snapshot not in commits:
            commits[snapshot] = write_base_repository(task.source, dest)
        source = TaskSource(git=str(dest), base_commit=commits[snapshot])
        moved.append(task.model_copy(update={"repo": repo, "source": source}))
    return moved


def export_command(
    suite: Path,
    fmt: str,
    out: Path | None,
    console: Console,
    err_console: Console | None = None,
    repo_dir: Path | None = None,
) -> int:
    """A suite as SWE-bench rows: to `out` (.jsonl or .json), else JSON Lines on `console`; with
    `repo_dir`, snapshot tasks' repositories are written there first and their rows name the
    commit. Notes (tasks not loaded, snapshot tasks without a commit) go to `err_console`."""
    if fmt not in EXPORT_FORMATS:
        raise EvalkitError(f"--format {fmt}: unknown export format (known: {', '.join(EXPORT_FORMATS)})")
    err_console = err_console or Console(stderr=True)
    loaded = load_suite(suite)
    for error in loaded.skipped:
        err_console.print(f"[yellow]skipped[/] {escape(str(error))}", highlight=False, soft_wrap=True)
    tasks = loaded.tasks if repo_dir is None else on_base_repositories(loaded.tasks, repo_dir)
    rows = export_swebench(tasks)
    for note in export_notes(tasks):
        err_console.print(f"[yellow]note[/] {escape(note)}", highlight=False, soft_wrap=True)
    moved = [new for new, old in zip(tasks, loaded.tasks, strict=True) if old.source.snapshot and new.source.git]
    if repo_dir is not None and moved:
        written = sorted({Path(task.source.git or "").name for task in moved})
        err_console.print(
            f"repositories written to {escape(str(repo_dir))}: {escape(', '.join(written))} "
            f"(import with `evalkit tasks import swebench FILE --out SUITE --repo-dir {escape(str(repo_dir))}`)",
            highlight=False,
            soft_wrap=True,
        )
    if out is None:
        for row in rows:
            console.out(json.dumps(row), highlight=False)
    else:
        write_swebench(rows, out)
        console.print(f"wrote {counted(len(rows), 'SWE-bench row')} to {escape(str(out))}")
    return 0
