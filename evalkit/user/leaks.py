"""What a simulated user's answer must not reveal, and how an answer is cleaned of it.

The simulator is told the reference change in outline (files and new names), so that it can answer
as the developer who wrote it; but the agent is measured on writing that change, so an answer may
not hand it over. Two kinds of leak are taken out: whole added lines of the reference patch (code
quoted verbatim, whitespace aside) and identifiers the change introduces that neither the prompt
nor the interface already gives. Every answer passes through `redact`, whoever wrote it.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass

from evalkit.diffs import diff_line_starts
from evalkit.tasks.model import Task

REDACTED = "[redacted]"
MIN_LINE_CHARS = 12  # shorter added lines ("return x", "else:") are too common to be the change's own
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"""(?:[rbfuRBFU]{0,2})("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*')""")
# a plain word is the change's own name where code defines it: `def x`, `class X`, `self.x = `, or a
# field `x: T` that code reaches as `.x` (a local `x: T` is not; nor a library's `.append`)
_DEFINED = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)|\bself\.([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")
_ANNOTATED = re.compile(r"^\s*([A-Za-z_]\w*)\s*:(?!=)")
_ATTRIBUTE = re.compile(r"\.([A-Za-z_]\w*)")
_COMMON = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {"self", "cls"}


@dataclass(frozen=True)
class LeakSources:
    """Added lines (stripped) and new identifiers of the reference change that an answer must not carry."""

    lines: frozenset[str]
    identifiers: frozenset[str]


def _code_of(line: str) -> str:
    """A source line without its string literals and comment: the words left are names."""
    return _STRING.sub(" ", line).split("#", 1)[0]


def _looks_like_code(word: str) -> bool:
    """snake_case, digits or inner capitals: a name no plain English sentence would use."""
    return "_" in word.strip("_") or any(c.isdigit() for c in word) or bool(re.search(r"[a-z][A-Z]|[A-Z]{2}", word))


def _diff_sides(patch: str) -> tuple[list[str], list[str]]:
    """(added lines, removed and context lines) of a unified diff, markers dropped, headers skipped."""
    added, base = [], []
    for line in diff_line_starts(patch):
        if line.startswith(("+++", "---", "@@", "diff ", "index ")):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith((" ", "-")):
            base.append(line[1:])
    return added, base


def new_identifiers(patch: str, given: str) -> frozenset[str]:
    """Names the change's added code introduces: in its '+' lines, in no '-' or context line, not in
    `given` (what the agent is told), neither a keyword nor a builtin; code-shaped or defined there."""
    added, base = _diff_sides(patch)
    known = {w for line in base for w in _WORD.findall(line)} | set(_WORD.findall(given)) | _COMMON
    codes = [_code_of(line) for line in added]
    attributes = {name for code in codes for name in _ATTRIBUTE.findall(code)}
    defined = {name for code in codes for groups in _DEFINED.findall(code) for name in groups if name}
    defined |= {name for code in codes for name in _ANNOTATED.findall(code) if name in attributes}
    found = {w for code in codes for w in _WORD.findall(code) if _looks_like_code(w) or w in defined}
    found -= known
    return frozenset(found)


def leak_sources(task: Task) -> LeakSources:
    """The added lines (>= MIN_LINE_CHARS, not already in the base, prompt or interface) and new
    identifiers of `task.patch`; the intent may name them, an answer still must not."""
    given = f"{task.prompt}\n{task.metadata.get('interface', '')}"
    added, base = _diff_sides(task.patch)
    base_lines = {line.strip() for line in base}
    lines = {
        text
        for text in (line.strip() for line in added)
        if len(text) >= MIN_LINE_CHARS and text not in base_lines and text not in given
    }
    return LeakSources(frozenset(lines), new_identifiers(task.patch, given))


def redact(text: str, sources: LeakSources) -> tuple[str, int]:
    """`text` with each leaked line (however its whitespace was changed) and identifier replaced by
    "[redacted]", and how many were; lines first, longest first, so a line counts once."""
    count = 0
    for line in sorted(sources.lines, key=len, reverse=True):
        pattern = r"\s+".join(re.escape(part) for part in line.split())
        text, found = re.subn(pattern, REDACTED, text)
        count += found
    for name in sorted(sources.identifiers, key=len, reverse=True):
        text, found = re.subn(rf"(?<!\w){re.escape(name)}(?!\w)", REDACTED, text)
        count += found
    return text, count
