"""A merge whose subject says nothing ("Merge pull request #34 from bob/wrap", "Merge branch 'x'")
asks for what its branch did: 12 of 34 candidates of a table library had been dropped for want of
a prompt. The pull request title GitHub puts first in the body comes first, then the subjects of
the branch's own commits, oldest first, without the trivial ones ("fix typo", "wip"). Pure: the
branch's messages are read by `history.branch_messages`."""

from __future__ import annotations

import re

MERGE_SUBJECT = re.compile(
    r"^(?:merge\s+(?:pull\s+request|pr)\s+#?\d+(?:\s+from\s+\S+)?"
    r"|merge\s+(?:remote-tracking\s+)?branch(?:es)?\s+(?:'[^']*'|\"[^\"]*\"|\S+)(?:\s*,\s*'[^']*')*(?:\s+of\s+\S+)?(?:\s+into\s+\S+)?"
    r"|merge\s+(?:commit|tag)\s+'[^']*'(?:\s+of\s+\S+)?(?:\s+into\s+\S+)?"
    r"|merge\s+#\d+|merge\s+\S+/\S+(?:\s+into\s+\S+)?|merge\s+(?:master|main|develop|upstream)(?:\s+into\s+\S+)?"
    r"|merged\s+in\s+\S+(?:\s+\(pull\s+request\s+#\d+\))?)\s*\.?$",
    re.I,
)
_TRIVIAL = re.compile(
    r"^(?:(?:fix(?:ed|es)?\s+)?(?:(?:a|the|some|more|another)\s+)?"
    r"(?:typos?|wip|lint(?:ing)?|flake8|pep8|black|isort|mypy|formatting|format|style|whitespace|tests?|ci|build"
    r"|docs?|changelog|readme|imports?|review(?:\s+comments?|\s+feedback)?|comments?|cleanup|clean\s+up|oops|minor"
    r"|nits?|update|updates|wording|spelling|fixup|rebase)(?:\s+(?:errors?|issues?|fixes?|changes?|entry|again|typo))?"
    r"|(?:address(?:ed)?|apply|applied|respond\s+to)\s+(?:the\s+)?(?:review|comments?|feedback|suggestions?).*"
    r"|(?:add|update)\s+(?:a\s+)?(?:changelog|news|authors|readme)(?:\s+entry)?.*|(?:fixup|squash)!.*|merge\b.*|revert\b.*"
    r"|bump\b.*|more|again|\W*)[.!]*$",
    re.I,
)
_MAX_BRANCH_SUBJECTS = 6


def hollow_merge(message: str) -> bool:
    """Whether the message's subject is only git's or a forge's merge line."""
    subject = message.strip().split("\n", 1)[0].strip()
    return bool(MERGE_SUBJECT.match(subject))


def trivial(message: str) -> bool:
    """Whether a branch commit's subject says nothing a request would ("fix typo", "wip")."""
    subject = message.strip().split("\n", 1)[0].strip()
    return not subject or bool(_TRIVIAL.match(subject))


def merge_message(message: str, branch: list[str]) -> str:
    """The message to draft a prompt from: `message` itself unless its subject is a hollow merge
    line; then the body after it (GitHub's: the pull request title, then its description), a
    title alone followed by the subjects of the branch's non-trivial commits (`branch`, oldest
    first) as bullets; with no body, those subjects (one commit's whole message when it is the
    only one that says anything)."""
    if not hollow_merge(message):
        return message
    body = message.strip().split("\n", 1)[1].strip() if "\n" in message.strip() else ""
    useful = [m.strip() for m in branch if not trivial(m)]
    subjects = [m.split("\n", 1)[0].strip() for m in useful]
    if not body:
        if len(useful) == 1:
            return useful[0]
        if not useful:
            return ""
        body, subjects = subjects[0], subjects[1:]
    head, _, rest = body.partition("\n")
    extra = [s for s in dict.fromkeys(subjects) if s.rstrip(".").lower() != head.strip().rstrip(".").lower()]
    if rest.strip() or not extra:
        return body  # the pull request's own words say more than its commits' subjects
    return head + "\n\n" + "\n".join(f"* {s}" for s in extra[:_MAX_BRANCH_SUBJECTS])
