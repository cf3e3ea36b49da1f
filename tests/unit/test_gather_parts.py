"""The pure parts of `evalkit gather`: prompts from commit messages, screening by size and
shape, environment detection, and the before/after verdict."""

import pytest

from evalkit.gather.environment import detect_environment
from evalkit.gather.history import Commit, SizeLimits, screen, test_modules
from evalkit.gather.prompts import prompt_from_message
from evalkit.gather.validate import classify_tests
from evalkit.verify.junit import TestStatus

P, F, E = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR


@pytest.mark.parametrize(
    ("message", "prompt"),
    [
        (
            "feat(ledger): add CSV import (#123)\n\nUsers can import transactions from a CSV file with columns date,\n"
            "account, amount. Fixes #45.\n\nAdds tests for the importer.\n\nSigned-off-by: A <a@b.c>\n",
            "Add CSV import. Users can import transactions from a CSV file with columns date, account, amount.",
        ),
        ("Fix crash in parser, see https://x.y/z and gh-77", "Fix crash in parser."),
        ("Merge pull request #5 from x/y\n\nAdd retry to the client", "Add retry to the client."),
        (
            "Support dates\n\nAdd unit tests for dates.\nAccept ISO strings too.",
            "Support dates. Accept ISO strings too.",
        ),
        ("Signed-off-by: A <a@b.c>", ""),
        ("Fix #271: Improve key functions.", "Improve key functions."),
        (  # GitHub cuts a long pull request title and goes on in the body
            "Curry objects in `toolz.curried` for nicer IDE …\n\n… support and static analysis (#520)",
            "Curry objects in `toolz.curried` for nicer IDE support and static analysis.",
        ),
        ("Curry objects in `toolz.curried` for nicer IDE …", "Curry objects in `toolz.curried` for nicer IDE."),
        ("Added optimizer.\n\n--HG--\nbranch : trunk\nrename : a.py => b.py\n", "Added optimizer."),
        ("[svn] added groupby filter and fixed some small bugs.", "Added groupby filter and fixed some small bugs."),
    ],
)
def test_prompt_from_message(message, prompt):
    assert prompt_from_message(message) == prompt


def test_prompt_is_shortened_by_whole_sentences():
    assert prompt_from_message("Add things\n\n" + "word " * 200, max_chars=60) == "Add things."


def test_a_sentence_left_empty_by_a_removed_reference_is_dropped():
    message = "Fix the parser\n\nIt stopped at commas. This PR fixes #574.\n\nThis commit closes gh-12."
    assert prompt_from_message(message, paragraphs=3) == "Fix the parser. It stopped at commas."


def test_squashed_pull_request_bullets_are_sentences_and_the_repeated_subject_is_dropped():
    """A squash merge lists its commits as bullets, the first often the subject again: they had run
    together as "...the type Annotated fix: don't return syntax error...Extract a context manager Detect..."."""
    message = (
        "fix: don't return syntax error for Annotated's metadata (#580)\n\n"
        "* fix: don't return syntax error for Annotated's metadata\n\n"
        "PEP 593 lets types carry metadata\n\n* detect quoted annotations in casts\n\n* Refactor the name check\n"
    )
    assert prompt_from_message(message, paragraphs=4) == (
        "Don't return syntax error for Annotated's metadata. PEP 593 lets types carry metadata. "
        "Detect quoted annotations in casts. Refactor the name check."
    )


def diff(path, added, removed=0):
    body = "".join(f"-old{i}\n" for i in range(removed)) + "".join(f"+new{i}\n" for i in range(added))
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{removed} +1,{added} @@\n{body}"


COMMIT = Commit("c" * 40, "p" * 40, "2024-01-01", "Do it")


