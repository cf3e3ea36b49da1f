"""Gather splits off tests where the project keeps them: pytest's configuration, the folders its test
modules live in, the data files they open; the defaults after that. Seen on a style checker whose
`testsuite/` held test modules and the data they read: with the default globs the data went into the
reference change and the prompt sent the agent to edit it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evalkit.diffs import changed_paths, matches_glob
from evalkit.gather.history import Candidate, SizeLimits, commits, screen, split_commit, test_modules
from evalkit.gather.layout import TreeReader, read_layout


def _is_test(path: str, globs: tuple[str, ...]) -> bool:
    return any(matches_glob(path, g) for g in globs)


def _tree(files: dict[str, str]):
    return sorted(files), files.get


def test_a_testsuite_folder_with_its_data_is_test_and_the_checker_is_not():
    files = {
        "checker.py": "def check(path): ...\n",
        "setup.py": "from setuptools import setup\nsetup(name='checker')\n",
        "testsuite/__init__.py": "",
        "testsuite/test_api.py": "import os\nROOT = os.path.dirname(__file__)\n",
        "testsuite/support.py": "def run(name): ...\n",
        "testsuite/E10.py": "#: E101\nif True:\n\tpass\n",
        "testsuite/W19.py": "#: W191\n",
        "docs/intro.rst": "checker\n",
    }
    layout = read_layout(*_tree(files))
    tests = [p for p in sorted(files) if _is_test(p, layout.globs)]
    assert tests == [f"testsuite/{name}" for name in ("E10.py", "W19.py", "__init__.py", "support.py", "test_api.py")]
    assert "testsuite/** (the test modules' folder)" in layout.describe()


def test_pytest_testpaths_and_python_files_are_read_from_the_first_config_that_has_them():
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "",
        "checks/check_core.py": "def test_x(): pass\n",
        "checks/fixtures/input.txt": "data\n",
        "tox.ini": "[tox]\nenvlist = py3\n\n[pytest]\ntestpaths = checks\npython_files = check_*.py\n",
        "setup.cfg": "[tool:pytest]\ntestpaths = elsewhere\n",
    }
    layout = read_layout(*_tree(files))
    assert _is_test("checks/fixtures/input.txt", layout.globs) and _is_test("checks/check_core.py", layout.globs)
    assert not _is_test("pkg/core.py", layout.globs)
    assert "checks/** (tox.ini testpaths)" in layout.describe() and "elsewhere" not in layout.describe()


def test_a_testpath_that_is_the_package_itself_only_narrows_where_test_modules_are():
    files = {
        "lib/__init__.py": "",
        "lib/core.py": "",
        "lib/checks/test_core.py": "",
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["lib"]\n',
    }
    layout = read_layout(*_tree(files))
    assert not _is_test("lib/core.py", layout.globs) and _is_test("lib/checks/test_core.py", layout.globs)


def test_a_test_module_beside_many_source_modules_leaves_the_folder_source():
    files = {f"pkg/m{i}.py": "" for i in range(5)} | {"pkg/__init__.py": "", "pkg/test_m0.py": ""}
    layout = read_layout(*_tree(files))
    assert _is_test("pkg/test_m0.py", layout.globs) and not _is_test("pkg/m1.py", layout.globs)


def test_data_the_tests_open_by_a_relative_path_is_test_but_never_source_or_the_top_level():
    files = {
        "app/__init__.py": "",
        "app/data/default.json": "{}",
        "samples/case1.txt": "x",
        "pyproject.toml": "",
        "tests/test_app.py": (
            "import json\n"
            "CASE = open('samples/case1.txt').read()\n"
            "DEFAULT = 'app/data/default.json'\n"
            "CONF = 'pyproject.toml'\n"
        ),
    }
    layout = read_layout(*_tree(files))
    assert _is_test("samples/case1.txt", layout.globs)
    assert not _is_test("app/data/default.json", layout.globs) and not _is_test("pyproject.toml", layout.globs)
    assert "samples/case1.txt (opened by the tests)" in layout.describe()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_a_commit_is_split_by_the_layout_read_at_that_commit(tmp_path):
    repo = tmp_path / "checker"
    (repo / "testsuite").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "checker.py").write_text("def check():\n    return []\n")
    (repo / "testsuite" / "test_checker.py").write_text("def test_ok():\n    pass\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "checker.py").write_text("def check():\n    return ['E101']\n")
    (repo / "testsuite" / "E10.py").write_text("#: E101\nif True:\n\tpass\n")
    (repo / "testsuite" / "test_checker.py").write_text("def test_ok():\n    assert True\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Report E101")
    commit = commits(repo)[0]
    layout = TreeReader(repo).layout(commit.sha)
    patch, test_patch = split_commit(repo, commit, layout.globs)
    assert changed_paths(patch) == ["checker.py"]
    assert sorted(changed_paths(test_patch)) == ["testsuite/E10.py", "testsuite/test_checker.py"]


def test_a_test_module_the_commit_deletes_is_no_neighbour_to_run(tmp_path):
    """Seen on pyflakes (#684): the test part deletes `test_checker.py`, which was run beside the
    touched modules for PASS_TO_PASS, and pytest said 'file or directory not found'."""
    from evalkit.gather.commit_tree import neighbour_modules

    repo = tmp_path / "r"
    (repo / "tests").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    for name in ("test_a.py", "test_b.py", "test_old.py"):
        (repo / "tests" / name).write_text("def test_x():\n    pass\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "tests" / "test_old.py").unlink()
    (repo / "tests" / "test_a.py").write_text("def test_x():\n    assert True\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "drop the old tests")
    commit = commits(repo)[0]
    _, test_patch = split_commit(repo, commit, ("tests/**",))
    touched = test_modules(test_patch)
    assert touched == ["tests/test_a.py"]
    assert neighbour_modules(repo, commit.parent, touched, 5, leave_out=["tests/test_old.py"]) == ["tests/test_b.py"]


CHECKER_E501 = "def check(text):\n    codes = []\n" + "".join(f"    codes += []  # rule {i}\n" for i in range(8))
CHECKER_E501 += "    if any(len(line) > 20 for line in text.splitlines()):\n        codes.append('E501')\n"
CHECKER_E501 += "    return codes\n"
DATA_TESTS = '''import os

import pytest

from checker import check

HERE = os.path.dirname(__file__)
CASES = sorted(name for name in os.listdir(os.path.join(HERE, "cases")) if name.endswith(".txt"))


@pytest.mark.parametrize("name", CASES)
def test_case(name):
    with open(os.path.join(HERE, "cases", name)) as handle:
        expected, _, text = handle.read().partition("\\n")
    assert check(text) == expected.split()
'''


def test_a_commit_whose_tests_are_data_runs_the_modules_that_read_them(tmp_path):
    """Seen on a style checker: a new check comes with its data (`testsuite/cases/E501.txt`) read by
    a parametrised module the commit leaves alone; 127 such commits had been rejected as 'the test
    part changes no test module'. The modules to run are the data's readers at the commit; data
    no test module reads still makes no candidate."""
    repo = tmp_path / "checker"
    (repo / "testsuite" / "cases").mkdir(parents=True)
    (repo / "tests" / "data").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "checker.py").write_text("def check(text):\n    return []\n")
    (repo / "testsuite" / "test_cases.py").write_text(DATA_TESTS)
    (repo / "testsuite" / "test_api.py").write_text("def test_api():\n    pass\n")
    (repo / "testsuite" / "cases" / "clean.txt").write_text("\nshort\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "checker.py").write_text(CHECKER_E501)
    (repo / "testsuite" / "cases" / "E501.txt").write_text("E501\nthis line is far too long to pass\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Report long lines")
    (repo / "checker.py").write_text(CHECKER_E501.replace("> 20", "> 30"))
    (repo / "tests" / "data" / "limits.json").write_text('{"max": 30}\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Allow longer lines")
    trees, limits = TreeReader(repo), SizeLimits(min_lines=2)
    found = []
    for commit in commits(repo):
        layout = trees.layout(commit.sha)
        patch, test_patch = split_commit(repo, commit, layout.globs)
        at = trees.at_commit(commit.sha, layout.globs, layout.python_files)
        found.append(screen(commit, patch, test_patch, limits, layout.python_files, at=at))
    unread, data_task = found
    assert unread == "the test part changes no test module, and no test module reads the data it changes"
    assert isinstance(data_task, Candidate) and data_task.test_files == ("testsuite/test_cases.py",)
    assert screen(commits(repo)[1], patch, test_patch, limits) == "the test part changes no test module"  # no tree
