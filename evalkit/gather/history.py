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

from evalkit.diffs import changed_paths, diff_text, parsed_diff
from evalkit.errors import EvalkitError
from evalkit.gather.interface import Texts
from evalkit.gather.mechanical import mechanical_change
from evalkit.gather.not_tasks import (
    FIRST_COMMITS,
    ci_reason,
    counted_lines,
    mostly_ci_and_packaging,
    release_or_copy,
    writes_from_nothing,
)

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
    source_lines: int  # changed lines of code (CI, packaging and prose not counted: not_tasks.py)
    files: int  # files changed, both parts
    # the test modules to run: the test part's own, and those reading the data files it changes
    test_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class AtCommit:
    """What screening reads from the tree at the commit, asked only for a commit that needs it."""

    source_code_lines: Callable[[], int]  # code lines of the source modules (not_tasks.tree_code_lines)
    data_readers: Callable[[list[str]], list[str]]  # test modules reading these data files


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


def branch_messages(repo: Path, sha: str) -> list[str]:
    """The messages of the commits a merge `sha` brings in (reachable from its second parent, not
    from its first), oldest first, merges left out; [] for a commit that is not a merge."""
    parents = git(repo, "rev-list", "--parents", "-n1", sha).split()[1:]
    if len(parents) < 2:
        return []
    log = git(repo, "log", "--reverse", "--no-merges", "--format=%B%x1e", f"{parents[0]}..{parents[1]}")
    return [m.strip() for m in log.split("\x1e") if m.strip()]


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
NO_TEST_MODULE = "the test part changes no test module"
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


def data_files(test_patch: str, patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES) -> list[str]:
    """The files of the test part that are data for the tests: neither test modules, nor conftest,
    nor a package's `__init__.py` (fixtures, `testsuite/E26.py`, `*.txt`, `*.json`...)."""
    modules = set(test_modules(test_patch, patterns))
    found = []
    for patched in parsed_diff(test_patch):
        name = posixpath.basename(patched.path)
        if patched.path not in modules and name not in ("conftest.py", "__init__.py") and not patched.is_removed_file:
            found.append(patched.path)
    return found


def modules_to_run(test_patch: str, patterns: tuple[str, ...], at: AtCommit | None) -> list[str]:
    """The test part's modules, then the modules at the commit reading the data it changes."""
    modules = test_modules(test_patch, patterns)
    data = data_files(test_patch, patterns) if at is not None else []
    return modules + [m for m in (at.data_readers(data) if at and data else []) if m not in modules]


def screen(
    commit: Commit,
    patch: str,
    test_patch: str,
    limits: SizeLimits,
    patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES,
    read: Callable[[list[str]], Texts] | None = None,
    at: AtCommit | None = None,
) -> Candidate | str:
    """A candidate, or the reason this commit cannot be one: by size and shape, by what is no task
    (not_tasks.py), then, when `read` gives the source part's modules before and after, whether the
    change is mechanical. `at`: the tree at the commit, for the data the tests read and the first
    commits (pure but for `read` and `at`, asked only for a commit that passes the rest)."""
    if _BINARY.search(patch) or _BINARY.search(test_patch):
        return "changes binary files"
    if not test_patch.strip():
        return "no test change"
    if not test_modules(test_patch, patterns) and (at is None or not data_files(test_patch, patterns)):
        return NO_TEST_MODULE
    if not patch.strip():
        return "tests only: no source change"
    counted = counted_lines(patch)
    lines = counted.code
    if mostly_ci_and_packaging(counted, limits.min_lines):
        return ci_reason(counted)
    if lines < limits.min_lines:
        return f"too small: {lines} changed source lines < {limits.min_lines}"
    if lines > limits.max_lines:
        return f"too large: {lines} changed source lines > {limits.max_lines}"
    files = len(set(changed_paths(patch)) | set(changed_paths(test_patch)))
    if files < limits.min_files:
        return f"too few files: {files} < {limits.min_files}"
    if reason := release_or_copy(commit.message, patch):
        return reason
    to_run = modules_to_run(test_patch, patterns, at)
    if not to_run:
        return f"{NO_TEST_MODULE}, and no test module reads the data it changes"
    if at is not None and writes_from_nothing(patch, at.source_code_lines()):
        return FIRST_COMMITS
    if read is not None:
        paths = changed_paths(patch)
        modules = [p for p in paths if p.endswith(".py")]
        others = [p for p in paths if not p.endswith(".py")]
        if modules and (reason := mechanical_change(commit.message, read(modules), others)):
            return reason
    return Candidate(commit, patch, test_patch, lines, files, tuple(to_run))
