"""Facts about unified diffs (files and lines changed, a file as a diff leaves it), read with
`unidiff`; how a diff is applied to a tree; and which paths of a repository are tests.

Applying is one list of methods, tried in order, for every place that applies a change the
harness did not write: the correctness check in the scoring sandbox, the quality axis on a
throw-away copy of the touched files, and the oracle policy's `git apply` fallback.

Diffs are read as git writes them: only `\n` ends a line, so a lone `\r`, a form feed, `\x1c`-`\x1e`,
`\u2028` or a byte that is not UTF-8 is content (Python's `splitlines` and text-mode pipes would
cut or rewrite such lines). Bytes become text with `diff_text` (surrogate escapes: the same bytes
come back from `diff_bytes`), never with a decoder that replaces or translates.

The test-path rule is one definition for gathering (splitting a commit into its test and source
parts), for scoring (what the hidden tests own and an agent may not steer) and for quality (test
files count in neither scope nor size). Globs follow git's `:(glob)` pathspec magic: `**/`
matches any number of folders (none included), `*` stays within one folder.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from evalkit.errors import EvalkitError


def diff_text(data: bytes) -> str:
    """A diff's bytes as text, losslessly: a byte that is not UTF-8 becomes a surrogate escape."""
    return data.decode("utf-8", "surrogateescape")


def diff_bytes(text: str) -> bytes:
    """The bytes `diff_text` read (and plain UTF-8 for any other text)."""
    return text.encode("utf-8", "surrogateescape")


def readable(text: str) -> str:
    """The text with each byte that is not UTF-8 shown as U+FFFD: for JSON, HTML and terminals."""
    return diff_bytes(text).decode("utf-8", "replace")


def has_raw_bytes(text: str) -> bool:
    """The text carries bytes that are not UTF-8 (surrogate escapes from `diff_text`)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def git_lines(text: str) -> list[str]:
    """The lines of a diff or a file as git counts them: split after each `\n` only, ends kept."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def diff_line_starts(text: str) -> list[str]:
    """The lines of a diff without their `\n` (for reading its headers and +/- prefixes)."""
    return [line.removesuffix("\n") for line in git_lines(text)]


@lru_cache(maxsize=128)  # more than a scoring batch (`run_scores.LINT_BATCH`) and its tasks
def parsed_diff(diff: str) -> PatchSet:
    """The parsed diff, remembered: scoring one attempt reads its change and the task's reference
    some ten times over. Callers only read what it returns."""
    try:
        return PatchSet(git_lines(diff))
    except UnidiffParseError as exc:
        raise EvalkitError(f"not a unified diff: {exc}") from None


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def changed_paths(diff: str) -> list[str]:
    """Every file a diff touches (the new path; the old one for deletions)."""
    paths = []
    for patched in parsed_diff(diff):
        path = patched.source_file if patched.is_removed_file else patched.target_file
        paths.append(_strip_prefix(path))
    return paths


def changed_lines(diff: str) -> int:
    """Added plus removed lines, headers excluded."""
    return sum(p.added + p.removed for p in parsed_diff(diff))


def patched_text(base: str | None, diff: str, path: str) -> str | None:
    """`path` as `diff` leaves it, from its base text (None: absent before, or deleted after). Exact
    application, as for a validated reference change; a path the diff does not touch is `base`."""
    for patched in parsed_diff(diff):
        if _strip_prefix(patched.target_file if not patched.is_removed_file else patched.source_file) != path:
            continue
        if patched.is_removed_file:
            return None
        source = [] if patched.is_added_file or base is None else git_lines(base)
        out, position = [], 0
        for hunk in patched:
            # a hunk that removes nothing names the line it follows, others their first line
            start = hunk.source_start if hunk.source_length == 0 else max(hunk.source_start - 1, 0)
            out.extend(source[position:start])
            previous = None
            for line in hunk:
                if line.line_type == "\\":  # "\ No newline at end of file" after the line before
                    if previous is not None and not previous.is_removed and out:
                        out[-1] = out[-1].rstrip("\n")
                    continue
                if not line.is_removed:
                    out.append(line.value)
                previous = line
            position = start + hunk.source_length
        out.extend(source[position:])
        return "".join(out)
    return base


def numstat(diff: str) -> dict[str, tuple[int, int] | None]:
    """Added and removed lines per file (None for a binary change), as `git apply --numstat` counts."""
    return {
        _strip_prefix(p.source_file if p.is_removed_file else p.target_file): (
            None if p.is_binary_file else (p.added, p.removed)
        )
        for p in parsed_diff(diff)
    }


def substantive_paths(diff: str) -> list[str]:
    """Files in which `diff` changes more than whitespace (binary changes count): what is left of
    a change once reformatting and blank lines are set aside. A diff that is not one has none."""
    try:
        files = parsed_diff(diff)
    except EvalkitError:
        return []
    paths = []
    for patched in files:
        for hunk in patched:
            added = "".join("".join(line.value.split()) for line in hunk if line.is_added)
            removed = "".join("".join(line.value.split()) for line in hunk if line.is_removed)
            if added != removed:
                break
        else:
            if not patched.is_binary_file:
                continue
        paths.append(_strip_prefix(patched.source_file if patched.is_removed_file else patched.target_file))
    return paths


@dataclass(frozen=True)
class ApplyMethod:
    """One way of applying a diff: `git apply` is exact and atomic; `patch --fuzz` takes a change
    written against slightly different context (never reversed: `--forward`; no `.orig` files)."""

    name: str
    argv: tuple[str, ...]  # the diff's path follows the last of them ("-": standard input)

    def command(self, path: str = "-", exclude: Sequence[str] = ()) -> list[str]:
        """The argv applying the diff at `path`; git leaves the paths of `exclude` alone."""
        skip = [f"--exclude={p}" for p in exclude] if self.argv[0] == "git" else []
        return [*self.argv, *skip, path]

    def shell(self, path: str) -> str:
        return shlex.join(self.command(path))


GIT_APPLY = ApplyMethod("git apply", ("git", "apply", "--verbose", "--whitespace=nowarn"))
GIT_APPLY_REJECT = ApplyMethod("git apply --reject", ("git", "apply", "--verbose", "--reject", "--whitespace=nowarn"))
PATCH_FUZZ = ApplyMethod(
    "patch --fuzz", ("patch", "--batch", "--forward", "--no-backup-if-mismatch", "--fuzz=5", "-p1", "-i")
)
APPLY_METHODS = (GIT_APPLY, GIT_APPLY_REJECT, PATCH_FUZZ)  # in the order they are tried


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
