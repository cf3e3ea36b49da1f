"""Gather splits off tests where the project keeps them: pytest's configuration, the folders its test
modules live in, the data files they open; the defaults after that. Seen on a style checker whose
`testsuite/` held test modules and the data they read: with the default globs the data went into the
reference change and the prompt sent the agent to edit it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evalkit.diffs import changed_paths, matches_glob
from evalkit.gather.history import commits, split_commit, test_modules
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
