"""A two-commit repository of a given era, built with real git: its conftest implements
`pytest_collect_file(path, parent)`, a hook argument pytest 9 removed (pluggy refuses the conftest,
so nothing runs), and its second commit adds `calc.mul` with its tests. Authored on `year`'s dates,
it validates only with the pytest of its era."""

from __future__ import annotations

from pathlib import Path

from shop_repo import _git

PYPROJECT = '[project]\nname = "calc"\nversion = "1.0"\nrequires-python = ">=3.12"\n'
CONFTEST = (
    '"""Skip editor backups (a pytest 6-era hook: `path` is a py.path.local)."""\n\n\n'
    "def pytest_collect_file(path, parent):\n"
    "    if path.basename.endswith('~'):\n"
    "        return None\n"
)
CALC = 'def add(a, b):\n    """The sum of two numbers."""\n    return a + b\n'
MUL = '\n\ndef mul(a, b):\n    """The product of two numbers."""\n    return a * b\n'
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
MUL_TESTS = (
    "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_mul_by_zero():\n    assert mul(7, 0) == 0\n"
)
MESSAGE = (
    "Add multiplication to calc\n\n"
    "Callers had to loop over add() to multiply two numbers. Provide mul(a, b) next to add so\n"
    "the calculator covers products, including multiplying by zero.\n"
)


def _commit(repo: Path, files: dict[str, str], message: str, date: str) -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", "--all")
    _git(repo, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", message, "--date", date)


# Before Python 3.10 a module could take the ABCs from `collections` (3.10 removed the aliases)
OLD_STYLE_CALC = "from collections import Mapping\n\n\n" + CALC
# declaring no Python: what pre-PEP 621 repositories were (setup.py, no python_requires)
UNDECLARED = '[project]\nname = "calc"\nversion = "1.0"\n'


def build_era_repo(root: Path, year: int, pyproject: str = PYPROJECT, calc: str = CALC) -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "--quiet", "--initial-branch=main")
    start = {"pyproject.toml": pyproject, "conftest.py": CONFTEST, "calc/__init__.py": calc}
    _commit(root, {**start, "tests/test_calc.py": TESTS}, "Start the calculator", f"{year}-05-01T12:00:00+00:00")
    change = {"calc/__init__.py": calc + MUL, "tests/test_calc.py": MUL_TESTS}
    _commit(root, change, MESSAGE, f"{year}-05-02T12:00:00+00:00")
    return root
