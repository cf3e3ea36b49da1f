"""Mechanical commits, screened out before validation: a reformat (black, isort, ruff format), a
version bump, a sweep of type annotations, a syntax upgrade (pyupgrade: f-strings, `super()`, no
`object` base, no `__future__`) or dropping old Pythons (`sys.version_info` branches, six, `_compat`
names). Such a commit passes the size screen and may even touch tests, but its task would be to
redo a tool's sweep, not a change a user asks for.

The evidence is the code: each touched module, before and after, is made canonical in stages
(`canonical.py`) and the statements that still differ are counted against the code lines the
change touches (comments, docstrings and blank lines aside). The change is mechanical when what is
left is at most 10 % of them (25 % when the message names such a sweep) and brings no new name: a
feature hidden in a reformat adds a parameter or a function. The reason names the stage that
explained most. Dropping old Pythons by hand (inlined and refactored as it went) has no canonical
form: it is told by what it removes (at least 40 % of the changed code lines served old Pythons)
together with a message that says so. A module that does not parse, or a changed file that is
neither Python nor prose or configuration, leaves the change to validation."""

from __future__ import annotations

import ast
import builtins
import difflib
import io
import posixpath
import re
import tokenize
import typing
from collections.abc import Iterable
from dataclasses import dataclass

from evalkit.gather.canonical import (
    ANNOTATIONS,
    COMPAT_MODULE,
    DOCS,
    FORMATTING,
    OLD_PYTHONS,
    UPGRADE,
    VERSION,
    canonical_pair,
    names_in,
    statements,
    tried_import,
    version_test,
)
from evalkit.gather.interface import Texts
from evalkit.pyparse import parse_python

REASONS = {
    FORMATTING: "mechanical: formatting only",
    DOCS: "mechanical: docstrings and comments only",
    VERSION: "mechanical: version bump",
    ANNOTATIONS: "mechanical: type annotations only",
    UPGRADE: "mechanical: syntax upgrade (pyupgrade)",
    OLD_PYTHONS: "mechanical: drops old Python versions",
}
TOLERANCE, TOLERANCE_SAID = 0.10, 0.25  # share of the changed code left unexplained
_SAYS = re.compile(
    r"pyupgrade|\bblack\b|isort|\bruff\b|re-?format|formatting|pep ?8|flake8|\blint|type (hints?|annotations?)|"
    r"typing|annotations?|mypy|python ?[23](\.\d+)?\+|py ?2\b|python ?2|py3|drop(s|ped|ping)? .*python|six\b|"
    r"bump|version|releas|moderni[sz]|upgrade|f-?strings?|super\(\)",
    re.I,
)
COMPAT_SHARE = 0.4  # of the changed code lines removed from version-compat constructs
_DROPS_OLD_PYTHONS = re.compile(
    r"python ?2(\.\d+|\.x)?\b|\bpy2\b|\bpy26\b|\bpy3(\.\d+)?\+|python ?3(\.\d+)?\+|\bpy(thon)?3.only|"
    r"\beol python|end.of.life python|drop(ping|s|ped)?[- ](support[- ]for[- ])?python|\bsix\b",
    re.I,
)
_COMPAT_WORD = re.compile(
    r"\b(PY2|PY3K?|PY\d+_PLUS|six|unicode|basestring|xrange|iteritems|itervalues|iterkeys|text_type|string_types|"
    r"integer_types|binary_type|version_info|__future__|unichr|raw_input|izip|imap|_compat)\b"
)
# files a mechanical commit may change beside its modules: prose, configuration, stubs
_PROSE = re.compile(r"(^|/)([^/.]+|[^/]*\.(rst|md|txt|cfg|toml|ini|ya?ml|in|pyi|typed)|\.[^/]+)$", re.I)

# names that are nobody's new definition: those the stages write, builtins, typing's (`t.Any`)
_PLACEHOLDERS = {"_", "FORMAT", *dir(builtins), *dir(typing)}


def _differing(old: list[str], new: list[str]) -> int:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


@dataclass(frozen=True)
class _Left:
    """What a stage leaves unexplained: the statements that still differ, and the names they bring."""

    lines: int
    names: frozenset[str]


