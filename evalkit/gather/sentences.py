"""Prose shortened to a character budget without cutting a sentence: drafts cut at a word had ended
"rename 'fill' to…", a request no user writes. Trailing sentences are dropped whole; a first
sentence that is itself too long first loses its parentheses (asides, rarely the request), then ends
at its last clause that fits (a comma, semicolon, colon or dash) with a full stop; only a sentence
with no such clause is cut at a word, still ending with a full stop, never "…"."""

from __future__ import annotations

import re

# a sentence ends at . ! or ? (closing quotes and brackets kept) before a space and a word that is
# not lower case: "e.g. the", "3.8 is" and "`v1.2`" go on
_END = re.compile(r"[.!?]+[\"'`)\]]*(?=\s+[^\sa-z])")
_ASIDE = re.compile(r"\s*\([^()]*\)")
_CLAUSE = re.compile(r"[,;:](?=\s)|\s[—–-](?=\s)")
_FUNCTION_WORD = r"(?:a|an|the|to|of|and|or|in|on|for|with|by|from|as|at|that|which|is)\b"
_DANGLING = re.compile(rf"[\s,;:—–(-]+(?:{_FUNCTION_WORD}[\s,]*)*$")  # "rename 'fill' to" ends at "'fill'"
_TERMINAL = ".!?"


def sentences(text: str) -> list[str]:
    """The sentences of `text`, in order (a last one without its full stop included)."""
    found, start = [], 0
    for end in _END.finditer(text):
        found.append(text[start : end.end()].strip())
        start = end.end()
    rest = text[start:].strip()
    return [s for s in [*found, rest] if s]


def _closed(text: str) -> str:
    """`text` ending a sentence: no dangling words or punctuation, a full stop, backticks paired."""
    if text.count("`") % 2:
        text = text[: text.rfind("`")]
    while (trimmed := _DANGLING.sub("", text)) != text:
        text = trimmed
    return text if text.endswith(tuple(_TERMINAL)) else text + "."


def _clause(sentence: str, limit: int) -> str:
    """The start of one sentence that fits in `limit`, as a sentence of its own."""
    plain = _ASIDE.sub("", sentence)
    if len(plain) <= limit:
        return plain
    cuts = [m.start() for m in _CLAUSE.finditer(plain) if plain[: m.start()].count("`") % 2 == 0]
    fitting = [_closed(plain[:i]) for i in cuts if len(_closed(plain[:i])) <= limit]
    if fitting and len(fitting[-1]) >= limit // 3:  # "Parser." is no request: cut at a word instead
        return fitting[-1]
    words = plain[: limit - 1].rsplit(" ", 1)[0]
    return _closed(words)[:limit]


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, by whole sentences (see the module's docstring)."""
    if len(text) <= limit:
        return text
    parts = sentences(text)
    kept = ""
    for sentence in parts:
        joined = f"{kept} {sentence}" if kept else sentence
        if len(joined) > limit:
            break
        kept = joined
    return kept or _clause(parts[0], limit)
