"""The interface section of a gathered prompt: the new names the changed tests use, with their
signatures as in the patched source, and the names no prompt gives (underspecified)."""

import difflib
import re
import textwrap

from evalkit.gather.interface import extract_interface, underspecified
from evalkit.gather.surface import definitions
from evalkit.gather.used_by_tests import used_by_tests


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def diff(path: str, before: str | None, after: str) -> str:
    old = (before or "").splitlines(keepends=True)
    lines = difflib.unified_diff(old, after.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(lines)


def searcher(*base_texts: str):
    """What `git grep` at the base answers, over these texts."""
    text = "\n".join(base_texts)

    def search(words: list[str], whole: bool) -> set[str]:
        return {w for w in words if (re.search(rf"\b{re.escape(w)}\b", text) if whole else w in text)}

    return search


RANGES = _d(
    """
    class VersionRange:
        def __init__(self, low, high):
            self.low, self.high = low, high

        def contains(self, version):
            return self.low <= version < self.high


    def parse(text):
        low, high = text.split(",")
        return VersionRange(low, high)


    class ParseError(ValueError):
        pass
    """
)
RANGES_AFTER = _d(
    '''
    import argparse


    class VersionRange:
        def __init__(self, low, high):
            self.low, self.high = low, high

        def contains(self, version):
            return self.low <= version < self.high

        def to_specifier_set(self) -> "SpecifierSet":
            """The range as a PEP 440 specifier set."""
            return SpecifierSet(f">={self.low},<{self.high}")


    def parse(text, *, strict: bool = False):
        if strict and "," not in text:
            raise ParseError(text, position=0)
        low, high = text.split(",")
        return VersionRange(low, high)


    class ParseError(ValueError):
        def __init__(self, text, position):
            super().__init__(f"cannot parse range {text!r}")
            self.position = position


    def bump(version: str, part: str = "minor") -> str:
        return version


    def main(argv=None):
        parser = argparse.ArgumentParser()
        parser.add_argument("--json", action="store_true", help="Print the range as JSON.")
        return parser.parse_args(argv)
    '''
)
TESTS_BEFORE = _d(
    """
    from ranges import parse


    def test_contains():
        assert parse("1,2").contains("1.5")
    """
)
TESTS_AFTER = TESTS_BEFORE + _d(
    """

    import pytest

    from ranges import ParseError, bump, main


    def test_specifier_set():
        assert str(parse("1,2").to_specifier_set()) == ">=1,<2"


    def test_strict():
        with pytest.raises(ParseError, match=r"cannot parse range '1\\.0'") as caught:
            parse("1.0", strict=True)
        assert caught.value.position == 0


    def test_bump_and_cli():
        assert bump("1.0") == "1.0"
        assert main(["--json"]).json
    """
)


def interface_of(source_after=RANGES_AFTER, tests_after=TESTS_AFTER):
    usage = used_by_tests({"tests/test_ranges.py": (TESTS_BEFORE, tests_after)})
    sources = {"ranges.py": (RANGES, source_after)}
    return extract_interface(sources, usage, diff("ranges.py", RANGES, source_after), searcher(RANGES, TESTS_BEFORE))


def test_every_kind_of_new_name_the_tests_use_is_listed_with_its_signature():
    lines = interface_of().render().splitlines()
    assert lines[:2] == ["Interface (new in this change):", "`ranges.py`:"]
    assert set(lines[2:]) == {
        "- `def VersionRange.to_specifier_set(self) -> 'SpecifierSet'`: The range as a PEP 440 specifier set.",
        "- `def parse(text, *, strict: bool = False)`: new parameter `strict`",
        "- `ParseError.position`",
        "- `def bump(version: str, part: str = 'minor') -> str`",
        "- `def main(argv=None)`",
        "- command-line option `--json`: Print the range as JSON.",
        '- message text "cannot parse range"',
    }


def test_the_interface_never_shows_a_body():
    rendered = interface_of().render()
    assert "return" not in rendered and "SpecifierSet(f" not in rendered and "split" not in rendered


def test_a_name_the_tests_need_that_no_definition_gives_is_underspecified():
    dynamic = RANGES_AFTER.replace("self.position = position", "setattr(self, 'offset', 0)")
    tests = TESTS_AFTER.replace("caught.value.position == 0", "caught.value.offset == 0")
    interface = interface_of(dynamic, tests)
    assert interface.missing == ["offset"] and "offset" in interface.needed
    assert underspecified(interface, "Add strict parsing. " + interface.render()) == ["offset"]
    assert underspecified(interface, "Add strict parsing; the error says where, as `offset`.") == []


def test_names_the_base_already_has_are_not_interface():
    interface = interface_of()
    assert "contains" not in interface.needed and "parse" not in interface.needed
    assert "VersionRange" not in interface.needed  # used only through parse(); defined at the base


def test_a_docstring_summary_is_its_first_sentence_even_across_lines():
    """A first line that breaks mid-sentence ("Return the range as a") had been the summary."""
    text = _d(
        '''
        def to_set(low, high):
            """Return the range as a
            specifier set. Ranges are half open.
            """
        '''
    )
    (function, *_) = definitions(text, "ranges.py")
    assert function.summary == "Return the range as a specifier set."
