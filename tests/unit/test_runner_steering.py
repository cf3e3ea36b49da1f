"""What of a candidate is put back before the hidden tests, and how: whole files, or only the
runner's settings of a file that holds others too (no Docker)."""

import tomllib

import pytest

from evalkit.diffs import patched_text
from evalkit.verify.runner_steering import defines_hooks, plan_for, restore_ini_settings, restore_settings

PYPROJECT = """[project]
name = "calc"
version = "1.0"
dependencies = ["attrs"]

[project.scripts]
calc = "calc:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""


@pytest.mark.parametrize(
    ("path", "action", "steering"),
    [
        ("conftest.py", "whole", False),  # steering decided by its content (defines_hooks)
        ("pkg/tests/conftest.py", "whole", False),
        ("tests/test_new.py", "whole", False),
        ("pytest.ini", "whole", True),
        ("sub/.pytest.ini", "whole", True),
        ("sitecustomize.py", "whole", True),
        ("src/usercustomize.py", "whole", True),
        ("pkg/data/hook.pth", "whole", True),
        ("pytest.py", "whole", True),
        ("src/_pytest/runner.py", "whole", True),
        ("pluggy/__init__.py", "whole", True),
        ("evalkit_guard_abc.py", "whole", True),
        ("calc/__pycache__/__init__.cpython-311.pyc", "whole", True),
        ("calc/fast.cpython-311-x86_64-linux-gnu.so", "whole", True),
        ("pyproject.toml", "settings", True),
        ("setup.cfg", "settings", True),
        ("tox.ini", "settings", True),
        ("setup.py", "settings", True),
    ],
)
def test_runner_files_are_planned_for(path, action, steering):
    plan = plan_for(path)
    assert plan is not None and (plan.action, plan.steering) == (action, steering)


@pytest.mark.parametrize("path", ["calc/__init__.py", "src/calc/cli.py", "docs/testing.md", "README.md", "pkg/py.py"])
def test_ordinary_source_is_left_alone(path):
    assert plan_for(path) is None


def test_editing_pytests_own_modules_is_not_shadowing():
    """In pytest's own repository the task is to edit src/_pytest: only a new module shadows."""
    assert plan_for("src/_pytest/runner.py", new=False) is None


def test_a_file_of_the_reference_change_is_never_put_back_whole():
    assert plan_for("tests/helpers.py", reference_paths=["tests/helpers.py"]) is None
    assert plan_for("pyproject.toml", reference_paths=["pyproject.toml"]).action == "settings"


def test_conftest_with_only_fixtures_does_not_steer_but_hooks_do():
    assert defines_hooks("import pytest\n\n@pytest.fixture\ndef book():\n    return 1\n") is None
    assert defines_hooks("def pytest_collection_modifyitems(items):\n    items.clear()\n")
    assert defines_hooks("pytest_plugins = ['cheat']\n")
    assert defines_hooks("@pytest.hookimpl(hookwrapper=True)\ndef x(): ...\n")


def test_pyproject_runner_settings_go_back_and_the_rest_stays():
    after = PYPROJECT.replace('dependencies = ["attrs"]', 'dependencies = ["attrs", "rich"]').replace(
        'testpaths = ["tests"]', 'testpaths = ["tests"]\naddopts = "-p cheat"'
    ) + '\n[project.entry-points.pytest11]\ncheat = "calc.cheat"\n'
    text, parts = restore_settings("pyproject.toml", PYPROJECT, after)
    data = tomllib.loads(text)
    assert data["tool"]["pytest"] == {"ini_options": {"testpaths": ["tests"]}}
    assert "entry-points" not in data["project"]
    assert data["project"]["dependencies"] == ["attrs", "rich"]  # the agent's own change is kept
    assert parts == ["[tool.pytest]", "[project.entry-points.pytest11]"]


def test_pyproject_runner_settings_in_dotted_keys_are_found_too():
    after = PYPROJECT + '\n[tool]\npytest.ini_options.addopts = "-p cheat"\n'
    after = after.replace('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', "")
    text, _ = restore_settings("pyproject.toml", PYPROJECT, after)
    assert tomllib.loads(text)["tool"]["pytest"] == {"ini_options": {"testpaths": ["tests"]}}


def test_unchanged_runner_settings_need_nothing():
    after = PYPROJECT.replace('version = "1.0"', 'version = "1.1"')
    assert restore_settings("pyproject.toml", PYPROJECT, after) is None


def test_unreadable_pyproject_goes_back_whole():
    assert restore_settings("pyproject.toml", PYPROJECT, "[tool.pytest.ini_options\naddopts=") == (PYPROJECT, ["file"])


def test_setup_cfg_pytest_section_and_pytest11_go_back_console_scripts_stay():
    base = (
        "[metadata]\nname = x\n\n[options.entry_points]\nconsole_scripts =\n    x = x:main\n\n"
        "[tool:pytest]\ntestpaths = tests\n"
    )
    after = (
        "[metadata]\nname = x\n\n[options.entry_points]\nconsole_scripts =\n    x = x:main\n    y = x:other\n"
        "pytest11 =\n    cheat = x.cheat\n\n[tool:pytest]\ntestpaths = tests\naddopts = -p x.cheat\n"
    )
    text, parts = restore_ini_settings("setup.cfg", base, after)
    assert "addopts" not in text and "pytest11" not in text and "y = x:other" in text
    assert parts == ["[tool:pytest]", "pytest11 entry points"]


def test_a_duplicated_pytest_section_is_dropped():
    base = "[tool:pytest]\ntestpaths = tests\n"
    after = base + "\n[tool:pytest]\naddopts = -p cheat\n"
    text, _ = restore_ini_settings("setup.cfg", base, after)
    assert text.count("[tool:pytest]") == 1 and "addopts" not in text


def test_tox_pytest_section_goes_back_tox_settings_stay():
    tox = "[tox]\nenvlist = py3\n"
    text, parts = restore_settings("tox.ini", tox, tox + "\n[pytest]\naddopts = -p x\n")
    assert text.strip() == "[tox]\nenvlist = py3" and parts == ["[pytest]"]


def test_setup_py_that_starts_declaring_pytest11_goes_back_whole():
    base = "from setuptools import setup\nsetup(name='x')\n"
    after = "from setuptools import setup\nsetup(name='x', entry_points={'pytest11': ['c = x.c']})\n"
    assert restore_settings("setup.py", base, after) == (base, ["file"])
    assert restore_settings("setup.py", base, base.replace("'x'", "'y'")) is None


def test_patched_text_rebuilds_the_reference_version_of_a_file():
    diff = (
        "diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n"
        "@@ -2,2 +2,2 @@\n"
        ' name = "calc"\n-version = "1.0"\n+version = "2.0"\n'
    )
    assert patched_text(PYPROJECT, diff, "pyproject.toml") == PYPROJECT.replace('"1.0"', '"2.0"')
    assert patched_text(PYPROJECT, diff, "other.toml") == PYPROJECT
