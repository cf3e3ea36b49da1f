"""Commit and release-note prose as a person would write a request: drafts from untuned repositories
had read "Merge, add E265 ...; issue. Release note: ..." and "as suggested in Issue 22". The agent
sees the repository only, so what refers elsewhere (issues, pull requests, mailing lists, people,
URLs, commits, branches) goes: a sentence that only refers is dropped, a clause that refers is cut,
and the words left behind (orphans, empty brackets, doubled punctuation, dangling conjunctions) are
tidied. Also gone: merge fragments, release-note labels and literal escapes (`\\n` as two
characters). Pure; code in backticks is left as it is. `gather.prompt_faults` checks the result."""

from __future__ import annotations

import re

# what a reference points at: an issue or PR number (however spelled), a URL, a commit hash, a list
_NUMBER = r"(?:[\w.-]+/[\w.-]+)?(?:#|gh-|GH-|bpo-)\d+"
_NAMED = (
    r"(?:the\s+)?(?:github\s+)?(?:issues?|pull\s+requests?|prs?|bugs?|tickets?|merge\s+requests?|mrs?)\s*[#:]?\s*\d+"
)
_HASH = r"(?:commit\s+)?\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
_LIST = r"(?:the\s+)?(?:[\w-]+\s+)?(?:mailing[\s-]list|issue\s+tracker|bug\s+tracker|discussion\s+board|forum)"
_URL = r"(?:https?://|www\.)\S+"
_ONE = rf"(?:{_URL}|{_NUMBER}|{_NAMED}|{_HASH})"
TARGET = rf"(?:{_ONE}(?:\s*(?:,|and|&|or)\s*{_ONE})*|{_LIST})"
_WHAT_FOR = (
    r"(?:\s+for\s+(?:more\s+|the\s+|further\s+)?"
    r"(?:details|information|info|context|background|discussion|rationale|more))?"
)
_PERSON = r"@[\w-]+|(?-i:[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)"
_VERB = (
    r"(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|references?|see|cf\.?|related\s+to|part\s+of"
    r"|addresse[sd]|address|follow[\s-]?up\s+(?:to|of|on))"
)
_SAID = (
    r"(?:suggested|discussed|reported|requested|proposed|described|mentioned|noted|raised|explained|seen"
    r"|tracked|agreed|outlined)"
)

_LITERAL_ESCAPE = re.compile(r"\\[ntr]")
_MERGE_FRAGMENT = re.compile(  # "Merge, add x", "Merge #12: add x", "Merge branch 'a' into b - add x"
    rf"^merged?(?:(?:\s+(?:pull\s+request|pr|branch|remote-tracking\s+branch|commit))?\s+(?:{_NUMBER}|{_NAMED}|'[^']*'|\S+/\S+)"
    r"(?:\s+(?:from|of|into)\s+\S+)*\s*[,:;.-]*|\s*[,:;.-]+)(?:\s+|$)",
    re.I,
)
LABEL = re.compile(
    r"^(?:\[\s*[\w -]{2,20}\]\s*:?\s*"  # "[feature] ", "[Bugfix]: "
    r"|(?:release\s+notes?|changelog|change\s+log|changes|news|bug\s*-?fix(?:es)?|fix(?:ed|es)?|features?|new"
    r"|enhancements?|improvements?|added|changed|removed|deprecated|security|breaking(?:\s+changes?)?"
    r"|internal|misc|other|api|docs?|documentation|minor|major|patch)\s*:\s+)",
    re.I,
)
_THANKS = re.compile(r"^(?:many\s+|big\s+|special\s+)?(?:thanks|thank\s+you|kudos|credit|props|hat\s+tip)\b", re.I)
# a parenthesis that only refers: "(#12)", "(fixes #12)", "(reported by Bob)", "(see the mailing list)"
_ASIDE = re.compile(
    rf"\s*\(\s*(?:(?:{_VERB}|{_SAID}\s+(?:in|on|at|by)|thanks(?:\s+to)?|by|via|from|per|in|on)\s+)?"
    rf"(?:{TARGET}|{_PERSON})\s*[.,;]?\s*\)",
    re.I,
)
_CLAUSES = [
    # "as suggested in issue 22", "as discussed on the mailing list", "reported by @bob"
    re.compile(rf",?\s*(?:\bas\s+)?\b{_SAID}\s+(?:in|on|at|by|via)\s+(?:{TARGET}|{_PERSON})", re.I),
    # "fixes GH-7", "see PR 45", "closes issue 3", "per the mailing list"
    re.compile(rf"[,;]?\s*\b(?:{_VERB}|per|via|from|in|on|for|with)\s*:?\s+{TARGET}{_WHAT_FOR}", re.I),
    re.compile(rf"[,;]?\s*\b(?:thanks|thank\s+you)(?:\s+(?:to|goes\s+to))?\s+(?:{_PERSON})(?:\s+for\s+[^.;,]*)?", re.I),
    re.compile(r"[,;]?\s*\bby\s+@[\w-]+", re.I),
    re.compile(TARGET, re.I),  # the bare reference: "#12", a URL
    re.compile(r"\s*@[\w-]+", re.I),  # a mention
]
_ORPHAN = re.compile(  # what a removed number leaves: "; issue." "(Issue." "in PR."
    r"(?:[,;(]\s*|\s)(?:(?:the|this|that|an?)\s+)?(?:github\s+)?(?:issues?|prs?|pull\s+requests?|tickets?|bugs?)(?=\s*(?:[.,;:)]|$))"
    r"|(?:^|(?<=\s))(?:issues?|prs?|pull\s+requests?|tickets?)\s*:?(?=\s*$)",
    re.I,
)
_ENDING = re.compile(
    r"[\s,;:(—–-]*\b(?:and|or|but|see|in|at|via|per|also|on|by|from|to|for|with|of|the|a|an|as|like|thanks)\s*$", re.I
)
_CODE = re.compile(r"`[^`]*`")
_PLAIN_START = re.compile(r"[a-z]+(?=[\s,.;:!?]|$)")  # a word, never a name such as `load_array`