def _left(sources: Texts, stage: int) -> _Left | None:
    """What still differs with the stages up to `stage` set aside; None if a module does not parse."""
    lines, names = 0, set()
    for path, (before, after) in sources.items():
        if stage >= OLD_PYTHONS and after is None and COMPAT_MODULE.match(posixpath.basename(path).removesuffix(".py")):
            continue  # a compatibility module removed whole
        try:
            pair = canonical_pair(before, after, stage)
            if pair is None:
                return None
            lines += _differing(*map(statements, pair))
        except (ValueError, RecursionError):
            return None
        names |= names_in(pair[1]) - names_in(pair[0])
    return _Left(lines, frozenset(names - _PLACEHOLDERS))


def _code(text: str | None) -> list[tuple[int, str]] | None:
    """The numbered lines of a module that are code: neither blank, nor comments, nor docstrings
    (nor strings documenting an attribute); None when it does not parse."""
    try:
        tree = parse_python(text or "")
    except (SyntaxError, ValueError):
        return None  # tokenize then parses what ast has parsed
    prose = {
        line
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    code = _token_rows(text or "") - prose
    return [(n, line) for n, line in enumerate((text or "").splitlines(), 1) if n in code]


def _token_rows(text: str) -> set[int]:
    """The lines holding a token that is not a comment (a line of a string that starts with "#",
    as in a shell script a module embeds, is code)."""
    rows: set[int] = set()
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in layout:
            rows.update(range(token.start[0], token.end[0] + 1))
    return rows


def _version_compat(text: str) -> set[int]:
    """The lines of a module that serve old Pythons: version tests and their branches, imports
    tried with a fallback, and lines naming compatibility helpers (PY2, six, text_type...)."""
    found = {n for n, line in enumerate(text.splitlines(), 1) if _COMPAT_WORD.search(line)}
    for node in ast.walk(parse_python(text)):
        if (
            isinstance(node, ast.If)
            and (version_test(node.test) is not None or _COMPAT_WORD.search(ast.unparse(node.test)))
            or isinstance(node, ast.Try)
            and tried_import(node)
        ):
            found.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return found


def _changed(sources: Texts) -> tuple[int, int, int] | None:
    """(code lines, all non-blank lines, code lines removed from constructs for old Pythons) the
    change adds or removes in its modules, as written; None when a module does not parse."""
    code = prose = compat = 0
    for before, after in sources.values():
        old, new = _code(before), _code(after)
        if old is None or new is None:
            return None
        serving = _version_compat(before) if before else set()
        matcher = difflib.SequenceMatcher(None, [line for _, line in old], [line for _, line in new], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                code += max(i2 - i1, j2 - j1)
                compat += sum(n in serving for n, _ in old[i1:i2])
        prose += _differing(*([line for line in (t or "").splitlines() if line.strip()] for t in (before, after)))
    return code, prose, compat


def mechanical_change(message: str, sources: Texts, other_paths: Iterable[str] = ()) -> str | None:
    """Why the change is mechanical (`sources`: its Python modules before and after; `other_paths`:
    the other files it changes), or None when it is not, or cannot be told."""
    changed = _changed(sources) if sources else None
    if changed is None or not changed[1] or any(not _PROSE.search(p) for p in other_paths):
        return None
    code, _, compat = changed
    tolerance = TOLERANCE_SAID if _SAYS.search(message) else TOLERANCE
    final = _left(sources, OLD_PYTHONS)  # every stage at once: most changes stop here
    if final is None:
        return None
    # what no stage explains must be little, and bring no new name (a feature hidden in a reformat
    # adds a parameter or a function: `require_tld`)
    if final.lines > tolerance * code or (final.lines and final.names):
        # dropping old Pythons by hand (inlined, refactored) leaves no canonical form: what it
        # removes is in version-compat constructs, and its message says so
        said = _DROPS_OLD_PYTHONS.search(message)
        return REASONS[OLD_PYTHONS] if said and compat >= COMPAT_SHARE * code > 0 else None
    if (_left(sources, FORMATTING) or final).lines == 0:
        return REASONS[FORMATTING]
    left = {stage: (_left(sources, stage) or final).lines for stage in range(DOCS, OLD_PYTHONS)}
    left[OLD_PYTHONS] = final.lines
    if not left[DOCS]:
        return REASONS[DOCS]
    # the sweep that explains most of the code that differs once laid out alike; none: a reformat
    # with a stray line or two (within the tolerance)
    explained = {stage: left[stage - 1] - left[stage] for stage in range(VERSION, OLD_PYTHONS + 1)}
    best = max(explained, key=lambda stage: (explained[stage], -stage))
    return REASONS[best] if explained[best] else REASONS[FORMATTING]
