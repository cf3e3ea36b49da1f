"""Commits that pass the size screen but are no task an agent could be asked for (pure).

- **What counts as changed code.** CI, coverage and packaging files (`.travis.yml`, `.github/**`,
  `tox.ini`, `setup.py`, `pyproject.toml`, `requirements*.txt`...) and prose (`docs/**`, `*.rst`,
  `*.md`, changelogs) stay in the reference change but never count toward `--min-lines`: a task of
  "40 changed source lines" means 40 lines of code (a CI merge of 43 lines of `.travis.yml` and 3
  of source had passed). A change that is mostly such files is "CI and packaging only".
- **Release and branch-copy commits.** "Release 1.2", "Prepare 2.0 release", "Copied 0.7-RELEASE
  code from 0.7 branch to trunk", "Merge branch 'release-1.x'", "svn merge -r ...": their diff is
  whatever a branch or a release gathered, not one change someone asked for. A subject that is only
  a release statement is enough; a copy is also told by its shape (most of its files rewritten whole).
- **The repository's first commits.** `commits()` skips the root, but the next few write the
  library: when the Python files the change adds hold at least half the source code the tree has
  after it, the agent would write the library from nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evalkit.diffs import is_test_path, matches_glob, parsed_diff

# CI, coverage and packaging: what builds, tests or ships the project, not what it does
CI_AND_PACKAGING = (
    ".travis.yml", ".github/**", ".gitlab-ci.yml", "appveyor.yml", ".appveyor.yml", "azure-pipelines.yml",
    ".circleci/**", ".ci/**", "ci/**", "tox.ini", "noxfile.py", ".coveragerc", "codecov.yml", ".codecov.yml",
    "setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in", "requirements*.txt", "requirements/**",
    "**/requirements*.txt", "Makefile", "*.mk", ".pre-commit-config.yaml", ".gitignore", ".gitattributes",
    ".hgignore", ".hgtags", ".readthedocs.y*ml", "readthedocs.y*ml", ".flake8", ".pylintrc", "mypy.ini",
    "pytest.ini", ".editorconfig", "Pipfile", "Pipfile.lock", "poetry.lock", "*.spec", "environment.y*ml",
    ".bumpversion.cfg", "Dockerfile", ".dockerignore", "scripts/release*", "release.sh",
)  # fmt: skip
# prose: what documents the project; a docs tree's conf.py and examples are prose too
PROSE = (
    "docs/**", "doc/**", "**/*.rst", "**/*.md", "**/*.txt", "CHANGES*", "CHANGELOG*", "HISTORY*", "NEWS*",
    "AUTHORS*", "CONTRIBUTORS*", "LICENSE*", "COPYING*", "README*", "THANKS*", "TODO*",
)  # fmt: skip
FIRST_COMMITS_SHARE = 0.5  # of the tree's source code after the change, added by it
FIRST_COMMITS_MIN = 40  # code lines grown (the default --min-lines): a young repository's small feature stays a task
FEW_CODE_LINES = 10  # beside CI and packaging files: "CI and packaging only"
WHOLE_FILE = 0.8  # share of a modified file's old lines a rewrite replaces
COPY_SHARE = 0.6  # of the modified files rewritten whole: a copy from elsewhere
FIRST_COMMITS = "the repository's first commits: the change writes most of the code from nothing"

_RELEASE_SUBJECT = re.compile(
    r"^\W*(?:(?:release[ds]?|releasing|bump(?:ed|s)?(?: the)?(?: version)?(?: number)?|version|"
    r"prepar(?:e|ed|ing)(?: for)?(?: the)?(?: release(?: of)?)?|tag(?:ged)?|cut)\s*(?:to\s+|of\s+|for\s+)?"
    r"v?\d+(?:[.\-]\w+)*(?:\s+(?:release|final|is out))?|v?\d+(?:\.\d+)+(?:\s+release[d]?)?|"
    r"(?:new|next) (?:release|version)|(?:release|version) bump|bump(?:ed)? version|"
    r"prepar(?:e|ed|ing) (?:for )?(?:the )?(?:next )?(?:release|v?\d+(?:\.\w+)*)(?: release)?)\W*$",
    re.I,
)
_BRANCH_COPY = re.compile(
    r"\bcop(?:y|ied|ying)\b.*\b(?:branch|trunk|tag)\b|"
    r"^merged?(?: remote-tracking)? branch '?(?:release|stable|maint|v?\d)[\w./-]*'?(?:\s+into\s+\S+)?\s*$|"
    # the branch named right after "from" (a pull request's `from user/drop-python-3.6` is no branch copy)
    r"\b(?:back-?port(?:ed|s)?|merged?|forward-?port(?:ed)?)\b.*\bfrom\s+(?:the\s+)?(?:stable|release|maint\w*|"
    r"v?\d+\.(?:\d+|x)|trunk)[\w.-]*(?:\s+branch)?\s*$|"
    r"\bsvn merge\b|^merged?\s+(?:r\d+|revisions?\s+\d+|-r\s*\d+)",
    re.I,
)


@dataclass(frozen=True)
class CountedLines:
    """A source part's changed lines: those that count toward the size limits, and the rest."""

    code: int  # every file but CI, packaging and prose
    ci_and_packaging: int
    prose: int


