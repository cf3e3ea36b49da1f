"""Commits that pass the size screen but are no task (not_tasks.py), and test ids that name source
positions (stable_ids.py): rejected or dropped with a named reason."""

import pytest

from evalkit.gather.data_readers import data_readers
from evalkit.gather.history import Commit, SizeLimits, screen
from evalkit.gather.not_tasks import counted_lines, release_or_copy, writes_from_nothing
from evalkit.gather.stable_ids import position_dependent
from evalkit.gather.validate import classify_tests
from evalkit.verify.junit import TestStatus


def diff(path, added, removed=0, new_file=False):
    body = "".join(f"-old{i}\n" for i in range(removed)) + "".join(f"+new{i}\n" for i in range(added))
    if new_file:
        header = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        return f"{header}@@ -0,0 +1,{added} @@\n{body}"
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{removed} +1,{added} @@\n{body}"


TESTS = diff("tests/test_a.py", 5)


def commit(message):
    return Commit("c" * 40, "p" * 40, "2024-01-01", message)


def test_ci_packaging_and_prose_do_not_count_toward_the_minimum():
    """Seen: "Test on Travis CI and fix tests", 43 lines of .travis.yml and .coveragerc, 3 of source."""
    ci = diff(".travis.yml", 30) + diff(".coveragerc", 13) + diff("pkg/core.py", 3)
    assert screen(commit("Test on Travis CI and fix tests"), ci, TESTS, SizeLimits()) == (
        "CI and packaging only: 43 changed lines of CI, coverage and packaging files, 3 of code"
    )
    docs = diff("docs/usage.rst", 30) + diff("CHANGES.rst", 5) + diff("README.md", 5) + diff("pkg/core.py", 20)
    assert screen(commit("Add a flag"), docs, TESTS, SizeLimits()) == "too small: 20 changed source lines < 40"
    lines = counted_lines(docs + diff(".github/workflows/ci.yml", 4) + diff("requirements-dev.txt", 2))
    assert (lines.code, lines.prose, lines.ci_and_packaging) == (20, 40, 6)
    kept = screen(commit("Add a flag"), docs + diff("pkg/cli.py", 25), TESTS, SizeLimits())
    assert kept.source_lines == 45 and "docs/usage.rst" in kept.patch  # the reference change keeps its docs


@pytest.mark.parametrize(
    "message",
    [
        "Release 1.2",
        "Released 0.7.1.",
        "Bump version to 0.7",
        "Prepare 2.0 release",
        "Prepare v0.4.0",
        "Version 3.1.0",
        "v2.0.1",
        "1.4.2 release",
        "Copied 0.7-RELEASE code from 0.7 branch to trunk",
        "Merge branch 'release-1.x'",
        "Merge branch '8.1.x'",
        "Back-port the parser fixes from stable branch",
        "Merged from the 2.x branch",
        "svn merge -r 120:130 from trunk",
    ],
)
def test_releases_and_branch_copies_are_no_task(message):
    assert release_or_copy(message, diff("pkg/core.py", 60)) is not None


@pytest.mark.parametrize(
    "message",
    [
        "Release the GIL while parsing",
        "Add a version option to the CLI",
        "Fix the release date parser for 2019-01-01",
        "Merge pull request #12 from dev/feature-retry",
        "Merge branch 'master' into feature",
        "Support Python 3.12",
        "Copy attributes in the clone helper",
    ],
)
def test_features_that_mention_releases_or_branches_are_kept(message):
    assert release_or_copy(message, diff("pkg/core.py", 60) + diff("pkg/cli.py", 3, 1)) is None


def test_a_copy_is_told_by_its_shape_when_the_message_names_a_branch():
    rewritten = "".join(diff(f"pkg/m{i}.py", 20, 20) for i in range(4))
    assert release_or_copy("Sync with the maintenance branch", rewritten) is not None
    assert release_or_copy("Rewrite the parsers", rewritten) is None


def test_the_first_commits_write_most_of_the_code_from_nothing():
    library = diff("pkg/core.py", 300, new_file=True) + diff("pkg/util.py", 100, new_file=True)
    assert writes_from_nothing(library, tree_code_lines=420)
    assert not writes_from_nothing(library, tree_code_lines=2000)  # a big new module in a grown library
    assert not writes_from_nothing(diff("pkg/core.py", 30, 10), tree_code_lines=45)  # a young repository's feature
    split = diff("pkg/__init__.py", 400, new_file=True) + diff("pkg.py", 0, 390)  # a module made a package
    assert not writes_from_nothing(split, tree_code_lines=410)


