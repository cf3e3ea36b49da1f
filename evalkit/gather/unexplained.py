"""Hidden tests that check behaviour the prompt never asks for (pure).

A commit that says it only restructures ("Combine whitespace around operator checks", "Refactor
the lexer", "Move helpers into utils") promises the same behaviour. When its FAIL_TO_PASS tests
ran on the base and *failed* there (an assertion, not an import of a name the change adds), the
commit also changed behaviour, and its message does not say which: the agent asked to refactor is
graded on a fix it was never asked for (seen: a refactor kept with a test about unclosed brackets).
Such a task is underspecified. Tests that fail before only because they import or call what the
change adds are the interface's business (interface.py), not this rule's.
"""

from __future__ import annotations

import re

# a subject that promises unchanged behaviour: restructuring verbs, first word (a conventional
# `refactor:` prefix included)
_RESTRUCTURING = re.compile(
    r"^\W*(?:\w+(?:\([^)]*\))?:\s*)?"
    r"(refactor\w*|restructur\w*|reorganiz\w*|reorganis\w*|combin\w*|consolidat\w*|simplif\w*|clean\s*up\w*"
    r"|cleanup\w*|tidy\w*|mov(e|ed|es|ing)|renam\w*|extract\w*|split\w*|dedup\w*|unif(y|ied|ies))\b",
    re.I,
)
_BEHAVIOUR_WORDS = re.compile(r"\b(fix\w*|bug\w*|support\w*|add\w*|handl\w*|allow\w*|new|feature|correct\w*)\b", re.I)


def promises_same_behaviour(subject: str) -> bool:
    """Whether a commit subject says the change restructures code and says nothing of behaviour."""
    return bool(_RESTRUCTURING.match(subject)) and not _BEHAVIOUR_WORDS.search(subject)


def behaviour_unasked(subject: str, failed_before: list[str]) -> str | None:
    """Why the task is underspecified, or None: a restructuring commit whose FAIL_TO_PASS tests
    failed on the base by their own assertions (`failed_before`)."""
    if not failed_before or not promises_same_behaviour(subject):
        return None
    shown = ", ".join(failed_before[:3]) + (f" and {len(failed_before) - 3} more" if len(failed_before) > 3 else "")
    return f"a restructuring commit whose hidden tests check new behaviour its message does not ask for ({shown})"
