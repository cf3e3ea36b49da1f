"""Task prompts from commit messages: short and user-style, as CursorBench's are.

`prompt_from_message` keeps the subject and the first useful body lines, and drops what a user
asking for the change would not say: trailers (Signed-off-by...), issue and PR references,
conventional-commit prefixes, URLs, and lines about the tests (the tests are hidden). An optional
rewriter model turns that into a terse request in a developer's voice without leaking the code
(`gather.intent` drafts the fuller intent; `gather.task_prompt` assembles the task's prompt).
"""

from __future__ import annotations

import re
import time

from evalkit.models.client import ChatClient, EndpointError

_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|"
    r"reviewed-on|change-id|cc|bug|fixes|closes|refs|see-also|pr-url|issue)\s*:\s*.*$",
    re.I,
)
_PREFIX = re.compile(r"^(feat|fix|refactor|perf|chore|build|ci|docs|style|test)(\([^)]*\))?!?:\s*", re.I)
_ISSUE_REF = re.compile(
    r"\(?(?<!\w)(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see|part of)\s+)?(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\)?",
    re.I,
)
_URL = re.compile(r"https?://\S+")
_MERGE = re.compile(r"^Merge (pull request|branch) .*$", re.I)
_DANGLING = re.compile(r"[ ,]*\b(see|and|or|in|at|via|per|also)\s*([.;:!?]?)$", re.I)
_TEST_LINE = re.compile(r"\b(tests?|testing|pytest|unit ?tests?|coverage)\b", re.I)


def clean(line: str) -> str:
    line = _URL.sub("", _ISSUE_REF.sub("", line))
    line = re.sub(r"\s+", " ", line)
    line = re.sub(r"\s+([.,;:!?])", r"\1", line)  # what a removed reference leaves: "amount ."
    line = re.sub(r"([.,;:!?])[.,;:]+", r"\1", line)
    line = line.strip(" -*•")
    while (trimmed := _DANGLING.sub(r"\2", line)) != line:  # "see https://x and gh-7" leaves "see and"
        line = trimmed
    return line


def cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:-")
    return cut + "…"


def prompt_from_message(message: str, max_chars: int = 400, paragraphs: int = 1) -> str:
    """A short request from a commit message: the subject and the first `paragraphs` paragraphs of
    the body (pure); empty when nothing useful is left."""
    lines = [line.rstrip() for line in message.strip().splitlines()]
    lines = [line for line in lines if not _MERGE.match(line) and not _TRAILER.match(line.strip())]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    subject = clean(_PREFIX.sub("", lines[0]))
    body: list[str] = []
    left, fenced = paragraphs, False
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or _TRAILER.match(stripped) or stripped.startswith(">") or line.startswith(("    ", "\t")):
            continue  # code and quotes: never the solution's code in a prompt
        if not stripped:
            if body and body[-1] != "":
                left -= 1
                if not left:
                    break  # the first paragraphs of the body are the useful ones
                body.append("")
            continue
        if _TEST_LINE.search(stripped):
            continue
        cleaned = clean(stripped)
        if cleaned:
            body.append(cleaned)
    parts = [subject.rstrip(".:") + "." if subject else "", " ".join(b for b in body if b)]
    text = " ".join(p for p in parts if p).strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return cap(text, max_chars)


REWRITE_SYSTEM = """\
You turn a commit (its message, where it changes the code, and the interface it adds) into the
request a developer would type to a coding agent working in the repository. Say what should change
and why, in two to four sentences (about 250 to 400 characters), like a busy colleague: never how,
no code, no tests, commit hashes or issue numbers. The interface is appended to your request as is:
do not repeat it. Answer with the request only."""


def rewrite_prompt(
    client: ChatClient, message: str, draft: str, max_chars: int, context: str = ""
) -> tuple[str, str | None]:
    """(prompt, error): the model's rewrite of the commit `message` (with `context`: the draft and
    the interface section), or the draft and why the rewrite was not used."""
    request = f"Commit message:\n{message}\n\n{context}\n\nAt most {max_chars} characters.".replace("\n\n\n\n", "\n\n")
    messages = [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": request}]
    try:
        reply = client.complete(messages, [], time.monotonic() + client.spec.request_timeout_s * 3)
    except EndpointError as exc:
        return draft, f"rewriter failed: {exc}"
    text = (reply.message.get("content") or "").strip().strip('"')
    if not text:
        return draft, "rewriter answered nothing"
    return cap(re.sub(r"\s+", " ", text), max_chars), None
