"""The environment of a gathered commit's era: its date picks the pytest and the PyPI date, the
repository's pins win, `requires-python` / classifiers pick the Python base; a base run that cannot
import what the change adds means the tests are new."""

from pathlib import Path

import pytest

from evalkit.gather.environment import (
    detect_environment,
    needs_recipe,
    older_python_only,
    package_modules,
    recipe_files,
    write_recipe,
)
from evalkit.gather.era import CURRENT, era_of, python_base_for, runner_requirement
from evalkit.gather.new_tests import tests_are_new
from evalkit.gather.validate import classify_tests
from evalkit.sandbox.docker.images import recipe_python_base
from evalkit.verify.junit import TestStatus


@pytest.mark.parametrize(
    ("date", "era", "hold"),
    [
        ("2016-05-01T10:00:00+02:00", "pytest<4", "2018-11-13T00:00:00Z"),  # '[pytest]' in setup.cfg still read
        ("2019-05-01T10:00:00+02:00", "python<3.10", "2021-10-04T00:00:00Z"),
        ("2021-10-03T23:00:00+00:00", "python<3.10", "2021-10-04T00:00:00Z"),
        ("2021-10-05T00:00:00+00:00", "pytest<8", "2024-01-27T00:00:00Z"),
        ("2024-01-26T23:59:59+00:00", "pytest<8", "2024-01-27T00:00:00Z"),
        ("2024-01-27T01:00:00+02:00", "pytest<8", "2024-01-27T00:00:00Z"),  # 23:00 UTC the day before
        ("2024-03-01T12:00:00+00:00", "pytest<9", "2025-11-05T00:00:00Z"),
        ("2026-06-01T12:00:00+00:00", "current", None),
        ("not a date", "current", None),
    ],
)
def test_the_commit_date_picks_the_era(date, era, hold):
    assert (era_of(date).name, era_of(date).pypi_as_of) == (era, hold)


def test_the_repository_pins_win_over_the_era():
    old = era_of("2022-03-01T00:00:00Z")
    assert runner_requirement(old, None) == "pytest<8"
    assert runner_requirement(old, "pytest>=6.2") == "pytest>=6.2,<8"  # its floor kept beside the era's cap
    assert runner_requirement(old, "pytest>=6,<7; python_version>'3'") == "pytest>=6,<7"  # its own cap wins
    assert runner_requirement(old, "pytest==7.1.2") == "pytest==7.1.2"
    assert runner_requirement(CURRENT, None) == "pytest" and runner_requirement(CURRENT, "pytest>=8") == "pytest>=8"


@pytest.mark.parametrize(
    ("requires", "classifiers", "suite"),
    [
        (">=3.7", [], "bullseye"),  # the oldest base it allows
        (">=3.10", [], "bookworm"),
        (">=3.12", [], "trixie"),
        (">=3.7", ["Programming Language :: Python :: 3.10", "Programming Language :: Python :: 3.11"], "bookworm"),
        (None, ["Programming Language :: Python :: 3", "Programming Language :: Python :: 3.13"], "trixie"),
        ("<3", [], None),  # no base fits: the default base
        (None, ["Programming Language :: Python :: 2.7", "Programming Language :: Python :: 3.5"], "bullseye"),
        (None, ["Programming Language :: Python :: 3"], None),  # declares no version
        ("not a specifier", [], "bullseye"),
    ],
)
def test_requires_python_and_classifiers_pick_the_oldest_fitting_base(requires, classifiers, suite):
    base = python_base_for(requires, classifiers)
    assert (base.suite if base else None) == suite


def test_python_facts_come_from_pyproject_setup_cfg_or_a_literal_in_setup_py():
    pyproject = '[project]\nrequires-python = ">=3.10"\nclassifiers = ["Programming Language :: Python :: 3.11"]\n'
    env = detect_environment({"pyproject.toml": pyproject}.get, lambda path: False)
    assert env.requires_python == ">=3.10" and env.classifiers == ["Programming Language :: Python :: 3.11"]
    cfg = "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.9\n[options]\npython_requires = >=3.8\n"
    env = detect_environment({"setup.cfg": cfg}.get, lambda path: False)
    assert env.requires_python == ">=3.8" and env.classifiers == ["Programming Language :: Python :: 3.9"]
    env = detect_environment({"setup.py": "setup(python_requires='>=3.6', tests_require=['pytest<5'])"}.get, bool)
    assert env.requires_python == ">=3.6"
    pinned = detect_environment({"requirements-test.txt": "pytest>=6\nsix\n"}.get, lambda path: False)
    assert pinned.runner_pin == "pytest>=6" and pinned.requirements == ["six"]


