"""The location hint's names: the definitions whose bodies a change edits or which it adds, read
with `ast` from the file before and after, most changed lines first; never the neighbours that
only the diff's context lines or hunk headers mention."""

import difflib
import textwrap

from evalkit.gather.edited import edited_definitions
from evalkit.gather.intent import intent_draft


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def git_diff(path: str, before: str | None, after: str | None, header: str = "") -> str:
    """A unified diff as git writes it, hunk headers naming `header` (git's nearest `def` above)."""
    old, new = (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}")
    text = "".join(f"{line.rstrip()} {header}\n" if line.startswith("@@") and header else line for line in lines)
    return f"diff --git a/{path} b/{path}\n{text}"


SPLIT = _d(
    """
    def split_iter(text):
        return iter(text.split())


    def rstrip(text):
        return text.rstrip()


    def research(pattern, text):
        found = pattern.search(text)
        return found
    """
)
SPLIT_AFTER = SPLIT.replace("search(text)\n", "search(text, 0)\n    found = found or None\n")


def test_the_hint_names_the_definition_edited_not_the_diffs_neighbours():
    """Seen on a real repository: "around `split_iter`, `rstrip`" for a change to `research`."""
    patch = git_diff("text.py", SPLIT, SPLIT_AFTER, header="def split_iter(text):")
    assert edited_definitions(patch, {"text.py": (SPLIT, SPLIT_AFTER)}) == ["research"]
    draft = intent_draft("Search from the start", patch, {"text.py": (SPLIT, SPLIT_AFTER)})
    assert draft == "Search from the start. The work is in `text.py`, around `research`."


LEXER = _d(
    """
    LIMIT = 1


    class Lexer:
        mode = "plain"

        def tokenize(self, text):
            return text.split()


    def parse(text):
        tokens = Lexer().tokenize(text)
        return tokens


    def unused():
        return None
    """
)
LEXER_AFTER = _d(
    """
    LIMIT = 2


    class Lexer:
        mode = "plain"

        def tokenize(self, text):
            return self._scan(text)

        def feed(self, chunk):
            self.buffer = getattr(self, "buffer", "")
            self.buffer += chunk
            return self.tokenize(self.buffer)

        def _scan(self, text):
            parts = []
            for part in text.split():
                parts.append(part)
            return parts


    def parse(text, strict=False):
        tokens = Lexer().tokenize(text)
        if strict and not tokens:
            raise ValueError(text)
        return tokens
    """
)


def test_most_changed_first_methods_qualified_new_private_helpers_and_removed_ones_left_out():
    names = edited_definitions(git_diff("lex.py", LEXER, LEXER_AFTER), {"lex.py": (LEXER, LEXER_AFTER)})
    # feed: 4 lines, parse: 4 (1 removed, 3 added; feed comes first in the file), tokenize: 2 (blank
    # lines between methods count for nobody); unused (removed) and _scan (new and private: the
    # solution's own structure) are no places to look; LIMIT is no definition
    assert names == ["Lexer.feed", "parse", "Lexer.tokenize"]


def test_a_new_module_names_its_definitions_and_an_unparsable_file_none():
    new_module = edited_definitions(git_diff("new.py", None, LEXER), {"new.py": (None, LEXER)})
    assert new_module == ["parse", "Lexer.tokenize", "unused"]
    broken = "def broken(:\n"
    assert edited_definitions(git_diff("b.py", None, broken), {"b.py": (None, broken)}) == []


def test_a_class_is_not_named_after_one_of_its_members():
    after = LEXER.replace('mode = "plain"', 'mode = "strict"').replace("text.split()", "text.split(None)")
    patch = git_diff("lex.py", LEXER, after)
    assert edited_definitions(patch, {"lex.py": (LEXER, after)}) == ["Lexer.tokenize"]


def test_a_new_definition_the_hint_names_is_described_by_its_docstring_when_there_is_room():
    """Terse messages ("Added attr filter.") say little; the new function's docstring says what it
    is for, in prose. Not for names the interface section already describes."""
    added = 'def research_all(pattern, text):\n    """Every match of the\n    pattern, in order. More."""\n    return\n'
    after = SPLIT + "\n\n" + added
    patch, sources = git_diff("text.py", SPLIT, after), {"text.py": (SPLIT, after)}
    assert intent_draft("Find all matches", patch, sources) == (
        "Find all matches. The work is in `text.py`, around `research_all`. "
        "It adds `research_all`: every match of the pattern, in order."
    )
    plain = "Find all matches. The work is in `text.py`, around `research_all`."
    assert intent_draft("Find all matches", patch, sources, described={"research_all"}) == plain
    assert intent_draft("Find all matches", patch, sources, max_chars=len(plain) + 10) == plain
