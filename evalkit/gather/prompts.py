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

from evalkit.gather.sentences import sentences, shorten
from evalkit.models.client import ChatClient, EndpointError

_TRAILER = re.compile(
    r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|"
    r"reviewed-on|change-id|cc|bug|fixes|closes|refs|see-also|pr-url|issue)\s*:\s*.*$",
    re.I,
)
_PREFIX = re.compile(r"^(feat|fix|refactor|perf|chore|build|ci|docs|style|test)(\([^)]*\))?!?:\s*", re.I)
_TAG = re.compile(r"^(\[[^\]]{1,20}\]\s*)+")  # "[svn] ", "[WIP] "
_ISSUE_REF = re.compile(
    r"\(?(?<!\w)(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see|part of)\s+)?(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\)?",
    re.I,
)
_URL = re.compile(r"https?://\S+")
_MERGE = re.compile(r"^Merge (pull request|branch) .*$", re.I)
_DANGLING = re.compile(r"[ ,]*\b(see|and|or|in|at|via|per|also)\s*([.;:!?]?)$", re.I)
_PLAIN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?(?=[\s,.;:!?]|$)")  # "don't", not "load_array" nor "foo()"
_BULLET = re.compile(r"^([-*•]|\d+[.)])\s")
_HOLLOW = re.compile(r"^(this|the)\s+(pr|pull request|commit|change|patch)[.!]?$", re.I)  # "This PR fixes #5."
_TEST_LINE = re.compile(r"\b(tests?|testing|pytest|unit ?tests?|coverage)\b", re.I)


def clean(line: str) -> str:
    line = _URL.sub("", _ISSUE_REF.sub("", line))
    line = re.sub(r"\s+", " ", line)
    line = re.sub(r"\s*\(\s*\)", "", line)  # what a removed reference leaves: "deprecated ()"
    line = re.sub(r"\s+([.,;:!?])", r"\1", line)  # and "amount ."
    line = re.sub(r"([.,;:!?])[.,;:]+", r"\1", line)
    line = line.strip(" -*•").lstrip(":;, ")  # "Fix #271: Improve..." leaves ": Improve..."
    while (trimmed := _DANGLING.sub(r"\2", line)) != line:  # "see https://x and gh-7" leaves "see and"
        line = trimmed
    return line


def _as_sentence(text: str) -> str:
    """A paragraph or a bullet as a sentence of its own: capitalised when it starts with a plain
    word (never a name such as `load_array` or `pyupgrade --py36-plus`), ended with a full stop."""
    if _PLAIN_WORD.match(text):
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", ":")) else text + "."


def _whole_subject(lines: list[str]) -> tuple[str, list[str]]:
    """(subject, body lines): a pull request title GitHub cut ("...for nicer IDE …") joined with
    the body line that goes on ("… support"), or left without its "…"."""
    subject, body = lines[0], lines[1:]
    if not subject.endswith("…"):
        return subject, body
    first = next((i for i, line in enumerate(body) if line.strip()), None)
    if first is not None and body[first].lstrip().startswith("…"):
        return subject[:-1].rstrip() + " " + body[first].lstrip()[1:].lstrip(), body[first + 1 :]
    return subject[:-1].rstrip(), body


def prompt_from_message(message: str, max_chars: int = 400, paragraphs: int = 1) -> str:
    """A short request from a commit message: the subject and the first `paragraphs` paragraphs of
    the body (pure); empty when nothing useful is left."""
    lines = [line.rstrip() for line in message.strip().splitlines()]
    lines = lines[: lines.index("--HG--")] if "--HG--" in lines else lines  # hg-convert's metadata
    lines = [line for line in lines if not _MERGE.match(line) and not _TRAILER.match(line.strip())]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    subject, lines = _whole_subject(lines)
    subject = clean(_PREFIX.sub("", _TAG.sub("", subject)))
    items: list[list[str]] = [[]]  # the body's paragraphs and bullets, each a list of lines
    left, fenced = paragraphs, False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or _TRAILER.match(stripped) or stripped.startswith(">") or line.startswith(("    ", "\t")):
            continue  # code and quotes: never the solution's code in a prompt
        if not stripped:
            if items[-1]:
                left -= 1
                if not left:
                    break  # the first paragraphs of the body are the useful ones
                items.append([])
            continue
        if _TEST_LINE.search(stripped):
            continue
        bullet = _BULLET.match(stripped)
        if bullet and items[-1]:
            items.append([])
        cleaned = clean(_PREFIX.sub("", stripped[bullet.end() :]) if bullet else stripped)
        if cleaned:
            items[-1].append(cleaned)
    said = [_as_sentence(subject.rstrip(".:"))] if subject else []
    for item in (" ".join(lines) for lines in items if lines):
        if item.rstrip(".").lower() != subject.rstrip(".").lower():  # a squash merge repeats its subject
            said.append(_as_sentence(item))
    return shorten(" ".join(s for s in sentences(" ".join(said)) if not _HOLLOW.match(s)), max_chars)


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
    return shorten(re.sub(r"\s+", " ", text), max_chars), None
