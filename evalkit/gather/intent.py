"""A deterministic intent for a gathered task: what to change and why, in a developer's words, from
the commit message (subject and body), the release notes the change adds (CHANGELOG, NEWS...) and
where the diff works (touched modules, and the definitions it edits or adds, most changed first).
No code: fenced or indented blocks, quotes and lines about tests are left out, names are named,
never shown."""

from __future__ import annotations

import re
from collections.abc import Collection

from evalkit.diffs import changed_paths, parsed_diff
from evalkit.gather.edited import edited_definitions
from evalkit.gather.interface import Texts
from evalkit.gather.prompts import clean, prompt_from_message
from evalkit.gather.prose import readable_prose
from evalkit.gather.sentences import sentences, shorten
from evalkit.gather.surface import definitions

_NOTES = re.compile(r"(^|/)(changes|changelog|news|history|release[-_ ]?notes|whatsnew)[^/]*$", re.I)
_REFERENCE_ROLE = re.compile(r"[:{](issue|pr|ghissue|user|bpo|gh|commit)[:}]`[^`]*`")  # numbers, not prose
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}([^*\s][^*]*)\*{1,2}(?![\w*])")  # *word* → word
_LINK = re.compile(r"(?<!`)`([^`]+)`__?")  # rst `text`_ → text
_BULLET = re.compile(r"^([-*+]|\d+[.)])\s")
_ROLE = re.compile(r":[\w:]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`")  # rst :func:`name` → name
_NOT_PROSE = re.compile(
    r"^([=\-~^*#+]{3,}|#+\s.*|v?\d+(\.\d+)+\S*(\s.*)?|unreleased.*|\d{4}-\d\d-\d\d.*"  # headings
    r"|\.\..*"  # rst comments, directives and link targets
    r"|[\w /-]{1,30}:"  # section labels: "Other changes:"
    r"|\([^()]*\))$",  # asides: "(codename to be selected, release date to be decided)"
    re.I,
)
_MAX_PLACES = 3


def _strip(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def release_notes(patch: str) -> str:
    """The prose the change adds to its release notes, markup removed ("" when it adds none). A
    bullet wrapped over lines is one item (its indented lines go on it); an indented block after a
    blank line is code, and headings, section labels ("Other changes:") and asides in parentheses
    are not prose."""
    items: list[list[str]] = []
    for patched in parsed_diff(patch):
        if not _NOTES.search(_strip(patched.target_file)):
            continue
        for hunk in patched:
            lines = list(hunk)
            going_on = False  # the previous line was an added line of an item
            for line, following in zip(lines, [*lines[1:], None], strict=True):
                text = line.value.strip()
                indented = line.value.startswith((" ", "\t"))
                underlined = following is not None and bool(re.fullmatch(r"[=\-~^*#+]{3,}", following.value.strip()))
                if not line.is_added or not text or _NOT_PROSE.match(text) or underlined or (indented and not going_on):
                    going_on = False
                    continue
                if indented and not _BULLET.match(text):
                    items[-1].append(text)
                else:
                    items.append([text])
                going_on = True
    found = [_note(" ".join(item)) for item in items]
    return " ".join(note for note in found if note)


def _note(text: str) -> str:
    text = _REFERENCE_ROLE.sub("", text)
    text = _EMPHASIS.sub(r"\1", _LINK.sub(r"\1", _ROLE.sub(r"\1", text))).replace("``", "`").lstrip("-*+ ")
    text = clean(re.sub(r"^\[?[\w .-]*\]?\s*[:-]\s+(?=[A-Z])", "", text) if ":" in text[:20] else text)
    return text.rstrip(".:") + "." if text else ""


def touched_modules(patch: str) -> list[str]:
    """The Python modules the diff touches, in diff order."""
    return [p for p in changed_paths(patch) if p.endswith(".py")]


def _where(files: list[str], names: list[str]) -> str:
    if not files:
        return ""
    shown = ", ".join(f"`{f}`" for f in files[:_MAX_PLACES]) + (" and others" if len(files) > _MAX_PLACES else "")
    around = ", ".join(f"`{n}`" for n in names[:_MAX_PLACES])
    return f"The work is in {shown}" + (f", around {around}" if around else "") + "."


def _what_it_adds(names: list[str], sources: Texts, described: Collection[str]) -> list[str]:
    """ "It adds `x`: what its docstring's first sentence says." for each named definition the
    change adds, in the hint's order; none for a name the interface section describes."""
    found: dict[str, str] = {}
    for path, (before, after) in sources.items():
        existing = {d.qualname for d in definitions(before or "", path)}
        for d in definitions(after or "", path):
            if d.qualname in names and d.qualname not in existing and d.summary and d.name not in described:
                summary = d.summary[0].lower() + d.summary[1:] if d.summary[1:2].islower() else d.summary
                found[d.qualname] = f"It adds `{d.qualname}`: {summary.rstrip('.')}."
    return [found[n] for n in names if n in found]


def intent_draft(
    message: str, patch: str, sources: Texts, max_chars: int = 400, described: Collection[str] = ()
) -> str:
    """What to change and why (pure): the commit message's subject and body, the release note
    when it says more, and where the change lives (`sources`: the touched modules before and
    after), then what the new definitions it names are for, room allowing (not those in
    `described`, which the interface section gives); within `max_chars`, "" when the message
    gives nothing."""
    said = readable_prose(prompt_from_message(message, max_chars=10_000, paragraphs=3)).replace("\n\n", " ")
    if not said:
        return ""
    files, names = touched_modules(patch), edited_definitions(patch, sources)[:_MAX_PLACES]
    notes = readable_prose(release_notes(patch)).replace("\n\n", " ")
    note = notes if notes.endswith((".", "!", "?")) else f"{notes}."
    # in its own words, with no label, and only whole: it says least, so it goes before the hint does
    fits = len(f"{said} {note} {_where(files, [])}") <= max_chars
    if notes and notes.lower().rstrip(".") not in said.lower() and fits:
        said += f" {note}"
    hints = (_where(files, names), _where(files, []), "")  # the richest first
    # the request comes before the hint: its first two sentences (one, when it has one), whole
    parts = sentences(said)
    drafts = [(shorten(said, max_chars - len(h) - 1), h) for h in hints if len(parts[0]) + len(h) < max_chars]
    wanted = min(2, len(parts))
    chosen = next((d for d in drafts if len(sentences(d[0])) >= wanted), drafts[0] if drafts else None)
    if chosen is None:
        return shorten(said, max_chars)
    draft, where = f"{chosen[0]} {chosen[1]}".strip(), chosen[1]
    if names and where == _where(files, names):  # what the hint names, room allowing: the message comes first
        for added in _what_it_adds(names, sources, described):
            draft += f" {added}" if len(draft) + 1 + len(added) <= max_chars else ""
    return draft