def test_an_old_commit_gets_a_recipe_with_the_eras_pytest_held_pypi_and_its_python_base(tmp_path: Path):
    env = detect_environment({"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.12"\n'}.get, bool)
    old = era_of("2022-06-01T00:00:00Z")
    files = recipe_files(env, "lib", old, "pip-26.0-py3-none-any.whl")
    assert files["requirements.txt"].splitlines()[-1] == "pytest<8"
    assert "ARG BASE_IMAGE=evalkit/base-trixie:latest" in files["Dockerfile"]
    script = files["install.sh"]
    assert "hold=2024-01-27T00:00:00Z" in script and '--ignore-installed "pytest<8"' in script
    assert "PIP_UPLOADED_PRIOR_TO=$hold" in script
    ca = tmp_path / "ca.crt"
    ca.write_text("ca")
    image = write_recipe(env, "lib", tmp_path / "suite", ca, old)
    recipe = (tmp_path / "suite" / "task" / image).resolve()
    assert recipe_python_base(recipe).suite == "trixie"
    assert (recipe / "install.sh").read_text() == script
    # a CA bundle the user named is the recipe's own; the pip wheel joins at build time (images.with_host_files)
    assert (recipe / "ca-bundle.crt").read_text() == "ca" and not list(recipe.glob("*.whl"))
    newer = write_recipe(env, "lib", tmp_path / "suite", ca, era_of("2024-06-01T00:00:00Z"))
    assert newer != image  # another era, another image; one image per era, not per commit
    assert write_recipe(env, "lib", tmp_path / "suite", ca, era_of("2022-01-01T00:00:00Z")) == image


def test_only_a_plain_repository_of_todays_era_keeps_the_stock_image():
    plain = detect_environment({}.get, lambda path: False)
    assert not needs_recipe(plain, CURRENT)
    assert needs_recipe(plain, era_of("2022-01-01T00:00:00Z"))
    declared = detect_environment({"pyproject.toml": '[project]\nrequires-python = ">=3.12"\n'}.get, bool)
    assert needs_recipe(declared, CURRENT)
    files = recipe_files(plain, "x", CURRENT, "pip.whl")
    assert "hold=today" in files["install.sh"] and "ARG BASE_IMAGE=evalkit/base:latest" in files["Dockerfile"]


ADDS = """\
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -1,2 +1,8 @@
+class UnknownCode(KeyError):
+    pass
+def apply_code(cart, code):
+    return cart
+RATE: float = 0.2
--- /dev/null
+++ b/src/shop/codes.py
@@ -0,0 +1 @@
+CODES = {}
--- a/shop/__init__.py
+++ b/shop/__init__.py
@@ -1 +1,2 @@
+from .cart import apply_code as apply
"""


@pytest.mark.parametrize(
    ("log", "new"),
    [
        ("E   ImportError: cannot import name 'apply_code' from 'shop.cart' (/workspace/shop/cart.py)", True),
        ("ImportError: cannot import name 'UnknownCode' from 'shop'\nImportError: cannot import name 'RATE'", True),
        ("E   ModuleNotFoundError: No module named 'shop.codes'", True),
        ("AttributeError: module 'shop' has no attribute 'apply'", True),
        ("E   ModuleNotFoundError: No module named 'yaml'", False),  # a missing dependency
        ("ImportError: cannot import name 'apply_code' ...\nModuleNotFoundError: No module named 'yaml'", False),
        ("PluginValidationError: unknown hook 'pytest_collect_file' in plugin conftest: path", False),
        ("ImportError: cannot import name 'total' from 'shop.cart'", False),  # not something the change adds
    ],
)
def test_a_base_that_cannot_import_what_the_change_adds_means_the_tests_are_new(log, new):
    assert tests_are_new(log, ADDS) is new


def test_rejection_reasons_carry_the_first_error_line():
    P, F = TestStatus.PASSED, TestStatus.FAILED
    broken = classify_tests({"t::a": P}, {"t::a": P, "t::b": F}, set(), 50, "x", first_error="AssertionError: 2 != 3")
    assert broken.reason == "tests fail even with the change: t::b: AssertionError: 2 != 3"
    silent = classify_tests({}, {}, set(), 50, "x", first_error="E   TypeError: bad hook")
    assert silent.reason.endswith("collection error or missing dependency: E   TypeError: bad hook")
    assert "\n" not in silent.reason


def test_a_repository_declaring_no_python_gets_its_eras():
    """Toolz of 2019 imports `collections.Mapping` (gone in 3.10) and pins no pytest: it must not get
    the default base's 3.11, where an old pytest also fails to import (`KeyError: '__spec__'`)."""
    plain = detect_environment(lambda name: "toolz\n" if name == "requirements.txt" else None, lambda _: False)
    old = recipe_files(plain, "toolz", era_of("2019-05-01T00:00:00Z"), "pip.whl")
    assert "ARG BASE_IMAGE=evalkit/base-bullseye:latest" in old["Dockerfile"]
    assert "hold=2021-10-04T00:00:00Z" in old["install.sh"] and "pytest<7" in old["requirements.txt"]
    newer = recipe_files(plain, "toolz", era_of("2023-05-01T00:00:00Z"), "pip.whl")
    assert "ARG BASE_IMAGE=evalkit/base:latest" in newer["Dockerfile"]
    declared = detect_environment(
        lambda name: '[project]\nrequires-python = ">=3.10"\n' if name == "pyproject.toml" else None,
        lambda _: False,
    )
    own = recipe_files(declared, "toolz", era_of("2019-05-01T00:00:00Z"), "pip.whl")
    assert "ARG BASE_IMAGE=evalkit/base-bookworm:latest" in own["Dockerfile"]  # what it declares wins


def test_code_for_an_older_python_is_named_before_any_image_is_built():
    """sqlparse of 2009 is Python 2, toolz of 2016 passes `f(x for x in y, )` (refused since 3.7):
    their candidates failed in the sandbox with a SyntaxError (5 of the 34 of a gather, 7 of the
    first 9); no base can run them, so they are left out at the environment stage."""
    files = {
        "sqlparse/engine.py": "def run(stream):\n    print 'running'\n",
        "sqlparse/lexer.py": "try:\n    pass\nexcept ValueError, e:\n    pass\n",
        "toolz/functoolz.py": "names = tuple(\n    f.__name__ for f in funcs,\n)\n",
        "sqlparse/modern.py": "type Alias = list[int]\n",  # 3.12 syntax: the host may not parse it, not Python 2
        "README": "print 'not python'\n",
        "ext/django2jinja/convert.py": "print 'an example script, not the package'\n",
        "sqlparse/__init__.py": "",
        "toolz/__init__.py": "",
    }
    said = older_python_only(files.get, ["README", "sqlparse/modern.py", "sqlparse/engine.py"])
    assert said is not None and said.startswith("code for an older Python (sqlparse/engine.py, line 2")
    assert older_python_only(files.get, ["sqlparse/lexer.py"]) is not None
    assert "Generator expression must be parenthesized" in older_python_only(files.get, ["toolz/functoolz.py"])
    assert older_python_only(files.get, ["sqlparse/modern.py", "README", "absent.py"]) is None
    assert older_python_only(files.get, ["ext/django2jinja/convert.py"]) is None  # outside any package


def test_the_older_python_screen_reads_the_modules_beside_the_edited_ones():
    """toolz 2016 (#314): the change edits dicttoolz.py, but importing toolz runs functoolz.py,
    whose Python 3.6 generator argument no base parses: the candidate failed in a sandbox."""
    files = {
        "toolz/__init__.py": "from .functoolz import *\n",
        "toolz/dicttoolz.py": "def merge(*dicts):\n    return {}\n",
        "toolz/functoolz.py": "names = tuple(\n    f.__name__ for f in funcs,\n)\n",
        "toolz/tests/test_dicttoolz.py": "print 'a test module is not imported with the package'\n",
        "docs/conf.py": "print 'not a package'\n",
        "tests/__init__.py": "",
        "tests/test_py2.py": "print 'a test package is collected module by module, not imported whole'\n",
    }

    def listing(folder: str) -> list[str]:  # as `git ls-tree --name-only`: files and folders
        prefix = f"{folder}/" if folder else ""
        return sorted({prefix + p[len(prefix) :].split("/")[0] for p in files if p.startswith(prefix)})

    paths = package_modules(["toolz/dicttoolz.py", "docs/conf.py"], listing)
    assert paths[:2] == ["toolz/dicttoolz.py", "docs/conf.py"]
    assert set(paths[2:]) == {"toolz/__init__.py", "toolz/functoolz.py"}
    assert older_python_only(files.get, ["toolz/dicttoolz.py"]) is None
    said = older_python_only(files.get, paths)
    assert said is not None and "toolz/functoolz.py" in said
    # #314 adds a package `tlz` that imports toolz: the top-level packages are read too
    new_package = package_modules(["tlz/__init__.py", "setup.py"], listing)
    assert "toolz/functoolz.py" in new_package and not {"docs/conf.py", "tests/test_py2.py"} & set(new_package)
    assert "toolz/functoolz.py" in older_python_only(files.get, new_package)


def test_a_pin_older_than_the_guard_runs_on_gives_way_to_the_eras_line():
    """pytest 2.7 has no `pytest.hookimpl`: evalkit's guard cannot load, so no test could run."""
    old = era_of("2016-05-01T00:00:00Z")
    assert runner_requirement(old, "pytest==2.7.2") == "pytest<4"
    assert runner_requirement(old, "pytest<3") == "pytest<4"
    assert runner_requirement(old, "pytest>=2.9,<3.11") == "pytest>=2.9,<3.11"  # allows 3.10: kept
