"""A restructuring commit whose hidden tests check new behaviour is underspecified."""

from evalkit.gather.unexplained import behaviour_unasked, promises_same_behaviour


def test_restructuring_subjects_promise_the_same_behaviour():
    for subject in (
        "Combine whitespace around operator checks",
        "Refactor the lexer into smaller functions",
        "refactor: split inline parser modules",
        "♻️ REFACTOR: Replace character codes with strings (#270)",
        "Move helpers into utils",
        "Simplify Python 3 except scope",
    ):
        assert promises_same_behaviour(subject), subject
    for subject in (
        "Add E265 for space before block comment",
        "Fix unclosed bracket detection",
        "Refactor parser and fix crash on empty input",  # says the behaviour it changes
        "Merge stable into main",
        "Merge AoT fragments when building an out-of-order table proxy",
        "Support wrapping in tables",
    ):
        assert not promises_same_behaviour(subject), subject


def test_a_refactor_whose_tests_failed_by_assertion_before_is_underspecified():
    failed = ["testsuite/test_api.py::test_unclosed_bracket"]
    why = behaviour_unasked("Combine whitespace around operator checks", failed)
    assert why is not None and "test_unclosed_bracket" in why
    assert behaviour_unasked("Combine whitespace around operator checks", []) is None  # only new names: interface
    assert behaviour_unasked("Fix unclosed brackets", failed) is None
