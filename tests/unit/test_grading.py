from evalkit.verify.grading import grade
from evalkit.verify.junit import TestStatus

F2P = ["tests/test_a.py::test_new"]
P2P = ["tests/test_a.py::test_old", "tests/test_b.py::TestX::test_kept"]


def outcomes(**overrides):
    statuses = {t: TestStatus.PASSED for t in F2P + P2P}
    statuses.update(overrides)
    return statuses


def test_all_listed_tests_passing_resolves():
    verdict = grade(F2P, P2P, outcomes())
    assert verdict.resolved
    assert verdict.fail_to_pass.fraction == 1.0 and verdict.pass_to_pass.fraction == 1.0


def test_skipped_fail_to_pass_test_does_not_resolve():
    verdict = grade(F2P, P2P, outcomes(**{F2P[0]: TestStatus.SKIPPED}))
    assert not verdict.resolved
    assert verdict.fail_to_pass.failed == F2P
    assert verdict.statuses[F2P[0]] == TestStatus.SKIPPED


def test_missing_listed_test_counts_as_failed():
    report = outcomes()
    del report[P2P[1]]
    verdict = grade(F2P, P2P, report)
    assert not verdict.resolved
    assert verdict.statuses[P2P[1]] == TestStatus.MISSING
    assert verdict.pass_to_pass.fraction == 0.5


def test_errored_pass_to_pass_test_does_not_resolve():
    assert not grade(F2P, P2P, outcomes(**{P2P[0]: TestStatus.ERROR})).resolved


def test_a_run_without_report_resolves_nothing():
    verdict = grade(F2P, P2P, None)
    assert not verdict.resolved
    assert all(s == TestStatus.MISSING for s in verdict.statuses.values())


def test_unlisted_failures_do_not_matter():
    report = outcomes()
    report["tests/test_c.py::test_unrelated"] = TestStatus.FAILED
    assert grade(F2P, P2P, report).resolved


def test_no_fail_to_pass_tests_never_resolves():
    assert not grade([], P2P, outcomes()).resolved


def test_ids_swebench_cut_at_a_space_match_the_tests_they_begin():
    """sphinx-doc__sphinx-8265 lists `tests/test_pycode_ast.py::test_unparse[a` for pytest's
    `test_unparse[a + b-a + b]` (SWE-bench's parser splits its log at whitespace)."""
    ran = {
        "tests/test_pycode_ast.py::test_unparse[a + b-a + b]": TestStatus.PASSED,
        "tests/test_pycode_ast.py::test_unparse[a and b-a and b]": TestStatus.PASSED,
        "tests/test_pycode_ast.py::test_unparse[(1, 2, 3)-(1, 2, 3)]": TestStatus.PASSED,
        "tests/test_pycode_ast.py::test_unparse_None": TestStatus.PASSED,
    }
    cut = ["tests/test_pycode_ast.py::test_unparse[a", "tests/test_pycode_ast.py::test_unparse[(1,"]
    assert grade(cut, ["tests/test_pycode_ast.py::test_unparse_None"], ran).resolved
    one_fails = {**ran, "tests/test_pycode_ast.py::test_unparse[a and b-a and b]": TestStatus.FAILED}
    verdict = grade(cut, [], one_fails)
    assert not verdict.resolved and verdict.statuses[cut[0]] == TestStatus.FAILED
    assert grade(["tests/test_pycode_ast.py::test_unparse[b"], [], ran).statuses[
        "tests/test_pycode_ast.py::test_unparse[b"
    ] == TestStatus.MISSING