def _kind(path: str) -> str:
    if any(matches_glob(path, g) for g in CI_AND_PACKAGING):
        return "ci"
    if any(matches_glob(path, g) for g in PROSE):
        return "prose"
    return "code"


def counted_lines(patch: str) -> CountedLines:
    """The source part's changed lines by kind: only `code` counts toward `--min-lines`."""
    totals = {"code": 0, "ci": 0, "prose": 0}
    for patched in parsed_diff(patch):
        path = patched.path
        totals[_kind(path)] += patched.added + patched.removed
    return CountedLines(totals["code"], totals["ci"], totals["prose"])


def mostly_ci_and_packaging(lines: CountedLines, min_lines: int) -> bool:
    """A few lines of code (`FEW_CODE_LINES`) beside CI and packaging files that alone would have
    passed the minimum: a CI merge, not a task."""
    return lines.code <= FEW_CODE_LINES < min_lines <= lines.code + lines.ci_and_packaging


def _code_line(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def grown_code_lines(patch: str) -> int:
    """How many code lines (not blank, not comments) the change adds to the source modules, less
    those it removes: a module split into a package, or a rewrite, grows the code by little."""
    total = 0
    for patched in parsed_diff(patch):
        if patched.path.endswith(".py") and _kind(patched.path) == "code":
            for line in (line for hunk in patched for line in hunk if _code_line(line.value)):
                total += line.is_added - line.is_removed
    return total


def code_lines(text: str) -> int:
    """The code lines of a module's text (not blank, not comments)."""
    return sum(_code_line(line) for line in text.split("\n"))


def tree_code_lines(files: Iterable[str], read: Callable[[str], str | None], test_globs: tuple[str, ...]) -> int:
    """The code lines of a tree's source modules: its Python files outside the tests, CI and docs."""
    sources = (p for p in files if p.endswith(".py") and _kind(p) == "code" and not is_test_path(p, test_globs))
    return sum(code_lines(read(p) or "") for p in sources)


def writes_from_nothing(patch: str, tree_code_lines: int) -> bool:
    """The code the change adds (less what it removes) is at least `FIRST_COMMITS_MIN` lines and
    most of the source code the tree has after it (`tree_code_lines`: the code lines of its source
    modules at the commit): the base had next to nothing of the library yet."""
    grown = grown_code_lines(patch)
    return grown >= FIRST_COMMITS_MIN and grown >= FIRST_COMMITS_SHARE * max(tree_code_lines, grown)


def _rewritten_whole(patch: str) -> tuple[int, int]:
    """(modified files, those whose old lines the change mostly replaces)."""
    modified = whole = 0
    for patched in parsed_diff(patch):
        if patched.is_added_file or patched.is_removed_file:
            continue
        old = sum(hunk.source_length for hunk in patched)
        modified += 1
        whole += old > 0 and patched.removed >= WHOLE_FILE * old
    return modified, whole


def release_or_copy(message: str, patch: str) -> str | None:
    """Why the commit is a release, a version bump or a copy between branches, or None."""
    subject = message.strip().splitlines()[0] if message.strip() else ""
    if _RELEASE_SUBJECT.match(subject):
        return "a release or version bump: the change is what the release gathered, not one request"
    modified, whole = _rewritten_whole(patch)
    copied = modified >= 3 and whole >= COPY_SHARE * modified
    if _BRANCH_COPY.search(subject) or (copied and re.search(r"\b(branch|trunk|tag|cop(y|ied))\b", message, re.I)):
        return "a copy or merge between branches: the change is another branch's work, not one request"
    return None


def ci_reason(lines: CountedLines) -> str:
    return (
        f"CI and packaging only: {lines.ci_and_packaging} changed lines of CI, coverage and packaging files, "
        f"{lines.code} of code"
    )
