"""SWE-bench's per-(repository, version) install specs, vendored from swebench 4.1.0: the values a
per-version environment is built from, checked against the tables as that release defines them."""

from __future__ import annotations

import re

import pytest

from evalkit.envs import EnvSpec, provenance, python_version, spec_for
from evalkit.envs.swebench_specs import vendored

SPHINX = "sphinx-doc/sphinx"
DJANGO = "django/django"


def test_sphinx_3_2_pins_what_old_sphinx_needs_to_install():
    spec = spec_for(SPHINX, "3.2")
    assert spec is not None
    assert spec.python == "3.9" and python_version(spec) == (3, 9)
    assert spec.pip_packages == ("tox==4.16.0", "tox-current-env==0.0.11", "Jinja2==3.0.3")
    assert spec.install == "python -m pip install -e .[test]"
    assert spec.test_cmd == "tox --current-env -epy39 -v --"
    edits = "\n".join(spec.repo_edits)
    for pin in (
        "Jinja2<3.0",
        "alabaster>=0.7,<0.7.12",
        "'markupsafe<=2.0.1'",
        "sphinxcontrib-applehelp<=1.0.7",
        "sphinxcontrib-htmlhelp<=2.0.4",
        "sphinxcontrib-serializinghtml<=1.1.9",
    ):
        assert pin in edits, pin
    assert spec.pre_install[0] == "sed -i 's/pytest/pytest -rA/' tox.ini"
    assert spec.apt_packages == ()


def test_sphinx_5_0_keeps_setup_py_as_is_and_7_2_adds_graphviz():
    five = spec_for(SPHINX, "5.0")
    seven = spec_for(SPHINX, "7.2")
    assert five is not None and seven is not None
    assert python_version(five) == python_version(seven) == (3, 9)
    assert five.pre_install == ("sed -i 's/pytest/pytest -rA/' tox.ini",)  # the 3.x-4.x setup.py pins stop at 4.4
    assert seven.apt_packages == ("graphviz",)
    assert seven.repo_edits == five.pre_install
    assert python_version(spec_for(SPHINX, "8.0")) == (3, 10)


def test_django_versions_carry_their_python_requirements_file_and_locale():
    old = spec_for(DJANGO, "3.0")
    new = spec_for(DJANGO, "4.1")
    assert old is not None and new is not None
    assert (python_version(old), python_version(new)) == ((3, 6), (3, 9))
    assert old.packages == new.packages == "requirements.txt"
    assert old.requirements_paths == ("tests/requirements/py3.txt",)
    assert old.test_cmd == "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
    assert old.env == {"LANG": "en_US.UTF-8", "LANGUAGE": "en_US:en", "LC_ALL": "en_US.UTF-8"}
    assert spec_for(DJANGO, "1.9").test_cmd == "./tests/runtests.py --verbosity 2"  # the one without --parallel
    assert spec_for(DJANGO, "2.2").apt_packages == ("locales",)


def test_original_keys_stay_readable():
    spec = spec_for(SPHINX, "7.2")
    assert spec.raw["pre_install"][-1] == "apt-get update && apt-get install -y graphviz"
    assert set(spec.raw) == {"python", "pip_packages", "install", "pre_install", "test_cmd"}


def test_every_vendored_key_has_a_typed_field():
    # a regenerated table with a key EnvSpec does not know fails here rather than dropping it
    for repo, versions in vendored().specs.items():
        for version in versions:
            spec = spec_for(repo, version)
            assert isinstance(spec, EnvSpec) and python_version(spec) >= (3, 5), (repo, version)


@pytest.mark.parametrize(
    ("repo", "version"),
    [(SPHINX, "9.9"), (SPHINX, "3"), ("nobody/nothing", "1.0"), (DJANGO, "")],
)
def test_unknown_repository_or_version_gives_none(repo, version):
    assert spec_for(repo, version) is None


def test_provenance_names_the_wheel_it_came_from():
    origin = provenance()
    assert (origin.package, origin.version) == ("swebench", "4.1.0")
    assert origin.module == "swebench/harness/constants/python.py"
    assert re.fullmatch(r"[0-9a-f]{64}", origin.wheel_sha256)
    assert origin.wheel == "swebench-4.1.0-py3-none-any.whl"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", origin.vendored_on)
