"""Walking a repository's history for task candidates: each first-parent commit (a squashed merge
counts as one change against its first parent) split into its test part and its source part,
and filtered by size, with the reason recorded for every commit left out."""

from __future__ import annotations

import fnmatch
import posixpath
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.diffs import changed_lines, changed_paths, diff_text, parsed_diff
from evalkit.errors import EvalkitError
from evalkit.gather.interface import Texts
from evalkit.gather.mechanical import mechanical_change

_BINARY = re.compile(r"^(GIT binary patch|Binary files .* differ)$", re.M)  # diff structure, not content


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    date: str  # author date, ISO 8601
    message: str


@dataclass(frozen=True)
class Candidate:
    commit: Commit
    patch: str  # the source part
    test_patch: str  # the test part
    source_lines: int
    files: int  # files changed, both parts


@dataclass(frozen=True)
class Rejection:
    sha: str
    subject: str
    stage: str  # "history" (size and shape) or "validation" (tests in the sandbox)
    reason: str
    environment: str = ""  # validation's evidence: "ran" or "failed" (validate.environment_evidence)
    loss: str = ""  # the class of an environment that never ran the tests (repair.LossClass)
    repairs: tuple[str, ...] = ()  # the repair rounds tried, one line each (repair_loop)


@dataclass(frozen=True)
class SizeLimits:
    min_lines: int = 40
    max_lines: int = 1000
    min_files: int = 2


def git_bytes(repo: Path, *args: str) -> bytes:
    """git's output as it wrote it (no newline translation, no decoding)."""
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True)
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()
        raise EvalkitError(f"{repo}: git {' '.join(args[:2])} failed: {stderr[:200]}")
    return result.stdout


def git(repo: Path, *args: str) -> str:
    """git's output as text for reading (messages, names): bytes that are not UTF-8 replaced."""
    return git_bytes(repo, *args).decode("utf-8", "replace")


def read_at(repo: Path, commit: str, path: str) -> str | None:
    """The text of `path` at `commit`, None when absent (or not text)."""
    result = subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True, errors="replace"
    )
    return result.stdout if result.returncode == 0 else None


def texts_at(repo: Path, parent: str, sha: str, paths: list[str]) -> Texts:
    """The Python files among `paths`, each at `parent` and at `sha`."""
    return {p: (read_at(repo, parent, p), read_at(repo, sha, p)) for p in paths if p.endswith(".py")}


def commits(repo: Path, since: str | None = None, until: str | None = None) -> list[Commit]:
    """First-parent commits that have a parent, newest first."""
    args = ["log", "--first-parent", "--format=%H%x00%P%x00%aI%x00%B%x1e"]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    found = []
    for record in git(repo, *args, "HEAD").split("\x1e"):
        fields = record.strip("\n").split("\x00")
        if len(fields) < 4 or not fields[1].strip():
            continue  # the root commit has nothing to diff against
        found.append(Commit(fields[0], fields[1].split()[0], fields[2], fields[3].strip()))
    return found


def _pathspecs(globs: tuple[str, ...], exclude: bool) -> list[str]:
    magic = "exclude,glob" if exclude else "glob"
    return [f":({magic}){g}" for g in globs]


def split_commit(repo: Path, commit: Commit, test_globs: tuple[str, ...]) -> tuple[str, str]:
    """(source part, test part) of a commit, as diffs against its first parent."""
    base = ["diff", "--no-color", "--no-renames", "--no-ext-diff", "--binary", commit.parent, commit.sha, "--"]
    test_patch = diff_text(git_bytes(repo, *base, *_pathspecs(test_globs, exclude=False)))
    patch = diff_text(git_bytes(repo, *base, ".", *_pathspecs(test_globs, exclude=True)))
    return patch, test_patch


DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default `python_files`
_DEFINES_TESTS = re.compile(r"\s*(?:async\s+)?(?:def\s+test|class\s+Test)")


def is_test_module(path: str, patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES) -> bool:
    """A Python file named as pytest collects test modules (`patterns`: its `python_files`)."""
    name = posixpath.basename(path)
    return name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns)


def test_modules(test_patch: str, patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES) -> list[str]:
    """The test modules the test part leaves in the tree: Python files named as pytest collects them
    (`patterns`), or whose added lines define tests; never conftest, nor data files that happen to be
    Python (a style checker's `testsuite/E10.py`), which pytest must not be pointed at, nor a package's
    `__init__.py` not so named (its test methods are a mixin the modules beside it run)."""
    found = []
    for patched in parsed_diff(test_patch):
        path, name = patched.path, posixpath.basename(patched.path)
        if patched.is_removed_file or not name.endswith(".py") or name == "conftest.py" or path in found:
            continue
        defines = any(line.is_added and _DEFINES_TESTS.match(line.value) for hunk in patched for line in hunk)
        if is_test_module(path, patterns) or (defines and name != "__init__.py"):
            found.append(path)
    return found


test_modules.__test__ = False  # not a pytest test


def screen(
    commit: Commit,
    patch: str,
    test_patch: str,
    limits: SizeLimits,
    patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES,
    read: Callable[[list[str]], Texts] | None = None,
) -> Candidate | str:
    """A candidate, or the reason this commit cannot be one: by size and shape, then, when `read`
    gives the source part's modules before and after, whether the change is mechanical (pure but
    for `read`, called only for a commit that passes the rest)."""
    if _BINARY.search(patch) or _BINARY.search(test_patch):
        return "changes binary files"
    if not test_patch.strip():
        return "no test change"
    if not test_modules(test_patch, patterns):
        return "the test part changes no test module"
    if not patch.strip():
        return "tests only: no source change"
    lines = changed_lines(patch)
    if lines < limits.min_lines:
        return f"too small: {lines} changed source lines < {limits.min_lines}"
    if lines > limits.max_lines:
        return f"too large: {lines} changed source lines > {limits.max_lines}"
    files = len(set(changed_paths(patch)) | set(changed_paths(test_patch)))
    if files < limits.min_files:
        return f"too few files: {files} < {limits.min_files}"
    if read is not None:
        paths = changed_paths(patch)
        modules = [p for p in paths if p.endswith(".py")]
        others = [p for p in paths if not p.endswith(".py")]
        if modules and (reason := mechanical_change(commit.message, read(modules), others)):
            return reason
    return Candidate(commit, patch, test_patch, lines, files)
