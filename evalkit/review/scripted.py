"""`scripted-reviewer`: a deterministic reviewer played by evalkit's built-in server, so that the
review path (endpoint, tools, verdict schema, transcript, calibration) runs end to end with no
model. It is a checklist reading the two diffs, not a judgement: it searches the candidate tree
for the leftovers it sees in the candidate's added lines (to blame them by line), then grades.

The checklist: leftovers in added lines (hack markers, debug output, breakpoints, suppressions,
commented-out code, placeholders; each kind once), files the reference does not touch, a change
much larger than the reference, over-long or `;`-joined lines, and docstrings the reference adds
that the candidate does not. Two points off per leftover kind and extra file, one per other fault."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalkit.diffs import is_test_path, parsed_diff
from evalkit.models.policies import AssistantTurn, ToolCall
from evalkit.review.rubric import VERDICT

_LEFTOVERS = {
    "hack marker": re.compile(r"#.*\b(TODO|FIXME|XXX|HACK)\b"),
    "debug output": re.compile(r"^\s*(print\(|sys\.(stdout|stderr)\.write\(|traceback\.print_)"),
    "breakpoint": re.compile(r"\b(breakpoint\(\)|pdb\.set_trace\(\))"),
    "suppressed warning": re.compile(r"#\s*(noqa|type:\s*ignore|pragma: no cover)"),
    "commented-out code": re.compile(
        r"^\s*#\s*(def |class |return\b|import |from \w+ import|if .*:$|for .*:$|\w+\s*=\s|\w+(\.\w+)*\()"
    ),
    "placeholder": re.compile(r"^\s*(pass\s*#|\.\.\.\s*#|raise NotImplementedError)"),
}
SEARCH_PATTERN = (  # grep -E: every line a leftover pattern could be on
    r"TODO|FIXME|XXX|HACK|print\(|write\(|breakpoint\(|pdb|noqa|type: ignore|NotImplemented|^\s*(#|pass|\.\.\.)"
)
LONG_LINE = 120
SEARCHED_FILES = 5  # the changed files searched for leftovers (one search each, in one turn)
_FENCE = re.compile(r"```diff\n(.*?)```", re.S)


def _diffs(messages: list[dict]) -> tuple[str, str]:
    """The candidate's and the reference's diffs, from the review's first user message."""
    text = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    found = _FENCE.findall(text if isinstance(text, str) else "")
    return (found[0], found[1]) if len(found) >= 2 else ("", "")


def _added(diff: str) -> list[tuple[str, str]]:
    """(path, line) of every line the diff adds to a file that is not a test."""
    try:
        patch = parsed_diff(diff)
    except Exception:  # a diff unidiff cannot read: nothing seen
        return []
    out = []
    for file in patch:
        path = file.path
        if is_test_path(path):
            continue
        out += [(path, line.value.rstrip("\n")) for hunk in file for line in hunk if line.is_added]
    return out


def _changed(diff: str) -> tuple[set[str], int]:
    try:
        patch = parsed_diff(diff)
    except Exception:
        return set(), 0
    files = [f for f in patch if not is_test_path(f.path)]
    return {f.path for f in files}, sum(f.added + f.removed for f in files)


def _blamed_lines(search_output: str, added: list[tuple[str, str]], kinds: dict[str, list[str]]) -> list[dict]:
    """The tree's lines (path:line:text, from the search) holding a blamed added line."""
    blamed_texts = {text.strip(): kind for kind, texts in kinds.items() for text in texts}
    out = []
    for row in search_output.splitlines():
        path, _, rest = row.partition(":")
        number, _, text = rest.partition(":")
        kind = blamed_texts.get(text.strip())
        if kind and number.isdigit():
            out.append({"path": path, "line": int(number), "why": kind})
    return out[:20]


def grade(candidate: str, reference: str, search_output: str = "") -> dict:
    """The checklist's verdict arguments for `candidate` against `reference`."""
    added, reference_added = _added(candidate), {text.strip() for _, text in _added(reference)}
    kinds: dict[str, list[str]] = {}
    for _, text in added:
        if text.strip() in reference_added:  # the reference does it too
            continue
        for kind, pattern in _LEFTOVERS.items():
            if pattern.search(text):
                kinds.setdefault(kind, []).append(text)
    files, size = _changed(candidate)
    reference_files, reference_size = _changed(reference)
    extra = sorted(files - reference_files)
    missed = sorted(reference_files - files)
    new_lines = [t for _, t in added if t.strip() not in reference_added]
    long_lines = [t for t in new_lines if len(t) > LONG_LINE or re.search(r"\w\)?;\s*\w+\W", t.split("#")[0])]
    docs_lost = sum('"""' in t for t in reference_added) > sum('"""' in t for _, t in added)
    ratio = size / reference_size if reference_size else 1.0
    in_scope = max(0, 10 - 3 * min(len(extra), 2) - (2 if ratio > 2.5 else 1 if ratio > 1.5 else 0))
    readable = max(0, 10 - 3 * bool(long_lines) - 2 * docs_lost - len(kinds))
    does = max(0, 10 - 4 * bool(missed) - 4 * (not files))
    faults_off = 2 * len(kinds) + 2 * min(len(extra), 2) + 2 * bool(missed)
    score = max(0, 10 - faults_off - (ratio > 1.5) - bool(long_lines) - docs_lost)
    faults = [*kinds, *(f"touches {p}, which the reference does not" for p in extra)]
    if ratio > 1.5:
        faults.append(f"{ratio:.1f} times the reference's size")
    if long_lines:
        faults.append("over-long or joined lines")
    if docs_lost:
        faults.append("drops the docstrings the reference adds")
    return {
        "does_what_asked": does,
        "in_scope": in_scope,
        "readable": readable,
        "leftovers": sorted(kinds),
        "would_merge": score >= 8,
        "score": score,
        "lines": _blamed_lines(search_output, added, kinds),
        "summary": "; ".join(faults) if faults else "matches the request without leftovers",
    }


class ScriptedReviewer:
    """The built-in policy: a `search` of each file the candidate changes when reading tools are offered, then
    `verdict` (at once in no-tools mode)."""

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        offered = {t.get("function", {}).get("name") for t in tools}
        candidate, reference = _diffs(messages)
        results = [m for m in messages if m.get("role") == "tool"]
        if "search" in offered and not results:
            files = sorted(_changed(candidate)[0])[:SEARCHED_FILES] or ["."]
            calls = [ToolCall("search", {"pattern": SEARCH_PATTERN, "tree": "candidate", "path": f}) for f in files]
            return AssistantTurn("Looking for leftovers in the candidate.", calls)
        found = "\n".join(str(m.get("content") or "") for m in results)
        return AssistantTurn(tool_calls=[ToolCall(VERDICT, grade(candidate, reference, found))])
