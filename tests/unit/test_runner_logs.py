"""Outcomes read from unittest's and Django's verbose logs, keyed as SWE-bench keys them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from evalkit.verify.junit import TestStatus
from evalkit.verify.runners.unittest_logs import align_ids, parse_django_log, parse_unittest_log, short_id

SAMPLE_TESTS = textwrap.dedent(
    '''
    import sys
    import unittest


    class Arithmetic(unittest.TestCase):
        def test_adds(self):
            self.assertEqual(1 + 1, 2)

        def test_fails(self):
            self.assertEqual(1 + 1, 3)

        def test_errors(self):
            raise RuntimeError("boom")

        @unittest.skip("not today")
        def test_skipped(self):
            pass

        def test_documented(self):
            """Adding zero changes nothing."""
            self.assertEqual(5 + 0, 5)

        def test_chatty(self):
            sys.stderr.write("some output the test printed\\n")

        @unittest.expectedFailure
        def test_known_bug(self):
            self.assertEqual(1, 2)
    '''
)


def _real_unittest_log(tmp_path) -> str:
    (tmp_path / "sample_tests.py").write_text(SAMPLE_TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "sample_tests"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
    )  # fmt: skip
    return done.stdout


def test_a_real_unittest_log_gives_every_test_its_status(tmp_path):
    outcomes = parse_unittest_log(_real_unittest_log(tmp_path))
    assert outcomes == {
        "test_adds (sample_tests.Arithmetic)": TestStatus.PASSED,
        "test_chatty (sample_tests.Arithmetic)": TestStatus.PASSED,  # its own output split `... ok`
        "test_documented (sample_tests.Arithmetic)": TestStatus.PASSED,  # docstring on the status line
        "test_errors (sample_tests.Arithmetic)": TestStatus.ERROR,
        "test_fails (sample_tests.Arithmetic)": TestStatus.FAILED,
        "test_known_bug (sample_tests.Arithmetic)": TestStatus.PASSED,
        "test_skipped (sample_tests.Arithmetic)": TestStatus.SKIPPED,
    }


def test_python_3_10_ids_parse_to_the_same_keys():
    log = "test_adds (sample_tests.Arithmetic) ... ok\ntest_fails (sample_tests.Arithmetic) ... FAIL\n"
    assert parse_unittest_log(log) == {
        "test_adds (sample_tests.Arithmetic)": TestStatus.PASSED,
        "test_fails (sample_tests.Arithmetic)": TestStatus.FAILED,
    }


def test_a_log_without_tests_has_no_outcomes():
    crashed = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'docutils'\n"
    assert parse_unittest_log(crashed) == {}
    assert parse_django_log(crashed) == {}


def test_a_test_that_passed_then_failed_its_teardown_counts_as_failed():
    log = "test_a (m.C) ... ok\n\n=====\nERROR: test_a (m.C.test_a)\n-----\nTraceback\n"
    assert parse_unittest_log(log) == {"test_a (m.C)": TestStatus.ERROR}


def test_listed_ids_find_outcomes_in_either_python_form():
    assert short_id("test_x (pkg.mod.Class.test_x)") == "test_x (pkg.mod.Class)"
    assert short_id("test_x (pkg.mod.Class)") == "test_x (pkg.mod.Class)"
    assert short_id("Adding zero changes nothing.") == "Adding zero changes nothing."
    long_form = {"test_x (m.C.test_x)": TestStatus.PASSED}
    assert align_ids(long_form, ["test_x (m.C)"])["test_x (m.C)"] == TestStatus.PASSED
    short_form = {"test_x (m.C)": TestStatus.FAILED}
    assert align_ids(short_form, ["test_x (m.C.test_x)"])["test_x (m.C.test_x)"] == TestStatus.FAILED
    assert "test_y (m.C)" not in align_ids(short_form, ["test_y (m.C)"])


# Django 3.1's `./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1` output, its
# quirks included: a docstring as the id, output between `...` and `ok`, the 7188 migration line.
DJANGO_LOG = textwrap.dedent(
    """\
    Testing against Django installed in '/testbed/django'
    Importing application admin_changelist
    Importing application auth_tests
    Skipping setup of unused database(s): other.
    Operations to perform:
      Synchronize unmigrated apps: admin_changelist, auth, auth_tests, contenttypes, messages, sessions
      Apply all migrations: admin, sites
    Synchronizing apps without migrations:
      Creating tables...
        Creating table django_content_type
        Running deferred SQL...
    Running migrations:
      Applying admin.0001_initial... OK
      Applying admin.0002_logentry_remove_auto_add... OK
      Applying sites.0001_initial... OK
      Applying sites.0002_alter_domain_unique...test_no_migrations (migrations.test_loader.LoaderTests) ... ok
    System check identified no issues (0 silenced).
    test_custom_user_pk_not_named_id (admin_changelist.tests.GetAdminLogTests) ... ok
    {% get_admin_log %} works without specifying a user. ... ok
    test_html_autocomplete_attributes (auth_tests.test_forms.AdminPasswordChangeFormTest) ... ok
    test_missing_passwords (auth_tests.test_forms.AdminPasswordChangeFormTest) ... Internal Server Error: /admin/
    Traceback (most recent call last):
      File "/testbed/django/core/handlers/exception.py", line 47, in inner
    ok
    test_username_field_max_length_defaults_to_254 (auth_tests.test_forms.AuthenticationFormTest) ... FAIL
    test_username_field_max_length_matches_user_model (auth_tests.test_forms.AuthenticationFormTest) ... ERROR
    test_no_sqlite (auth_tests.test_forms.SQLiteTests) ... skipped 'Database has feature(s) supports_json'
    test_version (admin_scripts.tests.CommandTypes)
    --version is equivalent to version ... ok

    ======================================================================
    ERROR: test_username_field_max_length_matches_user_model (auth_tests.test_forms.AuthenticationFormTest)
    ----------------------------------------------------------------------
    Traceback (most recent call last):
    AttributeError: 'NoneType' object has no attribute 'max_length'

    ======================================================================
    FAIL: test_username_field_max_length_defaults_to_254 (auth_tests.test_forms.AuthenticationFormTest)
    ----------------------------------------------------------------------
    AssertionError: 150 != 254

    ----------------------------------------------------------------------
    Ran 9 tests in 0.162s

    FAILED (failures=1, errors=1, skipped=1)
    Destroying test database for alias 'default' ('file:memorydb_default?mode=memory&cache=shared')...
    """
)


def test_django_log_is_keyed_as_swebench_keys_it():
    outcomes = parse_django_log(DJANGO_LOG)
    forms = "auth_tests.test_forms"
    expected = {
        "test_no_migrations (migrations.test_loader.LoaderTests)": TestStatus.PASSED,
        "test_custom_user_pk_not_named_id (admin_changelist.tests.GetAdminLogTests)": TestStatus.PASSED,
        "{% get_admin_log %} works without specifying a user.": TestStatus.PASSED,
        f"test_html_autocomplete_attributes ({forms}.AdminPasswordChangeFormTest)": TestStatus.PASSED,
        f"test_missing_passwords ({forms}.AdminPasswordChangeFormTest)": TestStatus.PASSED,
        f"test_username_field_max_length_defaults_to_254 ({forms}.AuthenticationFormTest)": TestStatus.FAILED,
        f"test_username_field_max_length_matches_user_model ({forms}.AuthenticationFormTest)": TestStatus.ERROR,
        f"test_no_sqlite ({forms}.SQLiteTests)": TestStatus.SKIPPED,
        "--version is equivalent to version": TestStatus.PASSED,
    }
    assert {k: outcomes[k] for k in expected} == expected
    # SWE-bench also keeps the bare method names of the FAIL:/ERROR: sections; they match no listed id
    assert set(outcomes) - set(expected) == {
        "test_username_field_max_length_defaults_to_254",
        "test_username_field_max_length_matches_user_model",
    }


def test_django_on_python_3_11_matches_ids_written_either_way():
    log = "test_str (model_enums.tests.ChoicesTests.test_str) ... ok\n"
    outcomes = align_ids(parse_django_log(log), ["test_str (model_enums.tests.ChoicesTests)"])
    assert outcomes["test_str (model_enums.tests.ChoicesTests)"] == TestStatus.PASSED
