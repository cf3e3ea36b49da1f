"""The hygiene part of the quality axis, and the reading of a change into its files.

Hygiene counts what a reviewer would ask to have removed before merging: breakpoints,
commented-out code, stray new files (backups, rejects, logs, scratch scripts), hunks that only
change whitespace, and edits to forbidden paths (lock files by default). The
reference change says what is part of the task: files it adds and paths it edits are not litter.
Debug prints are read by function (`quality_review.debug_prints`).
"""

from __future__ import annotations

import ast
import fnmatch
import re
import textwrap
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from unidiff import PatchedFile
from unidiff.patch import Hunk, Line

from evalkit.diffs import changed_paths, is_test_path, parsed_diff
from evalkit.pyparse import parse_python

LITTER = ("*.orig", "*.rej", "*.bak", "*~", "*.swp", ".DS_Store", "*.log", "*.pyc")
SCRATCH = ("scratch*.py", "tmp*.py", "debug*.py", "repro*.py", "test_*.py")
ROOT_SCRIPTS = ("setup.py", "conftest.py", "noxfile.py")  # expected at a repository's root
TEST_DIRS = ("tests", "test")

_BREAKPOINT = re.compile(
    r"breakpoint\(|i?pdb\.set_trace\(|import\s+i?pdb\b|from\s+i?pdb\s+import\b|__import__\(['\"]i?pdb['\"]\)"
)


@dataclass(frozen=True)
class ChangedFile:
    """One file of the change: its path after, its path in the base (None when new), its hunks."""

    path: str
    source: str | None
    patched: PatchedFile

    @property
    def lintable(self) -> bool:
        return self.path.endswith(".py") and not self.patched.is_binary_file

    @property
    def deleted(self) -> bool:
        return self.patched.is_removed_file


def changed_files(diff: str) -> list[ChangedFile]:
    """The files of a diff (none for text without file headers); `EvalkitError` when it is broken."""
    paths = changed_paths(diff)
    files = []
    for path, patched in zip(paths, parsed_diff(diff), strict=True):
        if patched.is_added_file:
            source = None
        elif patched.is_rename:
            source = patched.source_file.removeprefix("a/")
        else:
            source = path
        files.append(ChangedFile(path, source, patched))
    return files


def non_test_diff(diff: str) -> str:
    """The part of `diff` about non-test files (binary files carry no lines)."""
    return "".join(str(f.patched) for f in changed_files(diff) if not is_test_path(f.path))


def added_lines(file: ChangedFile) -> list[Line]:
    return [line for hunk in file.patched for line in hunk if line.is_added]


def matches_any(path: str, globs: Sequence[str]) -> bool:
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(name, glob) for glob in globs)


def _code(line: Line) -> str:
    return line.value.strip()


def hygiene_findings(
    files: list[ChangedFile], bases: dict[str, str | None], reference: list[ChangedFile], forbidden: Sequence[str]
) -> dict:
    """The hygiene findings, as QualityScore fields. New files and forbidden edits the reference
    makes as well are part of the task, not litter."""
    reference_added = {f.path for f in reference if f.patched.is_added_file}
    python = [f for f in files if f.lintable]
    return {
        "breakpoints": sum(_is_breakpoint(line) for f in python for line in added_lines(f)),
        "commented_code": sum(_commented_code_blocks(f) for f in python),
        "stray_files": [
            f.path for f in files if f.patched.is_added_file and _is_litter(f.path) and f.path not in reference_added
        ],
        "whitespace_only_hunks": sum(whitespace_only(hunk) for f in files for hunk in f.patched),
        "forbidden_edits": [
            f.path for f in files if matches_any(f.path, forbidden) and f.path not in {r.path for r in reference}
        ],
    }


def _is_breakpoint(line: Line) -> bool:
    code = _code(line)
    return not code.startswith("#") and any(_BREAKPOINT.match(part.strip()) for part in code.split(";"))


def _commented_code_blocks(file: ChangedFile) -> int:
    """Runs of >= 2 consecutive added comment lines whose text, uncommented, is Python code."""
    blocks: list[list[str]] = []
    last = None
    for line in added_lines(file):
        if not _code(line).startswith("#") or _code(line).startswith("#!"):
            last = None
            continue
        if last is None or line.target_line_no != last + 1:
            blocks.append([])
        blocks[-1].append(re.sub(r"^\s*#", "", line.value.rstrip("\n")))
        last = line.target_line_no
    return sum(len(block) >= 2 and _is_code("\n".join(block)) for block in blocks)


def _is_code(text: str) -> bool:
    """Parses as Python and says more than prose that happens to parse (`TODO: fix`, `See above`
    does not, but bare words and `Note: this` do)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_python(textwrap.dedent(text))
        except (SyntaxError, ValueError):
            return False
    return any(not _prose_like(statement) for statement in tree.body)


def _prose_like(statement: ast.stmt) -> bool:
    words = (ast.Name, ast.Attribute, ast.Constant)
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, words)
    return isinstance(statement, ast.AnnAssign) and statement.value is None


def whitespace_only(hunk: Hunk) -> bool:
    """A hunk whose added and removed lines are the same text once whitespace is ignored."""
    added = "".join("".join(line.value.split()) for line in hunk if line.is_added)
    removed = "".join("".join(line.value.split()) for line in hunk if line.is_removed)
    return bool(hunk.added or hunk.removed) and added == removed


def _is_litter(path: str) -> bool:
    posix = PurePosixPath(path)
    if matches_any(path, LITTER):
        return True
    if posix.suffix != ".py" or any(part in TEST_DIRS for part in posix.parts[:-1]):
        return False
    return (len(posix.parts) == 1 and posix.name not in ROOT_SCRIPTS) or matches_any(posix.name, SCRATCH)
