from evalkit.verify.junit import TestStatus, parse_junit

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="6">
<testcase classname="tests.test_core" name="test_plain" file="tests/test_core.py" line="3" time="0.001"/>
<testcase classname="tests.test_core.TestLedger" name="test_in_class" file="tests/test_core.py" line="9"/>
<testcase classname="tests.test_core.TestLedger.TestNested" name="test_deep" file="tests/test_core.py"/>
<testcase classname="tests.test_core" name="test_param[a-1]" file="tests/test_core.py">
  <failure message="assert 1 == 2">boom</failure></testcase>
<testcase classname="tests.test_core" name="test_skipped" file="tests/test_core.py">
  <skipped type="pytest.skip" message="later">skip</skipped></testcase>
<testcase classname="tests.sub.test_io" name="test_teardown" file="tests/sub/test_io.py"/>
<testcase classname="tests.sub.test_io" name="test_teardown" file="tests/sub/test_io.py">
  <error message="teardown failed">err</error></testcase>
</testsuite></testsuites>"""


def test_node_ids_are_rebuilt_from_file_and_classname():
    outcomes = parse_junit(REPORT)
    assert set(outcomes) == {
        "tests/test_core.py::test_plain",
        "tests/test_core.py::TestLedger::test_in_class",
        "tests/test_core.py::TestLedger::TestNested::test_deep",
        "tests/test_core.py::test_param[a-1]",
        "tests/test_core.py::test_skipped",
        "tests/sub/test_io.py::test_teardown",
    }


def test_statuses_follow_the_result_elements():
    outcomes = parse_junit(REPORT)
    assert outcomes["tests/test_core.py::test_plain"] == TestStatus.PASSED
    assert outcomes["tests/test_core.py::test_param[a-1]"] == TestStatus.FAILED
    assert outcomes["tests/test_core.py::test_skipped"] == TestStatus.SKIPPED


def test_a_test_reported_twice_keeps_the_worse_status():
    assert parse_junit(REPORT)["tests/sub/test_io.py::test_teardown"] == TestStatus.ERROR


def test_single_testsuite_root_is_accepted():
    xml = '<testsuite name="pytest"><testcase classname="t.test_x" name="test_y" file="t/test_x.py"/></testsuite>'
    assert parse_junit(xml) == {"t/test_x.py::test_y": TestStatus.PASSED}


def test_an_inherited_test_is_named_by_the_module_that_runs_it():
    """xunit1's `file` is where the test function is *defined*: pyflakes' test_doctests.py runs
    test_imports.py's methods again in its own classes, and taking `file` for the module gave them
    test_imports.py's ids without a class (`test_imports.py::test_aliasedImport`), colliding with
    the real ones: 4 of its gathered candidates were rejected as failing with the change."""
    xml = (
        '<testsuite><testcase classname="pyflakes.test.test_imports.Test" name="test_aliased" '
        'file="pyflakes/test/test_imports.py"/>'
        '<testcase classname="pyflakes.test.test_doctests.TestImports" name="test_aliased" '
        'file="pyflakes/test/test_imports.py"><failure message="doctest"/></testcase>'
        '<testcase classname="tests.helpers.case.TestLedger" name="test_x" file="tests/base.py"/></testsuite>'
    )
    assert parse_junit(xml) == {
        "pyflakes/test/test_imports.py::Test::test_aliased": TestStatus.PASSED,
        "pyflakes/test/test_doctests.py::TestImports::test_aliased": TestStatus.FAILED,
        "tests/helpers/case.py::TestLedger::test_x": TestStatus.PASSED,
    }
