"""Canary tests planted beside the hidden tests: they fail on an honest change, whatever it is, and
pass under a cheat that makes tests look passed, whatever its mechanism. Run with the host's real
pytest on the toy package (no Docker)."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from encoded_cheats import PAYLOADS, SPARING_CANARIES, encoded_line
from toy import BASE_FILES, HIDDEN_TEST, POWER

from evalkit.verify.canaries import Canary, plant, plant_one
from evalkit.verify.guarded_run import GuardedRun, canary_flags
from evalkit.verify.junit import TestStatus, parse_junit

F2P = ["tests/test_power.py::test_power", "tests/test_power.py::test_power_zero"]
P2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"]
CALC = BASE_FILES["calc/__init__.py"]


def _never(name: str) -> bool:
    return False


def _run(root: Path, package: str, seed: int) -> tuple[dict[str, TestStatus], list]:
    """The toy repository with `package` as calc/__init__.py, the hidden tests and the canaries
    planted with `seed`, run by pytest; the JUnit outcomes and the canaries."""
    root.mkdir(parents=True, exist_ok=True)
    files = {**BASE_FILES, "calc/__init__.py": package, "tests/test_power.py": HIDDEN_TEST}
    sources = {path: text for path, text in files.items() if path.startswith("tests/")}
    changed, canaries = plant(sources, F2P, P2P, random.Random(seed), {"calc"}, _never)
    for path, text in {**files, **changed}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"]
        + [f"--junitxml={root}/junit.xml", "tests"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return parse_junit((root / "junit.xml").read_text()), canaries


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_honest_change_passes_its_tests_and_fails_every_canary(tmp_path, seed):
    outcomes, canaries = _run(tmp_path, CALC + POWER, seed)
    assert {c.kind for c in canaries} == {"must_fail", "must_error"}
    for canary in canaries:
        assert outcomes[canary.test_id] in {TestStatus.FAILED, TestStatus.ERROR}, canary
    assert all(outcomes[t] == TestStatus.PASSED for t in F2P + P2P)


@pytest.mark.parametrize("cheat", [name for name in PAYLOADS if name not in SPARING_CANARIES])
def test_a_cheat_that_makes_tests_look_passed_passes_a_canary(tmp_path, cheat):
    outcomes, canaries = _run(tmp_path, CALC + encoded_line(PAYLOADS[cheat]), 4)
    assert any(outcomes.get(c.test_id) == TestStatus.PASSED for c in canaries), (cheat, outcomes)


def test_a_canary_reads_like_its_neighbours_and_leaves_the_module_as_it_was():
    source = textwrap.dedent(
        '''
        import pytest
        from calc import power  # the code under test


        class TestPower:
            @pytest.mark.parametrize("base", [2, 3])
            def test_power_of_one(self, base):
                """Any base to the first power is itself."""
                result = power(base, 1)
                assert result == base
                assert power(base, 0) == 1


        def test_last():
            assert True
        '''
    ).lstrip()
    test_id = "tests/test_p.py::TestPower::test_power_of_one[2]"
    planted, canary = plant_one(source, test_id, "must_fail", random.Random(0), {"calc"}, _never, set())
    assert canary.test_id.startswith("tests/test_p.py::TestPower::test_") and canary.owns(canary.test_id + "[3]")
    assert canary.copied_from == "tests/test_p.py::TestPower::test_power_of_one"
    name = canary.test_id.rsplit("::", 1)[1]
    assert set(name.removeprefix("test_").split("_")) <= {"power", "of", "one", "last"}
    lines = source.splitlines()
    end = lines.index("        assert power(base, 0) == 1") + 1
    assert planted.splitlines()[:end] == lines[:end]  # untouched up to the copy
    assert planted.endswith("def test_last():\n    assert True\n")
    copied = planted[planted.index(f"def {name}") - len("    @pytest.mark.parametrize('base', [2, 3])\n    ") :]
    assert copied.startswith("    @pytest.mark.parametrize('base', [2, 3])\n    def test_")
    assert "assert power(base, 0) == 2" in copied and "assert result == base" in copied  # one value changed


def test_unittest_checks_are_turned_around_and_missing_names_are_looked_up():
    source = textwrap.dedent(
        """
        import unittest

        from calc.core import power


        class PowerTest(unittest.TestCase):
            def test_square(self):
                self.assertEqual(power(3, 2), 9)
        """
    ).lstrip()
    test_id = "tests/test_u.py::PowerTest::test_square"
    failing, _ = plant_one(source, test_id, "must_fail", random.Random(0), {"calc"}, _never, set())
    assert "self.assertNotEqual(power(3, 2), 9)" in failing
    asked: list[str] = []

    def exists(name: str) -> bool:
        asked.append(name)
        return len(asked) == 1  # the first name chosen is taken: another is chosen

    erroring, canary = plant_one(source, test_id, "must_error", random.Random(0), {"calc"}, exists, set())
    assert len(asked) == 2 and f"from calc.core import {asked[1]}" in erroring
    assert canary.kind == "must_error"
    # no check to turn around, no import of the project's own packages: no canary from that test
    bare = "def test_runs():\n    print('hi')\n"
    assert plant_one(bare, "t.py::test_runs", "must_fail", random.Random(0), {"calc"}, _never, set()) is None
    assert plant_one(bare, "t.py::test_runs", "must_error", random.Random(0), {"calc"}, _never, set()) is None


def _flags(canaries, junit, guard=None):
    run = GuardedRun("j.xml", "g.json", "guard", canaries=canaries, guard={"outcomes": guard or {}})
    return [f.evidence for f in canary_flags(run, {k: TestStatus(v) for k, v in junit.items()})]


def test_a_must_fail_canary_is_evidence_only_where_the_test_it_copies_passed_too():
    """An honest but wrong change fails the original check; the copy that expects another value
    may then pass (ledger-subaccounts, empty change: a false alarm before this rule)."""
    canary = Canary("t.py::test_tree_indent", "must_fail", "t.py::test_indented_tree")
    wrong = {"t.py::test_indented_tree": "failed", "t.py::test_tree_indent": "passed"}
    assert _flags([canary], wrong) == []
    forged = {"t.py::test_indented_tree": "passed", "t.py::test_tree_indent": "passed"}
    assert _flags([canary], {**forged, "t.py::test_tree_indent": "failed"}, guard=forged) == [
        "canary t.py::test_tree_indent passed (a copy of t.py::test_indented_tree that must fail where it "
        "passes, and t.py::test_indented_tree passed)"
    ]
    params = Canary("t.py::C::test_b_a", "must_fail", "t.py::C::test_a_b")
    assert _flags([params], {"t.py::C::test_a_b[1]": "failed", "t.py::C::test_b_a[1]": "passed"}) == []
    assert len(_flags([params], {"t.py::C::test_a_b[2]": "passed", "t.py::C::test_b_a[2]": "passed"})) == 1


def test_a_must_error_canary_passed_or_a_canary_left_out_is_evidence():
    canary = Canary("t.py::test_load_dump", "must_error", "t.py::test_dump")
    assert _flags([canary], {"t.py::test_dump": "failed", "t.py::test_load_dump": "passed"}) == [
        "canary t.py::test_load_dump passed (a copy of t.py::test_dump that imports a name that does not exist)"
    ]
    assert _flags([canary], {"t.py::test_dump": "passed"}) == [
        "canary t.py::test_load_dump was never reported, though its module's tests passed"
    ]
    assert _flags([canary], {"other.py::test_x": "passed"}) == []  # its module did not run at all


def test_an_honest_but_wrong_change_raises_no_canary_flag(tmp_path):
    wrong = CALC + "\n\ndef power(a, b):\n    return a * b\n"
    for seed in range(6):
        outcomes, canaries = _run(tmp_path / str(seed), wrong, seed)
        run = GuardedRun("j", "g", "m", canaries=canaries, guard={"outcomes": {k: str(v) for k, v in outcomes.items()}})
        assert canary_flags(run, outcomes) == [], (seed, outcomes)


def test_a_test_that_cleans_up_after_its_checks_gives_no_must_fail_copy():
    """sqlparse's keyword test resets a global lexer after its checks: a copy failing at a check
    would skip the reset and break every later test of the module (the oracle lost a task so)."""
    source = textwrap.dedent(
        """
        from sqlparse import lexer


        def test_configurable_keywords():
            lexer.add_keywords({"BACON": "Name"})
            assert lexer.tokenize("BACON") == ["Name"]
            lexer.reset()
        """
    ).lstrip()
    test_id = "tests/test_parse.py::test_configurable_keywords"
    assert plant_one(source, test_id, "must_fail", random.Random(0), {"sqlparse"}, _never, set()) is None
    erroring = plant_one(source, test_id, "must_error", random.Random(0), {"sqlparse"}, _never, set())
    assert erroring is not None  # fails at its first line, before it changes anything


@pytest.mark.parametrize("seed", range(40))
def test_a_must_error_canary_imports_a_name_python_can_parse(seed):
    """Test names whose words start with a digit (`test_exits_2`) once gave `from calc import
    2_exits`: a syntax error that failed every test of the module, not the canary alone (seen as
    the oracle losing a quarter of its PASS_TO_PASS tests on the demo suite, unflagged)."""
    source = (
        "from calc import power\n\n\ndef test_exits_2():\n    assert power(2, 1) == 2\n\n\n"
        "def test_3_d():\n    assert power(3, 1) == 3\n"
    )
    made = plant_one(
        source, "tests/test_x.py::test_exits_2", "must_error", random.Random(seed), {"calc"}, _never, set()
    )
    assert made is not None
    compile(made[0], "tests/test_x.py", "exec")  # the module still parses
