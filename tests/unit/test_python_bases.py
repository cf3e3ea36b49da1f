"""A wanted Python version gets the Debian base whose python3 is that version, or the nearest one
flagged approximate; bad versions and unknown suites are one-line user errors."""

import pytest
from conftest import run_evalkit

from evalkit.errors import EvalkitError
from evalkit.sandbox.python_bases import PYTHON_BASES, base_for_suite, choose_base, parse_python_version


@pytest.mark.parametrize(("wanted", "suite"), [("3.9", "bullseye"), ("3.11", "bookworm"), ("3.13", "trixie")])
def test_a_version_debian_ships_gets_its_suite_exactly(wanted, suite):
    choice = choose_base(wanted)
    assert (choice.base.suite, choice.approximate, choice.wanted) == (suite, False, wanted)
    assert choice.base.image == f"evalkit/base-{suite}:latest"


def test_a_patch_release_matches_on_major_and_minor():
    choice = choose_base("3.9.7")
    assert choice.base.suite == "bullseye" and not choice.approximate


@pytest.mark.parametrize(
    ("wanted", "suite"),
    [("3.5", "bullseye"), ("3.8", "bullseye"), ("3.10", "bookworm"), ("3.12", "trixie"), ("2.7", "bullseye")],
)
def test_a_missing_version_takes_the_oldest_newer_python_approximately(wanted, suite):
    choice = choose_base(wanted)
    assert (choice.base.suite, choice.approximate) == (suite, True)


def test_a_version_newer_than_every_base_takes_the_newest_approximately():
    choice = choose_base("3.14")
    assert (choice.base.suite, choice.approximate) == ("trixie", True)


def test_the_choice_does_not_depend_on_the_order_of_the_bases():
    reversed_bases = tuple(reversed(PYTHON_BASES))
    assert choose_base("3.10", reversed_bases).base.suite == "bookworm"
    assert choose_base("3.99", reversed_bases).base.suite == "trixie"


@pytest.mark.parametrize("text", ["", "3", "three.nine", "3.9.x", "py3.9", "3.9-dev"])
def test_a_version_that_is_not_major_minor_is_one_line(text):
    with pytest.raises(EvalkitError) as error:
        parse_python_version(text)
    assert "MAJOR.MINOR" in str(error.value) and "\n" not in str(error.value)


def test_only_bullseye_adds_distutils_and_every_base_can_pip_install():
    for base in PYTHON_BASES:
        assert {"python3-pip", "python3-venv"} <= set(base.extra_packages)
        assert ("python3-distutils" in base.extra_packages) == (base.suite == "bullseye")


def test_an_unknown_suite_names_the_known_ones():
    with pytest.raises(EvalkitError, match="bullseye, bookworm, trixie"):
        base_for_suite("buster")


def test_build_base_with_an_unknown_suite_is_one_line_exit_2():
    result = run_evalkit("sandbox", "build-base", "--suite", "buster", timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'buster'" in lines[0] and "bullseye, bookworm, trixie" in lines[0]