@pytest.mark.parametrize(
    ("patch", "test_patch", "reason"),
    [
        (diff("a.py", 50), "", "no test change"),
        (diff("a.py", 50), diff("tests/conftest.py", 5), "the test part changes no test module"),
        ("", diff("tests/test_a.py", 5), "tests only: no source change"),
        (diff("a.py", 10), diff("tests/test_a.py", 5), "too small: 10 changed source lines < 40"),
        (
            diff("a.py", 900) + diff("b.py", 200),
            diff("tests/test_a.py", 5),
            "too large: 1100 changed source lines > 1000",
        ),
        (diff("a.py", 60), diff("a_test_data.bin", 1).replace("@@", "GIT binary patch\n@@"), "changes binary files"),
    ],
)
def test_screen_says_why(patch, test_patch, reason):
    assert screen(COMMIT, patch, test_patch, SizeLimits()) == reason


def test_screen_counts_files_across_both_parts():
    limits = SizeLimits(min_lines=10, min_files=3)
    assert screen(COMMIT, diff("a.py", 20), diff("tests/test_a.py", 5), limits) == "too few files: 2 < 3"
    candidate = screen(COMMIT, diff("a.py", 20) + diff("b.py", 1), diff("tests/test_a.py", 5), limits)
    assert candidate.source_lines == 21 and candidate.files == 3


def test_environment_reads_declared_dependencies_without_running_anything():
    files = {
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["attrs>=22"]\n'
        '[project.optional-dependencies]\ntest = ["pytest>=7", "hypothesis"]\ndocs = ["sphinx"]\n',
        "requirements-dev.txt": "# dev\n-r requirements.txt\nfreezegun==1.2  # time\n-e .\n",
        "setup.py": "raise SystemExit('never run')",
    }
    env = detect_environment(files.get, lambda path: path == "src")
    # setup.py makes the project installable: setuptools is needed to install it (offline, at test time)
    assert env.requirements == ["attrs>=22", "freezegun==1.2", "hypothesis", "setuptools>=61", "wheel"]
    assert env.sources == ["pyproject.toml", "requirements-dev.txt"] and env.src_layout and env.installable
    assert env.pythonpath == "/workspace/src:/workspace"
    assert env.test_command.startswith("python -m pip install --quiet --no-deps --no-build-isolation --no-index -e .")
    bare = detect_environment({"setup.py": "setup()"}.get, lambda path: False)
    assert bare.requirements == ["setuptools>=61", "wheel"] and "setup.py is not executed" in bare.notes[0]
    # Jinja 3.0 names MarkupSafe only in setup.py: literal lists are read (parsed, never run)
    jinja = 'from setuptools import setup\nsetup(name="Jinja2", install_requires=["MarkupSafe>=2.0"],\n'
    jinja += '      extras_require={"i18n": ["Babel>=2.7"], "testing": ["pytest"]}, version=VERSION)\n'
    found = detect_environment({"setup.py": jinja}.get, lambda path: False)
    assert found.requirements == ["MarkupSafe>=2.0", "setuptools>=61", "wheel"] and found.sources == ["setup.py"]
    assert found.runner_pin == "pytest"  # the testing extra's pytest is the runner's pin
    # marshmallow names its extras in a module-level dict
    marshmallow = 'EXTRAS = {"tests": ["pytest", "simplejson"], "lint": ["flake8"]}\nEXTRAS["dev"] = EXTRAS["tests"]\n'
    marshmallow += 'setup(name="marshmallow", install_requires=["packaging>=17.0"], extras_require=EXTRAS)\n'
    read = detect_environment({"setup.py": marshmallow}.get, lambda path: False)
    assert read.requirements == ["packaging>=17.0", "setuptools>=61", "simplejson", "wheel"]
    hatch = '[build-system]\nrequires = ["hatchling"]\n[project]\nname = "x"\n'
    assert detect_environment({"pyproject.toml": hatch}.get, lambda path: False).requirements == ["hatchling"]
    plain = detect_environment({"requirements.txt": "six\n"}.get, lambda path: False)
    assert not plain.installable and plain.test_command == "python -m pytest"


