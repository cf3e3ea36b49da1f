"""What is wrong with a prompt's prose, named: what `prose.readable_prose` removes and what cutting
leaves (a merge fragment, a release-note label, a reference to what the agent cannot see, a literal
escape, a cut sentence, empty brackets, doubled punctuation, a dangling word). Pure; checks drafts
in tests and benchmarks, and a rewriter's output before it replaces the draft. Code in backticks and
the interface section are not prose and are not checked."""

from __future__ import annotations

import re

from evalkit.gather.merges import MERGE_SUBJECT
from evalkit.gather.prose import LABEL, TARGET

_INTERFACE = "Interface (new in this change):"
_CHECKS: list[tuple[str, re.Pattern[str]]] = [
    (
        "merge fragment",
        re.compile(
            r"(?:^|[.!?]\s+)merged?(?:[,;:.]|\s+(?:pull\s+request|branch|remote-tracking|commit\s+'|#\d|in\s+\S+\s+\(pull))",
            re.I,
        ),
    ),
    ("release-note label", re.compile(r"(?:^|[.!?]\s+)(?:" + LABEL.pattern.lstrip("^") + ")", re.I)),
    ("reference", re.compile(TARGET, re.I)),
    (
        "reference",
        re.compile(r"(?<![\w`])@[\w-]{2,}|\b(?:pull\s+request|PR|the\s+issue\s+tracker)\b|\bthanks?\b|\bthank\s+you\b"),
    ),
    (
        "orphaned reference word",
        re.compile(r"(?:[,;(]\s*|^)(?:issues?|prs?|pull\s+requests?|tickets?)\s*[.,;:)]|\(\s*issue\b", re.I),
    ),
    ("literal escape", re.compile(r"\\[ntr]")),
    ("empty brackets", re.compile(r"\(\s*[,;:.]?\s*\)|\[\s*\]")),
    ("doubled punctuation", re.compile(r"[,;:]\s*[,;:.!?]|(?<!\.)\.\s*[,;:]|(?<![.\w])\.\.(?!\.)|\s[,;:.](?:\s|$)")),
    (
        "dangling word",
        re.compile(r"\b(?:and|or|but|see|in|at|via|per|to|for|with|of|the|a|an|from)\s*[.;:!?](?:\s|$)", re.I),
    ),
    ("code block", re.compile(r"```")),
]


def _prose(prompt: str) -> str:
    """The intent of `prompt`: before its interface section, with code in backticks blanked."""
    intent = prompt.split(_INTERFACE, 1)[0]
    return re.sub(r"`[^`]*`", "`x`", intent).strip()


def prompt_faults(prompt: str) -> list[str]:
    """The faults of `prompt`'s prose, each named with the text that shows it ("reference: #12"),
    in the order checked; [] for a prompt a person would write."""
    text = _prose(prompt)
    if not text:
        return []
    found = []
    if MERGE_SUBJECT.match(text.split("\n", 1)[0]):
        found.append(f"merge fragment: {text.splitlines()[0][:40]}")
    for name, pattern in _CHECKS:
        if hit := pattern.search(text):
            found.append(f"{name}: {hit.group().strip()[:40]}")
    if not text.endswith((".", "!", "?", ".)", "`")) or text.endswith("…"):
        found.append(f"cut sentence: {text[-30:]}")
    if text.count("(") != text.count(")"):
        found.append("unbalanced brackets")
    return list(dict.fromkeys(found))