@pytest.mark.parametrize(
    "test_id",
    [
        "testsuite/test_self_doctests.py::test[pycodestyle.py:1182:whitespace_around_operator@0]",
        "tests/test_lint.py::test_report[src/app.py:45]",
        "tests/test_data.py::test_case[E26.txt:12]",
        "tests/test_errors.py::test_message[line 45]",
        "tests/test_errors.py::test_message[lineno=3]",
        "tests/test_tokens.py::test_token[offset_120]",
        "tests/test_links.py::test_anchor[core.py#L45]",
        "tests/test_doc.py::test[:12:parse@1]",
    ],
)
def test_ids_naming_source_positions(test_id):
    assert position_dependent(test_id)


@pytest.mark.parametrize(
    "test_id",
    [
        "tests/test_a.py::test_x[1-2]",
        "tests/test_dates.py::test_parse[2019-01-01]",
        "tests/test_a.py::test_y[case3]",
        "tests/test_time.py::test_clock[12:30:00]",
        "tests/test_urls.py::test_host[localhost:8080]",
        "tests/test_urls.py::test_url[http://example.com:8080/x]",
        "src/pkg/core.py::pkg.core.parse",
        "tests/test_lines.py::test_split[multiline1]",
        "tests/test_tz.py::test_offsets[offset_aware]",
        "tests/test_versions.py::test_python[3.11]",
        "tests/test_e501.py::test_code[E501]",
    ],
)
def test_stable_ids_with_numbers(test_id):
    assert not position_dependent(test_id)


def test_position_dependent_ids_are_in_neither_list_and_a_task_of_only_them_is_rejected():
    P, E = TestStatus.PASSED, TestStatus.ERROR
    doctest = "testsuite/test_self_doctests.py::test[pycodestyle.py:1182:whitespace_around_operator@0]"
    before = {doctest: E, "testsuite/test_self_doctests.py::test[pycodestyle.py:90:tabs@0]": P}
    after = {**before, doctest: P, "testsuite/test_api.py::test_new[1-2]": P}
    lists = classify_tests(before, after, set(), cap=50, seed="x")
    assert lists.fail_to_pass == ["testsuite/test_api.py::test_new[1-2]"] and lists.pass_to_pass == []
    assert len(lists.position_dependent) == 2 and lists.positions_said().startswith("2: testsuite/")
    only = classify_tests(before, {**before, doctest: P}, set(), cap=50, seed="x")
    assert only.reason == f"FAIL_TO_PASS tests name source positions (line numbers): {doctest}"


PLUGIN_TEST = 'from pathlib import Path\nFIXTURES = Path(__file__).parent / "fixtures"\n'
PLUGIN_TEST += 'CASES = FIXTURES / "{name}.md"\n'


def test_the_data_readers_are_the_modules_naming_the_file_else_those_reaching_its_folder():
    files = {
        "tests/test_plugins/test_anchors.py": PLUGIN_TEST.format(name="anchors"),
        "tests/test_plugins/test_colon_fence.py": PLUGIN_TEST.format(name="colon_fence"),
        "tests/test_plugins/test_all.py": 'import glob\nCASES = glob.glob("fixtures/*.md")\n',
        # mistune: `load_plugin("abbr")` reads `fixtures/abbr.txt` through a helper
        "tests/test_plugins.py": 'def load_plugin(name):\n    return load(name + ".txt")\n\nload_plugin("abbr")\n',
        "testsuite/test_all.py": "import os\nCASES = os.listdir(os.path.dirname(__file__))\n",
        "tests/test_api.py": 'DATA = {"fixtures": 1}\n',  # a word, not a path: the module builds none
        # jmespath: a query's wildcard is no glob, and every module under tests/ names its own folder
        "tests/test_lexer.py": 'import os\nQUERIES = ["*", "foo[*].bar", "tests"]\n',
        "tests/test_compliance.py": 'import os\nDIR = os.path.join(os.path.dirname(__file__), "compliance")\n',
    }
    modules = sorted(files)
    readers = data_readers(["tests/test_plugins/fixtures/colon_fence.md"], modules, files.get)
    assert readers == ["tests/test_plugins/test_colon_fence.py"]
    assert data_readers(["tests/test_plugins/fixtures/tables.md"], modules, files.get) == [
        "tests/test_plugins/test_all.py",
        "tests/test_plugins/test_anchors.py",
        "tests/test_plugins/test_colon_fence.py",
    ]  # no module names it: those that reach its folder or glob it
    assert data_readers(["tests/fixtures/abbr.txt"], modules, files.get) == ["tests/test_plugins.py"]
    assert data_readers(["testsuite/E26.py"], modules, files.get) == ["testsuite/test_all.py"]
    assert data_readers(["tests/fixtures/unused.json"], modules, files.get) == []
    assert data_readers(["tests/compliance/syntax.json"], modules, files.get) == ["tests/test_compliance.py"]


def test_a_pull_request_from_a_branch_named_with_a_version_is_no_branch_copy():
    """Seen on jinja: "Merge pull request #1534 from pallets/drop-python-3.6" had matched "from ... 3.6"."""
    assert release_or_copy("Merge pull request #1534 from pallets/drop-python-3.6", diff("a.py", 60)) is None
