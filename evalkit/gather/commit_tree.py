"""What the tree of a commit holds, read with git: files as text, folders, listings and the test
modules beside the touched ones (the parent's tree is what a candidate's environment and tests
are read from)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Collection
from pathlib import Path

from evalkit.gather.history import DEFAULT_PYTHON_FILES, is_test_module


def tree_reader(repo: Path, commit: str) -> tuple[Callable[[str], str | None], Callable[[str], bool]]:
    def read(path: str) -> str | None:
        result = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True)
        return result.stdout if result.returncode == 0 else None

    def has_folder(path: str) -> bool:
        result = subprocess.run(["git", "cat-file", "-t", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True)
        return result.stdout.strip() == "tree"

    return read, has_folder


def folder_files(repo: Path, commit: str, folder: str) -> list[str]:
    """The paths of the files directly in `folder` at `commit`."""
    spec = f"{folder}/" if folder else "."
    result = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "--", spec], cwd=repo, capture_output=True, text=True
    )
    return result.stdout.splitlines() if result.returncode == 0 else []


def neighbour_modules(
    repo: Path,
    commit: str,
    touched: list[str],
    limit: int,
    patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES,
    leave_out: Collection[str] = (),
) -> list[str]:
    """Up to `limit` test modules (named as `patterns` say) already in the tree at `commit`, from the
    folders of the touched ones (nearest first: same folder, sorted by name); none of `leave_out`
    (the modules the test part deletes: pytest would not find them)."""
    if limit <= 0 or not touched:
        return []
    folders = {str(Path(p).parent) for p in touched}
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit], cwd=repo, capture_output=True, text=True)
    found = []
    for path in sorted(listed.stdout.splitlines()):
        beside = str(Path(path).parent) in folders and path not in touched and path not in leave_out
        if beside and is_test_module(path, patterns):
            found.append(path)
    return found[:limit]
