"""Which paths of a repository are tests: one definition for gathering (splitting a commit into
its test and source parts) and for scoring (what the hidden tests own and an agent may not steer).

Globs follow git's `:(glob)` pathspec magic: `**/` matches any number of folders (none included),
`*` stays within one folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

DEFAULT_TEST_GLOBS = (
    "tests/**",
    "test/**",
    "testing/**",
    "**/tests/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
)


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches_glob(path: str, glob: str) -> bool:
    """`path` (relative, '/'-separated) matches a git `:(glob)` pattern."""
    return _glob_regex(glob).match(path) is not None


def is_test_path(path: str, globs: Sequence[str] = DEFAULT_TEST_GLOBS) -> bool:
    """The path is a test file or lies in a test folder."""
    return any(matches_glob(path, glob) for glob in globs)
