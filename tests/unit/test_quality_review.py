"""What a reviewer sends back, on the small repo of test_quality.py: each kind of sloppiness costs
at least 0.15 of the score with its lines named, what the reference itself does is not charged,
and the honest variations of the same change (other names, comments, re-indenting into a block)
are not sloppiness."""

from __future__ import annotations

import pytest
from test_quality import AFTER_CORE, BASE, MEDIAN, score, small_repo
from toy import diff_of, write_files

from evalkit.scoring.quality import score_quality

MEDIAN_DOC = AFTER_CORE.replace(
    "def median(values):\n", 'def median(values):\n    """The middle value (the mean of the two middle ones)."""\n'
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return small_repo(tmp_path_factory.mktemp("repo"))


def charged(result) -> dict[str, float]:
    return result.charged


def lines_of(result, part: str) -> list[int]:
    return [f.line for f in result.findings if f.part == part]


def test_the_reference_scores_one_and_an_honest_rewrite_of_it_too(repo):
    assert score(repo, {"pkg/core.py": AFTER_CORE}).score == 1.0
    other = AFTER_CORE.replace("ordered", "items").replace("middle", "half")  # other names, same shape
    commented = AFTER_CORE.replace("    ordered = sorted", "    # sort first\n    ordered = sorted")
    for variant in (other, commented):
        assert score(repo, {"pkg/core.py": variant}).score == 1.0, variant


def test_a_dead_copy_of_a_function_is_a_duplicate_named_with_both_places(repo):
    copy = MEDIAN.replace("def median(", "def median_old(")
    result = score(repo, {"pkg/core.py": AFTER_CORE + copy})
    assert charged(result) == {"duplicates": 0.25}
    [finding] = [f for f in result.findings if f.part == "duplicates"]
    assert "`median_old` repeats `median`" in finding.what
    assert (AFTER_CORE + copy).splitlines()[finding.line - 1].startswith("def median_old(")


def test_a_short_function_that_looks_like_another_is_not_a_duplicate(repo):
    twin = "\n\ndef middle(values):\n    return values[len(values) // 2]\n"
    AFTER = AFTER_CORE + "\n\ndef halfway(values):\n    return values[len(values) // 2]\n"
    assert "duplicates" not in charged(score(repo, {"pkg/core.py": AFTER + twin}))


@pytest.mark.parametrize("marker", ["TODO: quick hack", "FIXME: wrong for some inputs", "XXX", "HACK: for now"])
def test_hack_markers_cost_each(repo, marker):
    result = score(repo, {"pkg/core.py": AFTER_CORE.replace("    ordered =", f"    # {marker}\n    ordered =")})
    assert charged(result) == {"markers": 0.15}


@pytest.mark.parametrize("comment", ["# noqa", "# noqa: E501", "# type: ignore", "# pragma: no cover", "# nosec"])
def test_a_comment_that_silences_a_checker_is_a_suppression(repo, comment):
    result = score(repo, {"pkg/core.py": AFTER_CORE.replace("sorted(values)", f"sorted(values)  {comment}")})
    assert charged(result) == {"suppressions": 0.15}


def test_a_suppression_the_base_already_had_is_not_the_change_s(repo):
    base, base_file, _ = repo
    core = BASE["pkg/core.py"].replace("import sys", "import sys  # noqa: F401")
    reference = diff_of(base, {"pkg/core.py": core})  # the task adds the noqa itself
    assert charged(score_quality(reference, reference, base_file)) == {}


def test_docstrings_the_reference_writes_are_missed_when_left_out(repo):
    base, base_file, _ = repo
    reference = diff_of(base, {"pkg/core.py": MEDIAN_DOC})
    assert score_quality(reference, reference, base_file).score == 1.0
    result = score_quality(diff_of(base, {"pkg/core.py": AFTER_CORE}), reference, base_file)
    assert charged(result) == {"docs": 0.15}
    assert "`median` has no docstring" in result.findings[0].what


def test_a_docstring_removed_from_a_function_that_had_one_is_lost(repo):
    base, base_file, _ = repo
    documented = BASE["pkg/core.py"].replace("def spread(values):\n", 'def spread(values):\n    """Max minus min."""\n')
    local = dict(BASE, **{"pkg/core.py": documented})
    root = base.parent / "documented"
    write_files(root, local)
    reference = diff_of(root, {"pkg/core.py": documented + MEDIAN})
    stripped = diff_of(root, {"pkg/core.py": documented.replace('    """Max minus min."""\n', "") + MEDIAN})
    reader = lambda path: (root / path).read_text() if (root / path).is_file() else None  # noqa: E731
    assert charged(score_quality(stripped, reference, reader)) == {"docs": 0.15}


def test_re_quoted_and_re_spaced_lines_are_churn_counted_by_line(repo):
    requoted = AFTER_CORE.replace(
        'return f"{mean(values)} +- {spread(values)}"', "return f'{mean(values)} +- {spread(values)}'"
    )
    respaced = requoted.replace("return max(values) - min(values)", "return max( values ) - min( values )")
    result = score(repo, {"pkg/core.py": respaced})
    assert charged(result) == {"churn": 0.06}
    assert lines_of(result, "churn") == [
        i for i, line in enumerate(respaced.splitlines(), 1) if "'{mean" in line or "max( values" in line
    ]


def test_re_wrapping_a_statement_is_churn_but_re_indenting_it_into_a_block_is_not(repo):
    rewrapped = AFTER_CORE.replace("    result = sum(\n        values,\n    )\n", "    result = sum(values,)\n")
    assert charged(score(repo, {"pkg/core.py": rewrapped})) == {"hygiene": 0.2}  # a whitespace-only hunk
    into_block = AFTER_CORE.replace(
        "    result = sum(\n        values,\n    )\n",
        "    if values:\n        result = sum(\n            values,\n        )\n",
    ).replace("    return result\n", "    else:\n        result = 0\n    return result\n", 1)
    assert "churn" not in charged(score(repo, {"pkg/core.py": into_block}))


def test_a_cosmetic_edit_of_a_file_the_task_leaves_alone_costs_scope_and_hygiene(repo):
    cli = BASE["pkg/cli.py"].replace("for a in argv", "for a in  argv")
    result = score(repo, {"pkg/core.py": AFTER_CORE, "pkg/cli.py": cli.replace("mean(", "mean (")})
    assert charged(result)["scope"] == 0.2 and "cosmetically" in next(
        f.what for f in result.findings if f.part == "scope"
    )
    assert charged(result)["hygiene"] == 0.2  # its one hunk changes only spacing


def test_two_statements_joined_on_a_long_line_are_a_defect_and_unreadable(repo):
    joined = AFTER_CORE.replace(
        "    ordered = sorted(values)\n    middle = len(ordered) // 2\n",
        "    ordered = sorted(values);" + " " * 150 + "middle = len(ordered) // 2\n",
    )
    result = score(repo, {"pkg/core.py": joined})
    assert charged(result) == {"lint": 0.15, "readability": 0.1}
    assert {f.what.split()[0] for f in result.findings} == {"E702", "E501"}


def test_what_the_reference_does_itself_is_not_charged_to_a_candidate_that_does_it_too(repo):
    base, base_file, _ = repo
    sloppy_reference = diff_of(
        base, {"pkg/core.py": AFTER_CORE.replace("    ordered =", "    # TODO: later\n    ordered =")}
    )
    result = score_quality(sloppy_reference, sloppy_reference, base_file)
    assert result.score == 1.0 and result.allowed == {"markers": 1}
    twice = AFTER_CORE.replace("    ordered =", "    # TODO: later\n    # FIXME: and this\n    ordered =")
    assert charged(score_quality(diff_of(base, {"pkg/core.py": twice}), sloppy_reference, base_file)) == {
        "markers": 0.15
    }


def test_costs_are_configurable_and_each_part_caps_what_it_charges(repo):
    marked = AFTER_CORE.replace(
        "    ordered =", "    # TODO: a\n    # TODO: b\n    # TODO: c\n    # TODO: d\n    ordered ="
    )
    assert charged(score(repo, {"pkg/core.py": marked})) == {"markers": 0.45}  # four, capped at three
    assert charged(score(repo, {"pkg/core.py": marked}, weights={"markers": 0.05})) == {"markers": 0.2}
    assert score(repo, {"pkg/core.py": marked}, weights={"markers": 0.0}).score == 1.0


def test_quality_costs_come_from_evalkit_toml_and_bad_ones_name_the_part(tmp_path):
    from evalkit.errors import EvalkitError
    from evalkit.scoring.attempt_scores import load_settings

    settings = load_settings({"scoring": {"quality": {"markers": 0.3}}}, tmp_path / "evalkit.toml")
    assert settings.quality == {"markers": 0.3}
    with pytest.raises(EvalkitError, match=r"evalkit.toml: \[scoring\].*unknown quality parts \['style'\]"):
        load_settings({"scoring": {"quality": {"style": 1.0}}}, tmp_path / "evalkit.toml")