def unescaped(text: str) -> str:
    """`text` with literal escapes (a backslash and n, t or r, outside backticks) made whitespace:
    `\\n\\n` a paragraph break, the rest a space or a line break."""

    def plain(part: str) -> str:
        part = part.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\r", "\n")
        return part.replace("\\t", " ")

    return _outside_code(text, plain)


def _outside_code(text: str, change) -> str:
    """`change` applied to the parts of `text` outside backticks (a backtick left open is prose)."""
    out, start = [], 0
    for code in _CODE.finditer(text):
        out.append(change(text[start : code.start()]))
        out.append(code.group())
        start = code.end()
    out.append(change(text[start:]))
    return "".join(out)


def _end_of(sentence: str) -> str:
    return sentence[-1] if sentence and sentence[-1] in ".!?" else ""


def _tidy(text: str) -> str:
    """What a removal leaves, tidied: spaces, empty brackets, doubled punctuation, a dangling word."""
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\(\s*[,;:.]?\s*\)|\[\s*\]", "", text)
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"\s+([.,;:!?)])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"[,;:]+\s*([.!?])", r"\1", text)
    text = re.sub(r"([.!?])(?:\s*[.,;:])+(?!\.)", r"\1", text) if "..." not in text else text
    text = text.strip().lstrip(",;:.-–— ").strip()
    end = _end_of(text)
    body = text[:-1] if end else text
    while (trimmed := _ENDING.sub("", body).rstrip(",;: ")) != body:
        body = trimmed
    if body.count("(") > body.count(")"):  # "(Issue" lost its number and its closing bracket
        body = body[: body.rfind("(")].rstrip(",;: ") if body.rfind("(") > body.rfind(")") else body
    return body + end if body else ""


def _without_references(sentence: str) -> str:
    """One sentence without what it refers to elsewhere ("" when it only referred)."""
    if _THANKS.match(sentence):
        return ""
    had = sentence
    sentence = _ASIDE.sub("", sentence)
    for clause in _CLAUSES:
        sentence = clause.sub("", sentence)
    sentence = _ORPHAN.sub("", sentence)
    if sentence != had and not re.search(r"[A-Za-z]{3,}|\x00", sentence):
        return ""
    return _tidy(sentence)


def _split_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[^\sa-z])", text) if s.strip()]


def readable_prose(text: str) -> str:
    """`text` (a subject, a paragraph, a release note, a docstring sentence) as a request would say
    it: literal escapes as whitespace, no merge fragment or release-note label at its start, no
    reference to what the agent cannot see; sentences that only referred are dropped (pure)."""
    text = unescaped(text)
    kept = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if re.match(r"merge", paragraph, re.I) and (merged := _MERGE_FRAGMENT.sub("", paragraph, count=1)) != paragraph:
            paragraph = merged[0].upper() + merged[1:] if _PLAIN_START.match(merged) else merged
        done = []
        for sentence in _split_sentences(paragraph):
            readable = _outside_code_sentence(LABEL.sub("", sentence.strip(), count=1))
            if readable and readable != sentence.strip() and _PLAIN_START.match(readable):
                readable = readable[0].upper() + readable[1:]  # "Fix #12: handle x" → "Handle x"
            if readable:
                done.append(readable)
        if done:
            kept.append(" ".join(done))
    return "\n\n".join(kept)


def _outside_code_sentence(sentence: str) -> str:
    """`_without_references` with the code in backticks held out of its reach."""
    codes: list[str] = []

    def hold(match: re.Match) -> str:
        codes.append(match.group())
        return f"\x00{len(codes) - 1}\x00"

    held = _without_references(_CODE.sub(hold, sentence))
    return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], held)