def test_verdict_lists_and_reasons():
    before = {"t::new": E, "t::old": P, "t::gone_flaky": P}
    after = {"t::new": P, "t::old": P, "t::broken": F}
    verdict = classify_tests(before, after, {"t::gone_flaky"}, cap=50, seed="x")
    assert verdict.fail_to_pass == ["t::new"] and verdict.pass_to_pass == ["t::old"]
    assert verdict.broken == ["t::broken"] and verdict.reason is None
    assert "already pass" in classify_tests({"t::a": P}, {"t::a": P}, set(), 50, "x").reason
    assert "did not run" in classify_tests({}, {}, set(), 50, "x").reason
    many = {f"t::p{i}": P for i in range(100)}
    capped = classify_tests(many, {**many, "t::new": P}, set(), cap=10, seed="abc")
    assert (
        len(capped.pass_to_pass) == 10
        and capped.pass_to_pass == classify_tests(many, {**many, "t::new": P}, set(), 10, "abc").pass_to_pass
    )


def test_only_test_modules_left_in_the_tree_are_run():
    patch = diff("tests/test_a.py", 3) + diff("tests/conftest.py", 2) + diff("tests/data.json", 1)
    assert test_modules(patch) == ["tests/test_a.py"]


def test_python_data_files_are_not_run_but_modules_that_define_tests_are():
    """A style checker's data (`testsuite/E10.py`, often not even valid Python) is read by its tests;
    pointing pytest at it would be a collection error."""
    data = diff("testsuite/E10.py", 2).replace("+new0", "+def broken(:")
    defines = diff("testsuite/checks.py", 2).replace("+new0", "+def test_checks():")
    assert test_modules(data + defines + diff("testsuite/test_api.py", 1)) == [
        "testsuite/checks.py",
        "testsuite/test_api.py",
    ]
    assert test_modules(diff("checks/check_api.py", 1), ("check_*.py",)) == ["checks/check_api.py"]
    assert isinstance(screen(COMMIT, diff("a.py", 50), data, SizeLimits()), str)  # data alone is no test change


def test_a_package_init_with_shared_test_methods_is_not_run_alone():
    """cachetools keeps a mixin of test methods in `tests/__init__.py`; run alone, every one of them
    fails (the mixin names no cache class), and 2 of its first 8 candidates were rejected for it."""
    mixin = diff("tests/__init__.py", 2).replace("+new0", "+    def test_defaults(self):")
    assert test_modules(mixin + diff("tests/test_lru.py", 1)) == ["tests/test_lru.py"]
    assert test_modules(mixin, ("*.py",)) == ["tests/__init__.py"]  # unless python_files names it


def test_component_prefixed_subjects_are_kept():
    assert prompt_from_message("Parser: accept trailing commas") == "Parser: accept trailing commas."


def test_code_that_mentions_binary_patches_is_not_a_binary_change():
    patch = diff("a.py", 45) + diff("b.py", 1).replace("+new0", '+MARK = "GIT binary patch"')
    assert not isinstance(screen(COMMIT, patch, diff("tests/test_a.py", 3), SizeLimits()), str)


def test_a_neighbour_modules_test_is_never_fail_to_pass():
    """A flaky test in a neighbour module (run for PASS_TO_PASS) that failed before and passed after
    on every run made a task of a refactor whose own tests already pass (seen in a fresh clone)."""
    before = {"tests/test_money.py::test_round": P, "tests/test_shipping.py::test_coin_flip": F}
    after = {"tests/test_money.py::test_round": P, "tests/test_shipping.py::test_coin_flip": P}
    verdict = classify_tests(before, after, set(), 50, "x", touched=frozenset({"tests/test_money.py"}))
    assert verdict.fail_to_pass == [] and "already pass" in verdict.reason
    own = classify_tests(before, after, set(), 50, "x", touched=frozenset({"tests/test_shipping.py"}))
    assert own.fail_to_pass == ["tests/test_shipping.py::test_coin_flip"]
