"""The shape of a change a reviewer sends back, on the small repo of test_quality.py: code no run
reaches, a function pasted with a statement changed, a function the task never needed touched,
a print by another name, a parameter nothing reads. Each costs at least 0.15 with its line named;
the honest neighbours of each (a loop on `while True`, a short look-alike, the reference's own
functions, a command's own output) cost nothing."""

from __future__ import annotations

import pytest
from test_quality import AFTER_CORE, CORE, MEDIAN, score, small_repo

GAP = 0.15


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return small_repo(tmp_path_factory.mktemp("repo"))


def lines_named(result, part: str, text: str) -> list[str]:
    return [text.splitlines()[f.line - 1].strip() for f in result.findings if f.part == part]


def test_statements_after_a_return_are_unreachable(repo):
    after = AFTER_CORE.replace(
        "    return (ordered[middle - 1] + ordered[middle]) / 2\n",
        "    return (ordered[middle - 1] + ordered[middle]) / 2\n    ordered = None\n",
    )
    result = score(repo, {"pkg/core.py": after})
    assert result.score <= 1 - GAP
    assert "ordered = None" in lines_named(result, "lint", after)


@pytest.mark.parametrize("test", ["False", "0", "True"])
def test_a_branch_on_a_constant_is_dead_or_debugging_code(repo, test):
    after = AFTER_CORE.replace("    ordered = sorted", f"    if {test}:\n        print(values)\n    ordered = sorted")
    result = score(repo, {"pkg/core.py": after})
    assert result.score <= 1 - GAP
    assert f"if {test}:" in lines_named(result, "lint", after)


def test_a_loop_on_while_true_is_not_a_constant_branch(repo):
    loop = "\n\ndef first(values):\n    while True:\n        return values[0]\n"
    result = score(repo, {"pkg/core.py": AFTER_CORE + loop})
    assert not [f for f in result.findings if "constant" in f.what]


def test_a_copy_with_one_statement_changed_nearly_repeats_the_original(repo):
    near = MEDIAN.replace("def median(", "def median_v2(").replace(") / 2\n", ") / 2.0\n")
    result = score(repo, {"pkg/core.py": AFTER_CORE + near})
    assert result.charged.get("duplicates") == 0.25
    [finding] = [f for f in result.findings if f.part == "duplicates"]
    assert "`median_v2` nearly repeats `median`" in finding.what


def test_two_different_functions_of_the_same_size_are_not_near_copies(repo):
    other = (
        "\n\ndef mode(values):\n"
        "    counts = {}\n"
        "    for value in values:\n"
        "        counts[value] = counts.get(value, 0) + 1\n"
        "    best = max(counts.values())\n"
        "    return [v for v, c in counts.items() if c == best][0]\n"
    )
    assert "duplicates" not in score(repo, {"pkg/core.py": AFTER_CORE + other}).charged


def test_a_function_the_task_does_not_touch_renamed_inside_is_out_of_scope(repo):
    after = AFTER_CORE.replace(
        "    result = sum(\n        values,\n    )\n    return result\n",
        "    res = sum(\n        values,\n    )\n    return res\n",
    )
    assert after != AFTER_CORE
    result = score(repo, {"pkg/core.py": after})
    assert result.charged.get("scope") == 0.15
    [finding] = [f for f in result.findings if f.part == "scope"]
    assert "`total`, which the task does not touch, changed" in finding.what
    assert after.splitlines()[finding.line - 1].startswith("def total(")


def test_the_reference_s_own_functions_and_a_new_helper_are_in_scope(repo):
    helper = AFTER_CORE.replace("    ordered = sorted(values)\n", "    ordered = _sorted(values)\n") + (
        "\n\ndef _sorted(values):\n    return sorted(values)\n"
    )
    assert "scope" not in score(repo, {"pkg/core.py": helper}).charged


def test_a_write_to_stderr_in_a_function_that_never_printed_is_a_debug_print(repo):
    after = AFTER_CORE.replace(
        "    ordered = sorted", '    import sys\n    sys.stderr.write("here\\n")\n    ordered = sorted'
    )
    result = score(repo, {"pkg/core.py": after})
    assert result.charged.get("hygiene") == 0.2
    assert result.debug_prints == 1


def test_a_command_that_writes_to_stdout_already_is_not_debugging(repo):
    cli = 'import sys\n\n\ndef main(argv):\n    sys.stdout.write("mean\\n")\n    sys.stdout.write(str(argv) + "\\n")\n'
    result = score(repo, {"pkg/core.py": AFTER_CORE, "pkg/cli.py": cli})
    assert result.debug_prints == 0


def test_a_parameter_nothing_reads_is_lint(repo):
    after = AFTER_CORE.replace("def median(values):", "def median(values, debug=False):")
    result = score(repo, {"pkg/core.py": after})
    assert result.score <= 1 - GAP
    assert any(f.what.startswith("ARG001") for f in result.findings)
    assert CORE in after  # only the new function changed
